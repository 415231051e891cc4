/**
 * The paths worth testing for one swarm, derived from its definition ({@link SwarmShape}) and
 * checked against the swarm machine's graph.
 *
 * Why `xstate/graph` and not `@xstate/graph`: `xstate/graph` ships inside xstate v5 (a
 * dependency already), where `@xstate/graph` is a separate package built for v4-era machines.
 * And its path generators walk a machine's own events, whereas what varies between two runs of
 * a swarm is what its model answers and how its tools end — outputs of invoked actors, not
 * events the graph can enumerate. So the paths are derived from the definition (one per handoff
 * target, tool outcome, pause, limit, guardrail, approval…), and the graph gives the states of
 * the swarm machine they must reach between them ({@link swarmMachineStates}).
 *
 * @module
 */
import { toDirectedGraph } from 'xstate/graph';
import { swarmMachine } from '../../machines/swarm.js';
import type { GuardrailRef, HandoffTarget, OwnedTool, SwarmShape } from './shape.js';

/** One step of the orchestrator's script: a tool call, a handoff, or a call of the built-in `pause`. */
export type PathStep =
  | { do: 'tool'; tool: OwnedTool; outcome: 'ok' | 'error' }
  | {
      do: 'handoff';
      target: HandoffTarget;
      /** For an agent: the tool it calls before it answers, and how that call ends. */
      agentTool?: { tool: OwnedTool; outcome: 'ok' | 'error' };
      /** For a child swarm or a remote agent: whether it completes or fails. */
      child?: 'complete' | 'fail';
    }
  | { do: 'pause' }
  /** The model gives up: it calls the built-in `fail`. */
  | { do: 'fail' };

/** What the harness does when the swarm stops to wait, and what the path makes happen. */
export interface PathControl {
  /** On a pause the model asked for (`HITL`): answer it, or stop the swarm. */
  onHumanPause?: 'resume' | 'stop';
  /** On a call waiting for approval: approve it or reject it. */
  onApproval?: 'approve' | 'reject';
  /** In the middle of the first call of the path: pause (then resume) or stop from outside. */
  midCall?: 'pause' | 'stop';
  /**
   * Repeat the first step until a limit pauses the swarm (then stop it): `maxTurns` (the swarm
   * runs without its budget in this path) or its `budget` (with at least 50 turns).
   */
  loop?: 'maxTurns' | 'budget';
  /** The guardrail made to reject in this path. */
  guardrail?: GuardrailRef;
  /** The tool whose calls wait for approval in this path. */
  gated?: OwnedTool;
}

/** How a path must end: the `SwarmResult` status. */
export type PathEnd = 'completed' | 'failed' | 'stopped';

/** A path: a name, the orchestrator's steps, what the harness does, and how it must end. */
export interface SwarmPath {
  /** Says what the path does, e.g. `handoff → weather-agent` or `tool get_forecast (weather-agent) errors`. */
  name: string;
  steps: PathStep[];
  control: PathControl;
  expect: PathEnd;
  /** Top-level states of the swarm machine the path goes through. */
  reaches: readonly SwarmMachineState[];
}

/** The top-level states of the swarm machine, read from its graph with `xstate/graph`. */
export type SwarmMachineState = 'running' | 'awaitingHandoff' | 'paused' | 'completed' | 'failed' | 'stopped';

/**
 * The swarm machine's top-level states, from its directed graph (`toDirectedGraph`): the paths
 * of a swarm together must reach each of them that the swarm can reach.
 */
export function swarmMachineStates(): string[] {
  return toDirectedGraph(swarmMachine).children.map((node) => node.stateNode.key);
}

/** Options of {@link swarmPaths}. */
export interface PathOptions {
  /**
   * `'all'` (the default): one path per handoff target, tool outcome, pause, limit, guardrail,
   * child failure and approval answer. `'shortest'`: fewer, longer paths — every handoff target
   * (each agent calling its first tool) in one path, every tool's success in one, every tool's
   * error in one, and the paths of pauses, limits, guardrails, failures and approvals as in `'all'`.
   */
  paths?: 'all' | 'shortest';
}

/** The first step that makes a call: an orchestrator tool, else a handoff (to an agent calling its first tool). */
function firstCall(shape: SwarmShape): PathStep | undefined {
  const own = shape.tools.find((t) => !t.via);
  if (own) return { do: 'tool', tool: own, outcome: 'ok' };
  const target = shape.targets[0];
  return target ? handoffStep(target) : undefined;
}

function handoffStep(target: HandoffTarget, agentTool?: { tool: OwnedTool; outcome: 'ok' | 'error' }): PathStep {
  if (target.kind === 'swarm' || target.kind === 'remote') return { do: 'handoff', target, child: 'complete' };
  const first = target.tools[0];
  const tool = agentTool ?? (first ? { tool: { owner: target.id, tool: first, via: target }, outcome: 'ok' as const } : undefined);
  return tool ? { do: 'handoff', target, agentTool: tool } : { do: 'handoff', target };
}

