/**
 * Workload W1 for the durability and crash-injection suites: an orchestrator ("planner") that
 * hands off to a weather, a calendar and an allergen agent in turn and then answers
 * "Go hiking on Saturday.". Each agent first calls its own tool, then answers in text.
 *
 * The model is a pure function of the request (no queue, no counter), so a process that
 * restarts a swarm gets exactly the answers the crashed one would have got. Tool side effects
 * go through `SideEffects`: one line per idempotency key in a file (de-duplicated), plus a raw
 * log of every execution.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
// Value imports name their modules (not the package index, which also loads the OpenAI
// client): the crash fixture imports this file in every child process, and start-up time is
// most of each crash run.
import type { AgentDefinition, Model, ModelRequest, ModelResponse, SwarmDefinition, SwarmEvent, SwarmRecord } from '../../src/index.js';
import { defineSwarm } from '../../src/define/swarm.js';
import { defineAgent } from '../../src/define/agent.js';
import { handoff } from '../../src/define/handoff.js';
import { scriptedModel } from '../../src/models/scripted.js';
import { UNFINISHED_STATUSES } from '../../src/store/result.js';
import { createRuntime } from '../../src/runtime/index.js';
import { sqliteStore } from '../../src/store/sqlite/store.js';
import { collect, toolMessages } from './script.js';
import { tool } from '../../src/define/tool.js';

export const W1_AGENTS = ['weather', 'calendar', 'allergen'] as const;
export type W1Agent = (typeof W1_AGENTS)[number];
export const W1_REQUESTS: Record<W1Agent, string> = {
  weather: 'forecast for Saturday',
  calendar: 'am I free on Saturday?',
  allergen: 'pollen count on Saturday',
};
export const W1_RESULT = 'Go hiking on Saturday.';

/** Where tool side effects are recorded. */
export interface SideEffects {
  /** Called once per execution of a tool, with its idempotency key, before it answers. */
  execute(agent: W1Agent, key: string): void | Promise<void>;
}

/** Side effects in memory: executions per key (not de-duplicated, to count re-runs). */
export function memoryEffects(): SideEffects & { runs: Map<string, number>; keys(): string[] } {
  const runs = new Map<string, number>();
  return {
    runs,
    keys: () => [...runs.keys()],
    execute(_agent, key) {
      runs.set(key, (runs.get(key) ?? 0) + 1);
    },
  };
}

/**
 * Side effects in files: `file` gets the key once (the tool skips a key already there: the
 * de-duplication an idempotency key exists for); `rawFile`, when given, gets every execution.
 */
export function fileEffects(file: string, rawFile?: string): SideEffects {
  return {
    execute(_agent, key) {
      if (rawFile) appendFileSync(rawFile, `${key}\n`);
      const seen = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
      if (!seen.includes(key)) appendFileSync(file, `${key}\n`);
    },
  };
}

/** Lines of a side-effect file (empty when it does not exist). */
export function readLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** The W1 definitions, with each agent's tool recording through `effects`. */
export function w1Definitions(effects: SideEffects, options: { version?: number; id?: string } = {}) {
  const agents: AgentDefinition[] = W1_AGENTS.map((name) =>
    defineAgent({
      id: `${name}-agent`,
      description: `${name} expert`,
      instructions: `You are the ${name} expert.`,
      tools: [
        tool({
          name: `check_${name}`,
          description: `Looks up the ${name} for a day`,
          parameters: z.object({ day: z.string() }),
          execute: async ({ day }, ctx) => {
            await effects.execute(name, ctx.idempotencyKey);
            return `${name} on ${day}: fine`;
          },
        }),
      ],
    }),
  );
  const planner: SwarmDefinition<z.ZodString, z.ZodString> = defineSwarm({
    id: options.id ?? 'planner',
    ...(options.version !== undefined ? { version: options.version } : {}),
    instructions: 'Plan the weekend: ask each expert, then answer.',
    handoffs: agents.map((a) => handoff.toAgent(a)),
  });
  return { planner, agents };
}

