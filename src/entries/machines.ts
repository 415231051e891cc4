/**
 * `xswarm/machines`: the XState v5 machines a runtime runs — the swarm (one orchestrator
 * conversation: `running`, `awaitingHandoff`, `paused`, `completed`, `failed`, `stopped`), the
 * agent a handoff starts, and a team's leader and workers — to draw them, inspect them, walk
 * their graphs (`xstate/graph`) and build tests of your own. They are pure: the model call and
 * each kind of call are actor slots the runtime fills (`machine.provide({ actors })`); started
 * as they are, a slot throws "provided by the runtime". Their contexts and events are the shapes
 * stored in every snapshot (`SWARM_MACHINE_VERSION` and the team versions say which).
 *
 * @example
 * import { swarmMachine } from 'xswarm/machines';
 * import { toDirectedGraph } from 'xstate/graph';
 * // The swarm's top-level states, as the inspector page draws them.
 * const graph = toDirectedGraph(swarmMachine);
 * console.log(graph.children.map((node) => node.stateNode.key)); // [ 'running', 'awaitingHandoff', 'paused', 'completed', 'failed', 'stopped' ]
 *
 * @module
 */
export { swarmMachine, SWARM_MACHINE_VERSION } from '../../machines/swarm.js';
export type {
  AgentSpec,
  CallerTrace,
  PauseState,
  ResolvedHandoff,
  SwarmCommand,
  SwarmConfig,
  SwarmContext,
  SwarmEmitted,
  SwarmInput,
  SwarmOutcome,
} from '../../machines/swarm.js';
export { agentMachine } from '../../machines/agent.js';
export type { AgentContext, AgentEvent, AgentInput, AgentOutput, SessionEntry } from '../../machines/agent.js';
export type { ModelStepInput, ModelStepOutput, SwarmActors } from '../../machines/contracts.js';
export { teamLeaderMachine, TEAM_LEADER_MACHINE_VERSION } from '../../machines/team/leader.js';
export type { TeamLeaderContext, TeamLeaderInput, TeamLeaderOutput } from '../../machines/team/leader.js';
export { teamWorkerMachine, TEAM_WORKER_MACHINE_VERSION } from '../../machines/team/worker.js';
export type { TeamWorkerContext, TeamWorkerInput, TeamWorkerOutput } from '../../machines/team/worker.js';
