/**
 * The `childSwarm` actor: a handoff to a child swarm, handed to the runtime's child-swarm runner
 * (`src/runners/child-swarm.ts`), which passes the durability gate itself once it knows whether
 * the child exists (a stopped parent stops an existing child rather than never starting it).
 *
 * @module
 */
import { fromPromise } from 'xstate';
import type { CallResult } from '../machines/calls/kind.js';
import type { ChildSwarmInput } from '../machines/calls/swarm.js';
import type { SwarmPorts } from './ports.js';

/** Creates the `childSwarm` actor logic. */
export function createChildSwarm(ports: SwarmPorts) {
  return fromPromise<CallResult, ChildSwarmInput>(({ input, signal }) => ports.runChild(input, signal));
}
