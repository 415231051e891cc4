/**
 * The seam through which a handoff reaches an agent served by another process: the
 * {@link RemoteAgentClient} a runtime is given (`createRuntime({ remote })`; by default the A2A
 * client of `client.ts`, loaded on demand by `lazy.ts`), what it returns and what it may ask of
 * the calling swarm.
 *
 * @module
 */
import type { RemoteAgentInput } from '../../machines/calls/remote.js';
import type { CallResult } from '../../machines/calls/kind.js';

/** What the runtime needs from a remote agent's card. */
export interface RemoteCard {
  name: string;
  description: string;
}

/** What a remote call may ask of the swarm that made it. */
export interface RemoteHooks {
  /**
   * The remote agent needs a human (A2A `input-required`): pauses the calling swarm with the
   * question and resolves with the human's answer once the swarm is resumed. With a
   * `responseSchema` (the peer asked for a typed answer), the pause carries it, and the answer
   * is the matching value as JSON text.
   */
  askHuman(question: string, request?: { responseSchema?: Record<string, unknown> }): Promise<string | undefined>;
  /**
   * Whether the calling swarm has ended (stopped, failed). False while a runtime merely shuts
   * down or loses its lease: then the remote task must be left running, since the swarm will
   * continue elsewhere and re-attach to it.
   */
  swarmEnded?(): boolean;
}

/** A client for remote agents. */
export interface RemoteAgentClient {
  /** Fetches the agent card at `url`. */
  card(url: string, signal?: AbortSignal): Promise<RemoteCard>;
  /**
   * Sends one request and resolves with the remote's final answer. Never rejects for a remote
   * failure: an unreachable or failing remote is `{ ok: false }` with the reason.
   */
  send(input: RemoteAgentInput, hooks: RemoteHooks, signal: AbortSignal): Promise<CallResult>;
}

/**
 * The card used when a remote agent's card cannot be fetched: the swarm still runs, and each
 * call to the agent becomes a tool error naming the problem.
 */
export function fallbackCard(url: string): RemoteCard {
  let name = 'remote_agent';
  try {
    const parts = new URL(url).pathname.split('/').filter((p) => p && p !== '.well-known' && p !== 'agent-card.json' && p !== 'a2a');
    name = parts.at(-1) ?? new URL(url).hostname;
  } catch {
    // Not a URL: keep the generic name; calls will report the problem.
  }
  return { name, description: `Remote agent at ${url} (its agent card could not be read)` };
}
