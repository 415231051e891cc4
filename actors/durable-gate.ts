/**
 * The durability gate every call of a swarm passes before it begins: the step that led to the
 * call must be durable first (write-ahead).
 *
 * @module
 */
import type { SwarmPorts } from './ports.js';

/**
 * Resolves once the step that led to a call is durable, and rejects instead when the swarm was
 * stopped while it was being made so: a model, tool or remote call then never begins. (A pause
 * does not abort: a round's calls run on while their swarm is paused.)
 */
export async function passDurableGate(ports: SwarmPorts, swarmId: string, signal: AbortSignal): Promise<void> {
  await ports.durable(swarmId);
  signal.throwIfAborted();
}

/**
 * Runs a call's `work` once past the durability gate, counted in flight by the runtime
 * (`SwarmPorts.callBegins`) until it settles: what a drain waits for before letting go.
 */
export async function gatedCall<T>(ports: SwarmPorts, swarmId: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  await passDurableGate(ports, swarmId, signal);
  const ended = ports.callBegins?.(swarmId);
  if (!ended) return work();
  try {
    return await work();
  } finally {
    ended();
  }
}
