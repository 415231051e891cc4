/**
 * An agent handoff's deadline (`defineAgent({ timeoutMs })`): a child of the agent machine that
 * answers once the deadline passes, with the timeout as the handoff's result; the agent then
 * ends (stopping its model call and tools). The deadline is counted from the round that handed
 * off (`Round.openedAt`) and is part of the child's input, so a restored agent keeps it.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import type { CallResult, CallTimeout } from './calls/kind.js';

/** Input of the `agentDeadline` actor. */
export interface AgentDeadlineInput {
  agentId: string;
  /** The handoff's idempotency key (the agent's scope): what a replay answers it by. */
  key: string;
  timeout: CallTimeout;
}

/** The id of the deadline child among an agent machine's children. */
export const AGENT_DEADLINE_ID = 'deadline';

/** What the orchestrator's model reads when an agent did not answer in time. */
export function agentTimeoutResult(input: AgentDeadlineInput): CallResult {
  const content = `Agent "${input.agentId}" timed out after ${input.timeout.ms} ms (timeoutMs)`;
  return input.timeout.fails ? { ok: false, content, failsSwarm: true } : { ok: false, content };
}

/** Slot of an agent's deadline; the runtime provides the logic (`actors/agent-deadline.ts`). */
export const agentDeadlineSlot = fromPromise<CallResult, AgentDeadlineInput>(async () => {
  throw new Error('agentDeadline is provided by the runtime');
});
