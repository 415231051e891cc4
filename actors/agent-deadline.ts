/**
 * The `agentDeadline` actor: waits for an agent handoff's stored deadline, then answers with its
 * timeout (see `machines/agent-deadline.ts`). A restored one past its deadline answers at once.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import { type AgentDeadlineInput, agentTimeoutResult } from '../machines/agent-deadline.js';
import type { CallResult } from '../machines/calls/kind.js';

/** The live `agentDeadline` logic: a timer, cleared when the agent ends first. */
export const agentDeadline = fromPromise<CallResult, AgentDeadlineInput>(
  ({ input, signal }) =>
    new Promise<CallResult>((resolve, reject) => {
      const timer = setTimeout(() => resolve(agentTimeoutResult(input)), Math.max(0, input.timeout.deadline - Date.now()));
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(signal.reason);
        },
        { once: true },
      );
    }),
);
