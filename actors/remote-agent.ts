/**
 * The `remoteAgent` actor: a handoff to an agent served by another process (or to the agent
 * registry's best agent for a skill), sent once its step is durable through the runtime's
 * remote-agent runner (`src/runners/remote-agent.ts`).
 *
 * @module
 */
import { fromPromise } from 'xstate';
import type { CallResult } from '../machines/calls/kind.js';
import type { RemoteAgentInput } from '../machines/calls/remote.js';
import { gatedCall } from './durable-gate.js';
import type { SwarmPorts } from './ports.js';

/** Creates the `remoteAgent` actor logic. */
export function createRemoteAgent(ports: SwarmPorts) {
  return fromPromise<CallResult, RemoteAgentInput>(({ input, signal }) => gatedCall(ports, input.swarmId, signal, () => ports.runRemote(input, signal)));
}