/** The step that calls `tool` with `outcome`: directly, or through the handoff to its agent. */
function toolStep(t: OwnedTool, outcome: 'ok' | 'error'): PathStep {
  return t.via ? handoffStep(t.via, { tool: t, outcome }) : { do: 'tool', tool: t, outcome };
}

function toolLabel(t: OwnedTool): string {
  return t.via ? `${t.tool.name} (${t.owner})` : t.tool.name;
}

const RUN: SwarmMachineState[] = ['running', 'completed'];
const HANDOFF: SwarmMachineState[] = ['running', 'awaitingHandoff', 'completed'];

/** The paths worth testing for the swarm of `shape` (see {@link PathOptions}). */
export function swarmPaths(shape: SwarmShape, options: PathOptions = {}): SwarmPath[] {
  const paths: SwarmPath[] = [];
  const add = (name: string, steps: PathStep[], expect: PathEnd, reaches: SwarmMachineState[], control: PathControl = {}) =>
    paths.push({ name, steps, control, expect, reaches });
  const shortest = options.paths === 'shortest';

  add('answer at once', [], 'completed', RUN);
  if (shortest) {
    if (shape.targets.length > 0)
      add(
        'every handoff target in turn',
        shape.targets.map((t) => handoffStep(t)),
        'completed',
        HANDOFF,
      );
    if (shape.tools.length > 0) {
      add(
        'every tool succeeds',
        shape.tools.map((t) => toolStep(t, 'ok')),
        'completed',
        HANDOFF,
      );
      add(
        'every tool errors',
        shape.tools.map((t) => toolStep(t, 'error')),
        'completed',
        HANDOFF,
      );
    }
  } else {
    for (const t of shape.targets) add(`handoff → ${t.id}`, [handoffStep(t)], 'completed', HANDOFF);
    for (const t of shape.tools) {
      add(`tool ${toolLabel(t)} succeeds`, [toolStep(t, 'ok')], 'completed', t.via ? HANDOFF : RUN);
      add(`tool ${toolLabel(t)} errors`, [toolStep(t, 'error')], 'completed', t.via ? HANDOFF : RUN);
    }
  }
  for (const t of shape.targets.filter((x) => x.kind === 'swarm' || x.kind === 'remote')) {
    add(`${t.kind === 'swarm' ? 'child swarm' : 'remote agent'} ${t.id} fails`, [{ do: 'handoff', target: t, child: 'fail' }], 'completed', HANDOFF);
  }
  add('the model gives up', [{ do: 'fail' }], 'failed', ['running', 'failed']);
  add('pause → resume', [{ do: 'pause' }], 'completed', ['running', 'paused', 'completed'], { onHumanPause: 'resume' });
  add('pause → stop', [{ do: 'pause' }], 'stopped', ['running', 'paused', 'stopped'], { onHumanPause: 'stop' });
  const call = firstCall(shape);
  if (call) {
    add('external pause in the middle of a call → resume', [call], 'completed', ['running', 'paused', 'completed'], { midCall: 'pause' });
    add('external stop in the middle of a call', [call], 'stopped', ['running', 'stopped'], { midCall: 'stop' });
    add(`maxTurns (${shape.maxTurns}) reached → stop`, [call], 'stopped', ['running', 'paused', 'stopped'], { loop: 'maxTurns' });
    if (shape.hasBudget) add('budget tripped → stop', [call], 'stopped', ['running', 'paused', 'stopped'], { loop: 'budget' });
  }
  for (const g of shape.guardrails) {
    // A rejection ends the swarm (`reject`) or pauses it (`pause`, then stopped); a blocked tool
    // call is the model's to read, and the swarm goes on.
    const expect: PathEnd = g.onReject === 'pause' ? 'stopped' : g.onReject === 'block' ? 'completed' : 'failed';
    const steps = call ? [call] : [];
    add(`guardrail ${g.name} (${g.step}) rejects`, steps, expect, ['running', expect === 'failed' ? 'failed' : expect], { guardrail: g });
  }
  for (const t of shape.gated) {
    add(`approval of ${toolLabel(t)} approved`, [toolStep(t, 'ok')], 'completed', ['running', 'paused', 'completed'], { onApproval: 'approve', gated: t });
    add(`approval of ${toolLabel(t)} rejected`, [toolStep(t, 'ok')], 'completed', ['running', 'paused', 'completed'], { onApproval: 'reject', gated: t });
  }
  return paths;
}

/** The top-level states of the swarm machine none of `paths` reaches. */
export function unreachedStates(paths: readonly SwarmPath[]): string[] {
  const reached = new Set(paths.flatMap((p) => p.reaches));
  return swarmMachineStates().filter((s) => !reached.has(s as SwarmMachineState));
}
