/**
 * Wires the actor logic into the pure machines.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import { agentMachine } from '../machines/agent.js';
import type { CallResult, ChildSwarmInput, RemoteAgentInput } from '../machines/round.js';
import { swarmMachine } from '../machines/swarm.js';
import { createModelStep } from './model-step.js';
import type { SwarmPorts } from './ports.js';
import { createRunTool } from './run-tool.js';

export type { Checked, Model, ModelRequest, SwarmPorts } from './ports.js';
export { BUILTIN_TOOLS, REGISTRY_HANDOFF, REGISTRY_SEARCH } from './judge.js';

/**
 * The swarm machine with every actor key bound to real logic. Keys stay those of
 * `setup({ actors })`, so snapshots persisted by one runtime restore in another.
 *
 * @example
 * const logic = createSwarmLogic(ports);
 * const actor = createActor(logic, { input });
 */
export function createSwarmLogic(ports: SwarmPorts) {
  const modelStep = createModelStep(ports);
  const runTool = createRunTool(ports);
  const agent = agentMachine.provide({ actors: { modelStep, runTool } });
  const childSwarm = fromPromise<CallResult, ChildSwarmInput>(({ input, signal }) => ports.runChild(input, signal));
  const remoteAgent = fromPromise<CallResult, RemoteAgentInput>(async ({ input, signal }) => {
    await ports.gate(input.swarmId);
    return ports.runRemote(input, signal);
  });
  return swarmMachine.provide({ actors: { modelStep, runTool, agent, childSwarm, remoteAgent } });
}
