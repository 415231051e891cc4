/**
 * Wires the actor logic into the pure machines: each slot of `machines/contracts.ts` gets its
 * implementation here (`model-step.ts`, `run-tool.ts`, and the ports' child-swarm and remote
 * runners, which live in `src/handoffs/`).
 *
 * @module
 */
import { fromPromise } from 'xstate';
import { agentMachine } from '../machines/agent.js';
import type { CallResult, ChildSwarmInput, RemoteAgentInput, SwarmActors } from '../machines/contracts.js';
import { swarmMachine } from '../machines/swarm.js';
import { passDurableGate } from './durable-gate.js';
import { createModelStep } from './model-step.js';
import type { SwarmPorts } from './ports.js';
import { createRunTool } from './run-tool.js';

export type { Checked, Model, ModelRequest, SwarmPorts } from './ports.js';
export { BUILTIN_TOOLS } from './judge.js';
export { REGISTRY_HANDOFF, REGISTRY_SEARCH } from './plan-handoff.js';

/**
 * The one wiring of the machines: the swarm machine with `actors` bound to its keys, and its
 * agents (the agent machine) given the same model step and tool runner. The live runtime wires
 * real actors through it ({@link createSwarmLogic}), replay wires actors that answer from a
 * journal. Keys stay those of `setup({ actors })`, so snapshots persisted by one runtime
 * restore in another.
 */
export function wireSwarm(actors: SwarmActors) {
  const agent = agentMachine.provide({ actors: { modelStep: actors.modelStep, runTool: actors.runTool } });
  return swarmMachine.provide({ actors: { ...actors, agent } });
}

/**
 * The swarm machine with every actor key bound to the real logic, reaching the outside world
 * through `ports`.
 */
export function createSwarmLogic(ports: SwarmPorts) {
  return wireSwarm({
    modelStep: createModelStep(ports),
    runTool: createRunTool(ports),
    childSwarm: fromPromise<CallResult, ChildSwarmInput>(({ input, signal }) => ports.runChild(input, signal)),
    remoteAgent: fromPromise<CallResult, RemoteAgentInput>(async ({ input, signal }) => {
      await passDurableGate(ports, input.swarmId, signal);
      return ports.runRemote(input, signal);
    }),
  });
}
