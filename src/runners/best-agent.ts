/**
 * Running a handoff to the best agent for a skill (`handoff.toBestAgent(skill)`): it plans as a
 * remote-agent call whose URL names the skill (`catalog/best-agent.ts`), and runs here, through
 * the runtime's agent registry, which picks the agent when the call runs.
 *
 * @module
 */
import type { CallResult } from '../../machines/calls/kind.js';
import type { RemoteAgentInput } from '../../machines/calls/remote.js';
import type { RemoteHooks } from '../a2a/remote.js';
import type { AgentRegistry } from '../registry/registry.js';
import { abortable } from '../util/abort.js';

/**
 * Sends the call to the best agent for `skill` in `registry` and resolves with its answer (the
 * result names the agent that answered).
 */
export async function callBestAgent(
  registry: AgentRegistry | undefined,
  skill: string,
  input: RemoteAgentInput,
  hooks: RemoteHooks,
  signal: AbortSignal,
): Promise<CallResult> {
  // A swarm restored by a runtime created without the registry it was started with.
  if (!registry) return { ok: false, content: `No agent registry is available to find the best agent for "${skill}"` };
  try {
    return await registry.callBest(skill, input, hooks, signal);
  } catch (e) {
    if (signal.aborted || registry.closeReason === undefined) throw e;
    // The registry was closed under a live swarm (its runtime closes next): the call was
    // interrupted, not answered. Failing it would be recorded for good, so it waits to be
    // stopped with the swarm instead; the swarm's record keeps it running, and after a restart
    // it runs again with the same message id (re-attaching to the agent's task).
    return await abortable(new Promise<never>(() => undefined), signal);
  }
}
