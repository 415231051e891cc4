/**
 * Workload W1: an orchestrator that hands off to three agents in turn, then answers.
 * The script is shared by the runtime rows and the bare XState reference so that both do
 * exactly the same model-side work.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createRuntime, defineAgent, defineSwarm, handoff, scriptedModel } from '../src/index.js';
import type { AgentDefinition, Budget, ChatMessage, ModelResponse, Runtime, RuntimeOptions, SwarmDefinition, SwarmStore } from '../src/index.js';

/** The swarm definition id; the orchestrator's requests carry it as `agentId`. */
export const W1_SWARM_ID = 'planner';
/** The three agents, in the order the orchestrator hands off to them. */
export const W1_AGENTS = ['weather-agent', 'calendar-agent', 'allergen-agent'] as const;
/** The requests the orchestrator sends, one per agent. */
export const W1_REQUESTS = ['forecast for Saturday', 'free on Saturday?', 'pollen Saturday'] as const;
/** The orchestrator's final answer. */
export const W1_RESULT = 'Go hiking on Saturday.';
/** Model calls per run: 4 orchestrator calls + 1 per agent. */
export const W1_MODEL_CALLS = 7;
/** The handoff tool names, `handoff_to_<agent id>` with `-` as `_` (as the runtime names them). */
export const W1_HANDOFF_TOOLS = W1_AGENTS.map((id) => `handoff_to_${id.replace(/-/g, '_')}`);
/** The user message every run starts with. */
export const W1_INPUT = 'Plan my Saturday';

/** Model calls per speaker (`agentId` of the request), counted by the script. */
export type CallCounts = Record<string, number>;

/** A fresh counter with every W1 speaker at zero. */
export function newCounts(): CallCounts {
  const counts: CallCounts = { [W1_SWARM_ID]: 0 };
  for (const a of W1_AGENTS) counts[a] = 0;
  return counts;
}

/** The response text of an agent (one text answer, no tools). */
export function agentAnswer(agentId: string): string {
  return `${agentId}: looks fine`;
}

/**
 * The W1 script: stateless, so the orchestrator's next move depends only on how many tool
 * results its conversation already holds. Counts each call by speaker.
 *
 * @example
 * const counts = newCounts();
 * w1Respond({ agentId: 'planner', messages: [] }, counts).toolCalls![0].name // 'handoff_to_weather_agent'
 */
export function w1Respond(request: { agentId: string; messages: readonly ChatMessage[] }, counts: CallCounts): ModelResponse {
  counts[request.agentId] = (counts[request.agentId] ?? 0) + 1;
  if (request.agentId !== W1_SWARM_ID) return { text: agentAnswer(request.agentId) };
  let n = 0;
  for (const m of request.messages) if (m.role === 'tool') n++;
  if (n < W1_AGENTS.length) {
    return {
      toolCalls: [
        {
          id: `c${n}`,
          name: W1_HANDOFF_TOOLS[n]!,
          arguments: JSON.stringify({ request: W1_REQUESTS[n] }),
        },
      ],
    };
  }
  return { text: W1_RESULT };
}

/**
 * Runs the script, after `latencyMs` of simulated model latency when it is positive. The
 * timer honours the abort signal, as a real model call must.
 */
export async function w1Call(
  request: { agentId: string; messages: readonly ChatMessage[]; signal: AbortSignal },
  counts: CallCounts,
  latencyMs: number,
): Promise<ModelResponse> {
  if (latencyMs > 0) await sleep(latencyMs, undefined, { signal: request.signal });
  return w1Respond(request, counts);
}

/** W1's three agents, each answering with one text. */
export function w1Agents() {
  return W1_AGENTS.map((id) => defineAgent({ id, instructions: `You are the ${id}. Answer briefly.` }));
}

/**
 * W1's orchestrator: a swarm handing off to the three agents in turn, given as their definitions
 * (agents in the same runtime) or their ids (agents hosted elsewhere); `budget`: the budget row's.
 */
export function w1Swarm(agents: readonly (AgentDefinition | string)[], budget?: Budget): SwarmDefinition {
  return defineSwarm({
    id: W1_SWARM_ID,
    instructions: 'Plan the user’s weekend. Ask the agents, then answer in one sentence.',
    handoffs: agents.map((a) => handoff.toAgent(a)),
    ...(budget ? { budget } : {}),
  });
}

/** A W1 runtime plus the counters its model writes to. */
export interface W1Runtime {
  runtime: Runtime;
  swarm: SwarmDefinition;
  counts: CallCounts;
}

/**
 * Creates a runtime with the W1 swarm and its agents, on the default in-memory store (`extra`: metrics or a logger, for their rows).
 *
 * @example
 * const { runtime, swarm, counts } = createW1Runtime(0);
 */
export function createW1Runtime(
  latencyMs: number,
  store?: SwarmStore,
  inspect?: RuntimeOptions['inspect'],
  budget?: Budget,
  extra?: Pick<RuntimeOptions, 'metrics' | 'logger' | 'tracing'>,
): W1Runtime {
  const counts = newCounts();
  const agents = w1Agents();
  const swarm = w1Swarm(agents, budget);
  // Sync script when there is no latency: an extra await per call would be bench overhead.
  const model = scriptedModel(latencyMs > 0 ? (req) => w1Call(req, counts, latencyMs) : (req) => w1Respond(req, counts));
  // A budget in USD needs the model's price: the budget row prices it (what a real deployment does).
  const prices = budget?.usd !== undefined ? { [model.name]: { inputPerMTok: 2.5, outputPerMTok: 10 } } : undefined;
  const runtime = createRuntime({
    swarms: [swarm],
    agents,
    model,
    ...(store ? { store } : {}),
    ...(inspect ? { inspect } : {}),
    ...(prices ? { prices } : {}),
    ...extra,
  });
  return { runtime, swarm, counts };
}

/** Throws unless `result` is a completed W1 run's (any of the rows: runtime, machine alone, bare XState). */
export function checkW1Result(result: unknown): void {
  const r = result as { status?: unknown; result?: unknown };
  if (r.status !== 'completed' || r.result !== W1_RESULT) throw new Error(`unexpected W1 result: ${JSON.stringify(result)}`);
}

/** One W1 run through the public client API, to its end; throws unless it completed with W1's result. */
export async function runW1(runtime: Runtime): Promise<void> {
  const client = runtime.forSwarm(W1_SWARM_ID);
  await client.run(W1_INPUT);
  checkW1Result(await client.wait());
}
