/**
 * `describeSwarm`: the model-based tests of a swarm in one line of a vitest file (vitest is an
 * optional peer; without it `describeSwarm` throws naming it). Declares a `describe` block with one test per path ({@link swarmPaths}); each test runs its path with
 * {@link checkSwarmPath} and fails, naming the path and the invariant, when one does not hold.
 *
 * @module
 */
import type { SwarmDefinition } from '../define/swarm.js';
import { importIfInstalled, missingPackages, OPTIONAL_PEERS } from '../util/optional.js';
import { type CheckOptions, checkSwarmPath, describeFailure, type PathReport } from './check.js';
import { type PathOptions, type SwarmPath, swarmPaths, swarmMachineStates, unreachedStates } from './paths.js';
import { shapeOf } from './shape.js';

// vitest is an optional peer, loaded when installed: the rest of xswarm/testing (swarmPaths,
// checkSwarmPath, checkSwarm) works without it, under any test framework or none.
const vitest = await importIfInstalled('vitest', () => import('vitest'));

/** Options of {@link describeSwarm}: which paths, and how each is run (see `CheckOptions`). */
export interface DescribeSwarmOptions extends CheckOptions, PathOptions {
  /** The `describe` block's title; default `swarm <id>`. */
  title?: string;
  /** Each path's test timeout in ms (default 30 000). */
  testTimeoutMs?: number;
}

/** The paths of `definition` that {@link describeSwarm} and {@link checkSwarm} run. */
export function pathsOf(definition: SwarmDefinition<any, any>, options: DescribeSwarmOptions = {}): SwarmPath[] {
  return swarmPaths(shapeOf(definition, options.input, options), options);
}

/**
 * Runs every path of `definition` and returns what each found, failures included (never throws
 * for a failed invariant): the framework-neutral form of {@link describeSwarm}.
 *
 * @example
 * import { checkSwarm, describeFailure } from 'xswarm/testing';
 * const reports = await checkSwarm(planner, { paths: 'shortest', crashes: 3 });
 * for (const f of reports.flatMap((r) => r.failures)) console.error(describeFailure(f));
 */
export async function checkSwarm(definition: SwarmDefinition<any, any>, options: DescribeSwarmOptions = {}): Promise<PathReport[]> {
  const reports: PathReport[] = [];
  for (const path of pathsOf(definition, options)) reports.push(await checkSwarmPath(definition, path, options));
  return reports;
}

/**
 * Declares the model-based tests of `definition` (see the module comment and
 * docs/testing-swarms.md): one vitest test per path — each handoff target, each tool's success
 * and error, the model giving up, pause → resume, pause → stop, an external pause and an
 * external stop in the middle of a call, `maxTurns`, and as the swarm has them a child's
 * failure, each guardrail's rejection, each gated tool's approval approved and rejected, its
 * budget tripped — plus one checking that the paths reach every state of the swarm machine.
 *
 * @example
 * import { describeSwarm } from 'xswarm/testing';
 * describeSwarm(planner);
 */
export function describeSwarm(definition: SwarmDefinition<any, any>, options: DescribeSwarmOptions = {}): void {
  if (!vitest) throw missingPackages('describeSwarm()', OPTIONAL_PEERS.testing);
  const { describe, expect, it } = vitest;
  const paths = pathsOf(definition, options);
  const reached = new Set<string>();
  let ran = 0;
  describe(options.title ?? `swarm ${definition.id}`, () => {
    for (const path of paths) {
      it(
        path.name,
        async () => {
          const report = await checkSwarmPath(definition, path, options);
          for (const state of report.reached) reached.add(state);
          ran++;
          if (report.failures.length > 0) throw new Error(report.failures.map(describeFailure).join('\n'));
        },
        options.testTimeoutMs ?? 30_000,
      );
    }
    it('the paths reach every top-level state of the swarm machine', () => {
      // A swarm with no handoff never waits on one; every other state must be reached, as the
      // paths declare and as the runs showed (when every path ran: not under a -t filter).
      const handoffs = paths.some((p) => p.steps.some((s) => s.do === 'handoff'));
      const expected = swarmMachineStates().filter((s) => handoffs || s !== 'awaitingHandoff');
      expect(unreachedStates(paths).filter((s) => expected.includes(s))).toEqual([]);
      if (ran === paths.length) expect(expected.filter((s) => !reached.has(s))).toEqual([]);
    });
  });
}
