/**
 * Swarms whose tools need approval, shared by the approval tests of each surface: a refunds
 * swarm (every `refund` call gated; `ran` records the orders refunded) and a deploy swarm (every
 * `ship` call gated) with the script that ships two builds and then reports what it read.
 */
import { z } from 'zod';
import { defineSwarm, type ModelRequest, tool } from '../../src/index.js';
import { calls } from './script.js';

/** A fresh refunds swarm (`refunds`) and its gated `refund` tool; `ran` lists the orders refunded. */
export function refundSwarm() {
  const ran: string[] = [];
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order',
    parameters: z.object({ order: z.string() }),
    execute: ({ order }) => (ran.push(order), `refunded ${order}`),
    needsApproval: true,
  });
  const child = defineSwarm({ id: 'refunds', description: 'Does refunds', instructions: 'Refund.', tools: [refund] });
  return { ran, refund, child };
}

const ship = tool({
  name: 'ship',
  description: 'Ships a build',
  parameters: z.object({ build: z.string() }),
  execute: ({ build }) => `shipped ${build}`,
  needsApproval: true,
});

/** A swarm whose every `ship` call needs approval. */
export const deploy = defineSwarm({ id: 'deploy', instructions: 'Ship.', tools: [ship] });

/** `deploy`'s script for a queue model: ship builds a and b in one round, then answer with every result read. */
export function deployScript() {
  return [
    calls(['ship', { build: 'a' }, 's1'], ['ship', { build: 'b' }, 's2']),
    (req: ModelRequest) => ({
      text: req.messages
        .filter((m) => m.role === 'tool')
        .map((m) => m.content)
        .join(' | '),
    }),
  ];
}
