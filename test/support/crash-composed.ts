/**
 * The two-level composed workload for the crash-injection suite: a parent swarm `trip` hands
 * off to its agent `scout`, then to the child swarm `booking`, and answers with text that
 * includes the child's result. `booking` hands off to its agent `clerk`, calls its own tool
 * `reserve`, then completes with a typed result. `scout`, `clerk` and `reserve` each record a
 * side effect through their idempotency key (see `fileEffects` of the W1 support).
 *
 * As in W1, the model is a pure function of the request, so a restarted process gets exactly
 * the answers the crashed one would have got.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { AgentDefinition, Commit, Model, ModelRequest, ModelResponse, SwarmDefinition } from '../../src/index.js';
import { defineSwarm } from '../../src/define/swarm.js';
import { defineAgent } from '../../src/define/agent.js';
import { handoff } from '../../src/define/handoff.js';
import { scriptedModel } from '../../src/models/scripted.js';
import { tool } from '../../src/define/tool.js';
import { stepLabel } from './crash-w1.js';
import { toolMessages } from './script.js';

/** The child-process fixture running this workload. */
export const COMPOSED_FIXTURE = fileURLToPath(new URL('../fixtures/crash-composed.ts', import.meta.url));

/** Who records a side effect: the two agents' tools and the child swarm's own tool. */
export type ComposedActor = 'scout' | 'clerk' | 'reserve';

export interface ComposedEffects {
  /** Called once per execution of a tool, with its idempotency key, before it answers. */
  execute(who: ComposedActor, key: string): void | Promise<void>;
}

/**
 * Side effects in files, as in W1: `file` gets each idempotency key once (the tool skips a key
 * already there); `rawFile`, when given, gets every execution.
 */
export function composedFileEffects(file: string, rawFile?: string): ComposedEffects {
  return {
    execute(_who, key) {
      if (rawFile) appendFileSync(rawFile, `${key}\n`);
      const seen = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
      if (!seen.includes(key)) appendFileSync(file, `${key}\n`);
    },
  };
}

/** Side effects in memory: executions per key. */
export function composedMemoryEffects(): ComposedEffects & { runs: Map<string, number> } {
  const runs = new Map<string, number>();
  return { runs, execute: (_who, key) => void runs.set(key, (runs.get(key) ?? 0) + 1) };
}

export const BOOKING_RESULT = { confirmation: 'BK-42', seats: 2 };
export const TRIP_RESULT = `Trip planned: trail scouted, booking ${JSON.stringify(BOOKING_RESULT)}.`;
/** The id of the child swarm of a parent run (turn 2 of the parent, first call). */
export const childIdOf = (parentId: string) => `${parentId}:t2:0`;

/** The definitions, with every tool recording through `effects`. */
export function composedDefinitions(effects: ComposedEffects) {
  const recording = (who: ComposedActor, name: string, answer: string) =>
    tool({
      name,
      description: `${who} lookup`,
      parameters: z.object({ what: z.string() }),
      execute: async ({ what }, ctx) => {
        await effects.execute(who, ctx.idempotencyKey);
        return `${answer} (${what})`;
      },
    });
  const scout = defineAgent({
    id: 'scout',
    description: 'Scouts trails',
    instructions: 'Scout the trail.',
    tools: [recording('scout', 'scout_trail', 'trail is clear')],
  });
  const clerk = defineAgent({
    id: 'clerk',
    description: 'Checks availability',
    instructions: 'Check availability.',
    tools: [recording('clerk', 'check_availability', 'two seats free')],
  });
  const booking: SwarmDefinition<z.ZodString, z.ZodObject<{ confirmation: z.ZodString; seats: z.ZodNumber }>> = defineSwarm({
    id: 'booking',
    description: 'Books the trip',
    result: z.object({ confirmation: z.string(), seats: z.number() }),
    instructions: 'Book: ask the clerk, reserve, then complete.',
    handoffs: [handoff.toAgent(clerk)],
    tools: [recording('reserve', 'reserve', 'reserved')],
  });
  const trip: SwarmDefinition<z.ZodString, z.ZodString> = defineSwarm({
    id: 'trip',
    instructions: 'Plan the trip: scout, then book, then answer.',
    handoffs: [handoff.toAgent(scout), handoff.toSwarm(booking)],
  });
  const agents: AgentDefinition[] = [scout, clerk];
  return { trip, booking, swarms: [trip, booking], agents };
}

const callOf = (id: string, name: string, args: unknown): ModelResponse => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});

/** The answer the composed workload's model gives to a request: a pure function of it. */
export function composedRespond(req: ModelRequest): ModelResponse {
  const seen = toolMessages(req);
  switch (req.agentId) {
    case 'scout':
      return seen.length === 0 ? callOf('t_scout', 'scout_trail', { what: 'ridge trail' }) : { text: 'scout: the trail is clear.' };
    case 'clerk':
      return seen.length === 0 ? callOf('t_clerk', 'check_availability', { what: 'Saturday' }) : { text: 'clerk: two seats free.' };
    case 'booking':
      if (seen.length === 0) return callOf('b0', 'handoff_to_clerk', { request: 'seats on Saturday?' });
      if (seen.length === 1) return callOf('b1', 'reserve', { what: 'two seats' });
      return callOf('b2', 'complete', { result: BOOKING_RESULT });
    case 'trip':
      if (seen.length === 0) return callOf('h0', 'handoff_to_scout', { request: 'scout the ridge trail' });
      if (seen.length === 1) return callOf('h1', 'handoff_to_booking', { request: 'book two seats for Saturday' });
      return { text: `Trip planned: trail scouted, booking ${seen.at(-1)!.content}.` };
    default:
      throw new Error(`unexpected speaker "${req.agentId}"`);
  }
}

/** The model calls a full run makes, in order. */
export const COMPOSED_CALLS = ['trip#0', 'scout#0', 'scout#1', 'trip#1', 'booking#0', 'clerk#0', 'clerk#1', 'booking#1', 'booking#2', 'trip#2'];

/** The composed workload's model; every call is recorded in `requests`. */
export function composedModel(): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  const model = scriptedModel(async (req) => {
    requests.push(req);
    return composedRespond(req);
  }, 'composed');
  return Object.assign(model, { requests });
}

/** One store commit, as the fixture logs it: which swarm, whether a step completed, its events. */
export interface CommitEntry {
  swarmId: string;
  /** True for a step's commit (snapshot record); false for events only (a relayed child lifecycle). */
  step: boolean;
  events: string[];
}

/** A commit as one JSON line: events by kind, checkpoint step or status-update type. */
export function commitLine(c: Commit): string {
  const events = c.events.map((e) => (e.kind === 'internal:checkpoint' ? `checkpoint:${e.step}` : e.kind === 'status-update' ? `status:${e.metadata.type}` : e.kind));
  return JSON.stringify({ swarmId: c.swarmId, step: c.record !== undefined, events } satisfies CommitEntry);
}

export { stepLabel };
