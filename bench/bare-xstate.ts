/**
 * The bare XState reference for W1: the same conversation loop written as a minimal pair of
 * XState v5 machines, with no runtime, no events and no store. It does the same per-call work
 * the runtime's machines must do (grow the message arrays, parse and check the tool call's
 * JSON arguments, hand off to a child machine that calls the model) and nothing more, so the
 * runtime/bare ratio measures what the runtime adds on top of XState itself.
 *
 * @module
 */
import { assign, createActor, fromPromise, setup, toPromise } from 'xstate';
import type { ChatMessage, ModelResponse, ToolSpec } from '../src/index.js';
import { type CallCounts, W1_AGENTS, W1_HANDOFF_TOOLS, W1_SWARM_ID, w1Call, w1Respond } from './w1.js';

interface ModelInput {
  agentId: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
}

interface SessionEntry {
  agentId: string;
  request: string;
  answer: string;
}

interface AgentInput {
  agentId: string;
  request: string;
  session: SessionEntry[];
}

interface Pending {
  callId: string;
  agentId: string;
  request: string;
}

interface OrchestratorContext {
  messages: ChatMessage[];
  session: SessionEntry[];
  turn: number;
  pending: Pending | null;
  result: string | null;
  error: string | null;
}

const MAX_TURNS = 10;

// Tool specs are built once, as the runtime caches them per resolved configuration.
const HANDOFF_SPECS: ToolSpec[] = W1_AGENTS.map((agentId, i) => ({
  name: W1_HANDOFF_TOOLS[i]!,
  description: `Hand off to ${agentId}`,
  parameters: { type: 'object', properties: { request: { type: 'string' } }, required: ['request'] },
}));

/**
 * Parses the (single) tool call of a W1 orchestrator response into a handoff, or an error text
 * that goes back to the model, as the runtime's judge does.
 */
function planHandoff(response: ModelResponse): Pending | string {
  const call = response.toolCalls?.[0];
  if (!call) return 'no tool call';
  const index = W1_HANDOFF_TOOLS.indexOf(call.name);
  if (index < 0) return `Unknown tool "${call.name}"`;
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch (e) {
    return `Arguments for "${call.name}" are not valid JSON: ${(e as Error).message}`;
  }
  const request = (args as { request?: unknown } | null)?.request;
  if (typeof request !== 'string' || !request.trim()) return `${call.name} needs a non-empty "request" string.`;
  return { callId: call.id, agentId: W1_AGENTS[index]!, request };
}

/**
 * Builds the orchestrator machine (with its agent machine) for a script that counts into
 * `counts` and waits `latencyMs` per call.
 *
 * @example
 * const machine = createBareW1(newCounts(), 0);
 * const actor = createActor(machine, { input: { userMessage: 'hi' } });
 */
