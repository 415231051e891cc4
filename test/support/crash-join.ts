/**
 * The parallel-join workload for the crash-injection suite: the orchestrator `hub` asks, in
 * one response, two agents (`alpha`, `beta`) and a child swarm (`crew`) at once, and answers
 * with text joining their three results. Each agent calls its own tool, then answers in text;
 * `crew` calls its own tool, then completes. The three tools record a side effect through
 * their idempotency key (see `fileEffects` of the W1 support).
 *
 * As in W1, the model is a pure function of the request, so a restarted process gets exactly
 * the answers the crashed one would have got, whatever order the parallel branches ran in.
 */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { AgentDefinition, Model, ModelRequest, ModelResponse, SwarmDefinition } from '../../src/index.js';
import { defineSwarm } from '../../src/define/swarm.js';
import { defineAgent } from '../../src/define/agent.js';
import { handoff } from '../../src/define/handoff.js';
import { scriptedModel } from '../../src/models/scripted.js';
import { tool } from '../../src/define/tool.js';
import { stepLabel } from './crash-w1.js';
import { toolMessages } from './script.js';

/** The child-process fixture running this workload. */
export const JOIN_FIXTURE = fileURLToPath(new URL('../fixtures/crash-join.ts', import.meta.url));

/** Where the three tools record their side effects (`fileEffects` / `memoryEffects` of W1 fit). */
export interface JoinEffects {
  /** Called once per execution of a tool, with its idempotency key, before it answers. */
  execute(who: string, key: string): void | Promise<void>;
}

/** The child swarm's id in a run of `parentId`: turn 1, third call of the response. */
export const joinChildIdOf = (parentId: string) => `${parentId}:t1:2`;

/** The child swarm's result. */
export const CREW_RESULT = 'crew: the gear is packed.';
/** The hub's result: the three branches' answers joined in call order. */
export const JOIN_RESULT = 'Joined: alpha: route mapped. | beta: permits filed. | crew: the gear is packed.';

/** The definitions, with every tool recording through `effects`. */
export function joinDefinitions(effects: JoinEffects) {
  const recording = (name: string, answer: string) =>
    tool({
      name,
      description: `${name} lookup`,
      parameters: z.object({ what: z.string() }),
      execute: async ({ what }, ctx) => {
        await effects.execute(name, ctx.idempotencyKey);
        return `${answer} (${what})`;
      },
    });
  const alpha = defineAgent({ id: 'alpha', description: 'Maps routes', instructions: 'Map the route.', tools: [recording('alpha_work', 'mapped')] });
  const beta = defineAgent({ id: 'beta', description: 'Files permits', instructions: 'File permits.', tools: [recording('beta_work', 'filed')] });
  const crew: SwarmDefinition<z.ZodString, z.ZodString> = defineSwarm({
    id: 'crew',
    description: 'Packs the gear',
    instructions: 'Pack the gear, then complete.',
    tools: [recording('crew_work', 'packed')],
  });
  const hub: SwarmDefinition<z.ZodString, z.ZodString> = defineSwarm({
    id: 'hub',
    instructions: 'Ask alpha, beta and the crew at once, then join their answers.',
    handoffs: [handoff.toAgent(alpha), handoff.toAgent(beta), handoff.toSwarm(crew)],
  });
  const agents: AgentDefinition[] = [alpha, beta];
  return { hub, crew, swarms: [hub, crew], agents };
}

const callOf = (id: string, name: string, args: unknown): ModelResponse => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});

/** The answer the join workload's model gives to a request: a pure function of it. */
export function joinRespond(req: ModelRequest): ModelResponse {
  const seen = toolMessages(req);
  switch (req.agentId) {
    case 'alpha':
      return seen.length === 0 ? callOf('t_alpha', 'alpha_work', { what: 'ridge' }) : { text: 'alpha: route mapped.' };
    case 'beta':
      return seen.length === 0 ? callOf('t_beta', 'beta_work', { what: 'park' }) : { text: 'beta: permits filed.' };
    case 'crew':
      return seen.length === 0 ? callOf('c0', 'crew_work', { what: 'tents' }) : callOf('c1', 'complete', { result: CREW_RESULT });
    case 'hub':
      if (seen.length === 0) {
        return {
          toolCalls: [
            { id: 'h_a', name: 'handoff_to_alpha', arguments: JSON.stringify({ request: 'map the ridge route' }) },
            { id: 'h_b', name: 'handoff_to_beta', arguments: JSON.stringify({ request: 'file the park permits' }) },
            { id: 'h_c', name: 'handoff_to_crew', arguments: JSON.stringify({ request: 'pack tents for two' }) },
          ],
        };
      }
      return { text: `Joined: ${seen.map((m) => m.content).join(' | ')}` };
    default:
      throw new Error(`unexpected speaker "${req.agentId}"`);
  }
}

/** The model calls a full run makes (the three branches interleave, so as a set). */
export const JOIN_CALLS = ['hub#0', 'alpha#0', 'alpha#1', 'beta#0', 'beta#1', 'crew#0', 'crew#1', 'hub#3'];

/** The join workload's model. */
export function joinModel(): Model {
  return scriptedModel(async (req) => joinRespond(req), 'join');
}

export { stepLabel };
