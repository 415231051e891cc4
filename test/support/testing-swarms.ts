/**
 * Swarms for the tests of `xswarm/testing`: one with every feature a path is derived from (a
 * gated tool, guardrails on each step, a budget, an agent, an inline agent, a child swarm and a
 * remote agent), and the deliberately broken ones `describeSwarm` must catch: a tool that forgets
 * its idempotency key, and a guardrail that throws.
 */
import { z } from 'zod';
import { defineAgent, defineSwarm, handoff, tool, type Guardrail, type ModelResponse } from '../../src/index.js';

const lookup = tool({
  name: 'lookup',
  description: 'Looks an order up',
  parameters: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => ({ orderId, state: 'shipped' }),
});
const refund = tool({
  name: 'refund',
  description: 'Refunds an order',
  parameters: z.object({ orderId: z.string(), amount: z.number().positive() }),
  execute: ({ orderId }) => `refunded ${orderId}`,
  needsApproval: ({ amount }) => amount > 100,
});
const clerk = defineAgent({ id: 'clerk', description: 'Checks orders', instructions: 'Look orders up.', tools: [lookup] });
const child = defineSwarm({
  id: 'shipping',
  description: 'Ships replacement parts',
  input: z.object({ orderId: z.string(), parts: z.array(z.string()).min(1) }),
  result: z.object({ tracking: z.string() }),
  instructions: 'Ship the parts.',
});
const polite: Guardrail<ModelResponse> = { name: 'polite', check: (r) => !/stupid/i.test(r.text ?? '') || 'impolite' };

/** A support desk with every feature paths are derived from. */
export const desk = defineSwarm({
  id: 'desk',
  input: z.string().min(1),
  result: z.object({ answer: z.string(), refunded: z.boolean() }),
  instructions: 'Resolve the ticket.',
  tools: [refund],
  handoffs: [
    handoff.toAgent(clerk),
    handoff.inline({ id: 'reviewer', description: 'Reviews a reply', instructions: 'Review it.' }),
    handoff.toSwarm(child),
    handoff.toRemoteAgent('http://127.0.0.1:9/.well-known/agent-card.json'),
  ],
  guardrails: {
    input: [{ name: 'not-empty', check: (text: string) => text.trim() !== '' || 'empty ticket' }],
    response: [polite],
    toolCall: [{ name: 'no-huge-refunds', check: (c) => Number(c.arguments.amount ?? 0) < 10_000 || 'too large', onReject: 'block' }],
    output: [{ name: 'answered', check: (r: { answer: string }) => r.answer !== '' || 'no answer', onReject: 'pause' }],
  },
  budget: { modelCalls: 4 },
  maxTurns: 6,
});

/** A charge that is made once per call when the tool passes its idempotency key, and again on every re-run when it does not. */
const charge = tool({ name: 'charge', description: 'Charges a card', parameters: z.object({ cents: z.number().int().positive() }), execute: () => 'charged' });

/** A checkout swarm with one tool (its effect is given by the test's override). */
export const checkout = defineSwarm({ id: 'checkout', instructions: 'Charge the customer.', tools: [charge], maxTurns: 3 });

/** A swarm whose response guardrail throws (a bug in the guardrail, not a rejection). */
export const throwingGuardrail = defineSwarm({
  id: 'fragile',
  instructions: 'Answer.',
  tools: [lookup],
  guardrails: {
    response: [
      {
        name: 'fragile-check',
        check: (r) => {
          if (r.toolCalls?.some((c) => c.name === 'complete')) throw new TypeError("Cannot read properties of undefined (reading 'length')");
          return true;
        },
      },
    ],
  },
  maxTurns: 3,
});

/** A swarm whose tool answers differently on every run (a new random number). */
export const dice = defineSwarm({
  id: 'dice',
  instructions: 'Roll the die.',
  tools: [tool({ name: 'roll', description: 'Rolls a die', parameters: z.object({}), execute: () => 1 + Math.floor(Math.random() * 1e9) })],
  maxTurns: 3,
});