/** The answer W1's model gives to a request: a pure function of the request. */
export function w1Respond(req: ModelRequest): ModelResponse {
  const agent = W1_AGENTS.find((a) => req.agentId === `${a}-agent`);
  if (agent) {
    if (toolMessages(req).length === 0) {
      return { toolCalls: [{ id: `t_${agent}`, name: `check_${agent}`, arguments: JSON.stringify({ day: 'Saturday' }) }] };
    }
    return { text: `${agent}: Saturday looks fine.` };
  }
  const n = toolMessages(req).length;
  const next = W1_AGENTS[n];
  if (next) {
    return {
      toolCalls: [{ id: `h${n}`, name: `handoff_to_${next}_agent`, arguments: JSON.stringify({ request: W1_REQUESTS[next] }) }],
    };
  }
  return { text: W1_RESULT };
}

/** What a request is, as a short label: `planner#2` (2 tool results seen), `weather-agent#0`. */
export function stepLabel(req: ModelRequest): string {
  return `${req.agentId}#${toolMessages(req).length}`;
}

/**
 * W1's model. `hold(req)` returning true makes that call hang until aborted (and resolves
 * `held` so a test knows the swarm got there). Every call is recorded in `requests`.
 */
export function w1Model(
  options: { hold?: (req: ModelRequest) => boolean } = {},
): Model & { requests: ModelRequest[]; held: Promise<ModelRequest>; calls(swarmId?: string): string[] } {
  const requests: ModelRequest[] = [];
  let onHeld!: (req: ModelRequest) => void;
  const held = new Promise<ModelRequest>((resolve) => (onHeld = resolve));
  const model = scriptedModel(async (req) => {
    requests.push(req);
    if (options.hold?.(req)) {
      onHeld(req);
      await new Promise<never>((_, reject) => {
        if (req.signal.aborted) reject(req.signal.reason);
        req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true });
      });
    }
    return w1Respond(req);
  }, 'w1');
  return Object.assign(model, {
    requests,
    held,
    calls: (swarmId?: string) => requests.filter((r) => swarmId === undefined || r.swarmId === swarmId).map(stepLabel),
  });
}

/** The model calls a full W1 run makes, in order. */
export const W1_CALLS = [
  'planner#0',
  'weather-agent#0',
  'weather-agent#1',
  'planner#1',
  'calendar-agent#0',
  'calendar-agent#1',
  'planner#2',
  'allergen-agent#0',
  'allergen-agent#1',
  'planner#3',
];

/** A model that must never be called (replay); counts the attempts. */
export function forbiddenModel(): Model & { attempts: number } {
  const model = {
    name: 'forbidden',
    attempts: 0,
    async call(): Promise<ModelResponse> {
      model.attempts++;
      throw new Error('the model must not be called');
    },
  };
  return model;
}

/** One swarm of a crash run as stored, and its replay. */
export interface StoredSwarm {
  events: SwarmEvent[];
  replayed: SwarmEvent[];
  record: SwarmRecord | undefined;
}

/**
 * Reads swarms `ids` back from the SQLite file of a crash run: their stored events and records
 * and their replays (through a runtime whose model refuses every call, so `modelCalls` must stay
 * 0), plus the swarms still unfinished and every swarm listed.
 */
export async function readBack(db: string, definitions: { swarms: SwarmDefinition<any, any>[]; agents: AgentDefinition[] }, ids: readonly string[]) {
  const store = sqliteStore(db);
  const model = forbiddenModel();
  const runtime = createRuntime({ ...definitions, model, store });
  try {
    const swarms: Record<string, StoredSwarm> = {};
    for (const id of ids) {
      swarms[id] = { events: await store.readEvents(id, 0), replayed: await collect(runtime.replay(id)), record: await store.load(id) };
    }
    const unfinished = await store.list({ status: [...UNFINISHED_STATUSES] });
    return { swarms, unfinished, all: await store.list(), modelCalls: model.attempts };
  } finally {
    await runtime.close();
    await store.close();
  }
}
