/**
 * `xswarm/testing`: model-based tests of your own swarm. `describeSwarm(definition)` in a vitest
 * file declares a test per path worth testing for that swarm (each handoff target, each tool's
 * success and error, pauses, limits, guardrails, approvals, a child's failure, a budget), each
 * run on a real runtime with a scripted model and controllable tools, and each checked for the
 * invariants: exactly one final event, ordered valid A2A events, nothing acknowledged before it
 * is durable, replay equal to the run, and a crash after every commit continuing to the same end
 * with no side effect repeated. `vitest` is an optional peer: `describeSwarm` uses it;
 * `swarmPaths`, `checkSwarmPath` and `checkSwarm` do not need a test framework.
 * See docs/testing-swarms.md.
 *
 * @example
 * import { describeSwarm } from 'xswarm/testing';
 * // In a vitest file: one test per path of the planner (its agents given where it names them by id).
 * describeSwarm(planner, { agents: [weather] });
 *
 * @module
 */
export { checkSwarm, describeSwarm, pathsOf, type DescribeSwarmOptions } from '../testing/describe.js';
export { checkSwarmPath, crashPoints, describeFailure, type CheckOptions, type PathFailure, type PathReport } from '../testing/check.js';
export { swarmPaths, swarmMachineStates, unreachedStates } from '../testing/paths.js';
export type { PathControl, PathEnd, PathOptions, PathStep, SwarmMachineState, SwarmPath } from '../testing/paths.js';
export { shapeOf, type GuardrailRef, type HandoffTarget, type OwnedTool, type ShapeLookup, type SwarmShape } from '../testing/shape.js';
export { INVARIANTS, type Invariant } from '../testing/invariants.js';
export type { TestToolContext } from '../testing/effects.js';
export type { ToolOverride } from '../testing/control.js';
export type { ModelSamples } from '../testing/model.js';
export { sampleOf } from '../testing/sample.js';
