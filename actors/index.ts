/**
 * Wires the actor logic into the pure machines: the model step (`model-step.ts`) and the step of
 * each kind of call a child actor runs (one file each: `run-tool.ts`, `child-swarm.ts`,
 * `remote-agent.ts`, one line each in {@link CALL_STEPS}), matching the slots the machines
 * declare (`machines/calls/index.ts`); agents run as the agent machine.
 *
 * @module
 */
import type { CALL_SLOTS } from '../machines/calls/index.js';
import { agentMachine } from '../machines/agent.js';
import type { SwarmActors } from '../machines/contracts.js';
import { swarmMachine } from '../machines/swarm.js';
import { agentDeadline } from './agent-deadline.js';
import { createChildSwarm } from './child-swarm.js';
import { createModelStep } from './model-step.js';
import type { SwarmPorts } from './ports.js';
import { createRemoteAgent } from './remote-agent.js';
import { createRunTool } from './run-tool.js';

export type { Checked, GuardDecision, GuardSite, Model, ModelRequest, SwarmPorts, TracedModelCall } from './ports.js';
export { BUILTIN_TOOLS } from './judge.js';
export { REGISTRY_HANDOFF, REGISTRY_SEARCH } from './plan-handoff.js';

/** The step behind each call slot, created from the ports: a new kind of call adds its line. */
const CALL_STEPS: { [K in keyof typeof CALL_SLOTS]: (ports: SwarmPorts) => SwarmActors[K] } = {
  runTool: createRunTool,
  childSwarm: createChildSwarm,
  remoteAgent: createRemoteAgent,
};

/**
 * The one wiring of the machines: the swarm machine with `actors` bound to its keys, and its
 * agents (the agent machine) given the same model step and tool runner. The live runtime wires
 * real actors through it ({@link createSwarmLogic}), replay wires actors that answer from a
 * journal. Keys stay those of `setup({ actors })`, so snapshots persisted by one runtime
 * restore in another.
 */
export function wireSwarm(actors: SwarmActors) {
  const agent = agentMachine.provide({ actors: { modelStep: actors.modelStep, runTool: actors.runTool, agentDeadline: actors.agentDeadline ?? agentDeadline } });
  return swarmMachine.provide({ actors: { ...actors, agent } });
}

/**
 * The swarm machine with every actor key bound to the real logic, reaching the outside world
 * through `ports`.
 */
export function createSwarmLogic(ports: SwarmPorts) {
  const calls = Object.fromEntries(Object.entries(CALL_STEPS).map(([key, create]) => [key, create(ports)])) as Omit<SwarmActors, 'modelStep'>;
  return wireSwarm({ modelStep: createModelStep(ports), ...calls });
}
