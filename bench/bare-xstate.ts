/**
 * The bare XState reference for W1: the loop written as plain XState v5 machines and nothing
 * else — an orchestrator machine that invokes a promise actor for the model and, for each
 * handoff, a child machine for the agent (which invokes the same promise actor). No runtime,
 * events, store, validation or error paths: it is the floor the runtime is measured against,
 * so it must stay minimal.
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

/** The handoff the orchestrator asked for: the call to answer and the agent's request. */
interface Pending {
  callId: string;
  agentId: string;
  request: string;
}

// The tool specs the model is shown, built once.
const HANDOFF_SPECS: ToolSpec[] = W1_AGENTS.map((agentId, i) => ({
  name: W1_HANDOFF_TOOLS[i]!,
  description: `Hand off to ${agentId}`,
  parameters: { type: 'object', properties: { request: { type: 'string' } }, required: ['request'] },
}));

/**
 * Builds the orchestrator machine (with its agent machine) for a script that counts into
 * `counts` and waits `latencyMs` per call.
 */
export function createBareW1(counts: CallCounts, latencyMs: number) {
  const callModel = fromPromise<ModelResponse, ModelInput>(async ({ input, signal }) =>
    latencyMs > 0 ? w1Call({ ...input, signal }, counts, latencyMs) : w1Respond(input, counts),
  );

  const agent = setup({
    types: {} as { context: { agentId: string; messages: ChatMessage[]; answer: string }; input: { agentId: string; request: string }; output: string },
    actors: { callModel },
  }).createMachine({
    context: ({ input }) => ({
      agentId: input.agentId,
      messages: [
        { role: 'system', content: `You are the ${input.agentId}. Answer briefly.` },
        { role: 'user', content: input.request },
      ],
      answer: '',
    }),
    initial: 'thinking',
    states: {
      thinking: {
        invoke: {
          src: 'callModel',
          input: ({ context }) => ({ agentId: context.agentId, messages: context.messages, tools: [] }),
          onDone: { target: 'done', actions: assign({ answer: ({ event }) => event.output.text ?? '' }) },
        },
      },
      done: { type: 'final' },
    },
    output: ({ context }) => context.answer,
  });

  return setup({
    types: {} as {
      context: { messages: ChatMessage[]; pending: Pending | null; result: string };
      input: { userMessage: string };
      output: string;
    },
    actors: { callModel, agent },
  }).createMachine({
    context: ({ input }) => ({
      messages: [
        { role: 'system', content: 'Plan the user’s weekend. Ask the agents, then answer in one sentence.' },
        { role: 'user', content: input.userMessage },
      ],
      pending: null,
      result: '',
    }),
    initial: 'thinking',
    states: {
      thinking: {
        invoke: {
          src: 'callModel',
          input: ({ context }) => ({ agentId: W1_SWARM_ID, messages: context.messages, tools: HANDOFF_SPECS }),
          onDone: [
            {
              guard: ({ event }) => (event.output.toolCalls?.length ?? 0) > 0,
              target: 'handingOff',
              actions: assign(({ context, event }) => {
                const call = event.output.toolCalls![0]!;
                const agentId = W1_AGENTS[W1_HANDOFF_TOOLS.indexOf(call.name)]!;
                const { request } = JSON.parse(call.arguments) as { request: string };
                const assistant: ChatMessage = { role: 'assistant', content: event.output.text ?? '', toolCalls: event.output.toolCalls! };
                return { messages: [...context.messages, assistant], pending: { callId: call.id, agentId, request } };
              }),
            },
            { target: 'done', actions: assign({ result: ({ event }) => event.output.text ?? '' }) },
          ],
        },
      },
      handingOff: {
        invoke: {
          src: 'agent',
          input: ({ context }) => ({ agentId: context.pending!.agentId, request: context.pending!.request }),
          onDone: {
            target: 'thinking',
            actions: assign(({ context, event }) => ({
              messages: [...context.messages, { role: 'tool' as const, toolCallId: context.pending!.callId, content: event.output }],
              pending: null,
            })),
          },
        },
      },
      done: { type: 'final' },
    },
    output: ({ context }) => context.result,
  });
}

/** The bare W1 machine for some counts and latency. */
export type BareW1 = ReturnType<typeof createBareW1>;

/** Runs one W1 conversation on the bare machine and returns its final text (rejects if it failed). */
export async function runBareW1(machine: BareW1, userMessage: string): Promise<string> {
  const actor = createActor(machine, { input: { userMessage } });
  const done = toPromise(actor);
  actor.start();
  return done;
}
