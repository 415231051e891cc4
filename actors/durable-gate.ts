/**
 * Where every call of a swarm begins: after the gate.
 *
 * @module
 */
import type { SwarmPorts } from './ports.js';

/**
 * Resolves once the step that led to a call is durable (write-ahead), and rejects instead when
 * the swarm was stopped while it was being made so: a model, tool or remote call then never
 * begins. (A pause does not abort: a round's calls run on while their swarm is paused.)
 */
export async function passGate(ports: SwarmPorts, swarmId: string, signal: AbortSignal): Promise<void> {
  await ports.gate(swarmId);
  signal.throwIfAborted();
}