export function createBareW1(counts: CallCounts, latencyMs: number) {
  const callModel = fromPromise<ModelResponse, ModelInput>(async ({ input, signal }) =>
    latencyMs > 0 ? w1Call({ ...input, signal }, counts, latencyMs) : w1Respond(input, counts),
  );

  const agent = setup({
    types: {} as { context: { agentId: string; messages: ChatMessage[]; answer: string }; input: AgentInput; output: string },
    actors: { callModel },
  }).createMachine({
    context: ({ input }) => {
      // An agent sees the swarm's earlier agent exchanges, then the request.
      const messages: ChatMessage[] = [{ role: 'system', content: `You are the ${input.agentId}. Answer briefly.` }];
      for (const e of input.session) {
        messages.push({ role: 'user', content: `(to ${e.agentId}) ${e.request}` }, { role: 'assistant', content: `(${e.agentId}) ${e.answer}` });
      }
      messages.push({ role: 'user', content: input.request });
      return { agentId: input.agentId, messages, answer: '' };
    },
    initial: 'thinking',
    states: {
      thinking: {
        invoke: {
          src: 'callModel',
          input: ({ context }) => ({ agentId: context.agentId, messages: context.messages, tools: [] }),
          onDone: {
            target: 'done',
            actions: assign(({ context, event }) => ({
              messages: [...context.messages, { role: 'assistant' as const, content: event.output.text ?? '' }],
              answer: event.output.text ?? '',
            })),
          },
        },
      },
      done: { type: 'final' },
    },
    output: ({ context }) => context.answer,
  });

  return setup({
    types: {} as { context: OrchestratorContext; input: { userMessage: string }; output: OrchestratorContext },
    actors: { callModel, agent },
    guards: {
      wantsHandoff: ({ event }) => ((event as { output?: ModelResponse }).output?.toolCalls?.length ?? 0) > 0,
      planned: ({ context }) => context.pending !== null,
      turnsLeft: ({ context }) => context.turn < MAX_TURNS,
    },
  }).createMachine({
    context: ({ input }) => ({
      messages: [
        { role: 'system', content: 'Plan the user’s weekend. Ask the agents, then answer in one sentence.' },
        { role: 'user', content: input.userMessage },
      ],
      session: [],
      turn: 0,
      pending: null,
      result: null,
      error: null,
    }),
    initial: 'thinking',
    states: {
      thinking: {
        invoke: {
          src: 'callModel',
          input: ({ context }) => ({ agentId: W1_SWARM_ID, messages: context.messages, tools: HANDOFF_SPECS }),
          onDone: [
            {
              guard: 'wantsHandoff',
              target: 'planning',
              actions: assign(({ context, event }) => {
                const plan = planHandoff(event.output);
                const assistant: ChatMessage = { role: 'assistant', content: event.output.text ?? '', toolCalls: event.output.toolCalls! };
                if (typeof plan !== 'string') return { turn: context.turn + 1, messages: [...context.messages, assistant], pending: plan };
                // A bad call is answered with its error as the tool result, like the runtime does.
                const id = event.output.toolCalls![0]!.id;
                return { turn: context.turn + 1, messages: [...context.messages, assistant, { role: 'tool' as const, toolCallId: id, content: plan }], pending: null };
              }),
            },
            { target: 'done', actions: assign(({ event }) => ({ result: event.output.text ?? '' })) },
          ],
          onError: { target: 'done', actions: assign(({ event }) => ({ error: String(event.error) })) },
        },
      },
      planning: {
        always: [
          { guard: 'planned', target: 'handingOff' },
          { guard: 'turnsLeft', target: 'thinking' },
          { target: 'done', actions: assign({ error: 'maxTurns reached' }) },
        ],
      },
      handingOff: {
        invoke: {
          src: 'agent',
          input: ({ context }) => ({ agentId: context.pending!.agentId, request: context.pending!.request, session: context.session }),
          onDone: {
            target: 'thinking',
            actions: assign(({ context, event }) => {
              const p = context.pending!;
              return {
                messages: [...context.messages, { role: 'tool' as const, toolCallId: p.callId, content: event.output }],
                session: [...context.session, { agentId: p.agentId, request: p.request, answer: event.output }],
                pending: null,
              };
            }),
          },
          onError: { target: 'done', actions: assign(({ event }) => ({ error: String(event.error) })) },
        },
      },
      done: { type: 'final' },
    },
    output: ({ context }) => context,
  });
}

/** The bare W1 machine for some counts and latency. */
export type BareW1 = ReturnType<typeof createBareW1>;

/**
 * Runs one W1 conversation on the bare machine and returns its final text; throws if it did
 * not complete.
 */
export async function runBareW1(machine: BareW1, userMessage: string): Promise<string> {
  const actor = createActor(machine, { input: { userMessage } });
  const done = toPromise(actor);
  actor.start();
  const out = await done;
  if (out.error !== null || out.result === null) throw new Error(`bare W1 run failed: ${out.error ?? 'no result'}`);
  return out.result;
}
