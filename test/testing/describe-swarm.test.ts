/**
 * `xswarm/testing` over the example swarms (each must pass every path it derives) and over a
 * swarm with every feature a path is derived from; then over deliberately broken swarms, run
 * programmatically, whose failures must name the path and the invariant.
 */
import { describe, expect, it } from 'vitest';
import { activityBooking } from '../../examples/activity-booking/index.js';
import { activityAgents, activityPlanner } from '../../examples/activity-planner/index.js';
import { contentPipeline } from '../../examples/content-pipeline/index.js';
import { dayPlanner } from '../../examples/distributed/planner.js';
import { supportTriage } from '../../examples/support-triage/index.js';
import { taskPlanner } from '../../examples/task-planner/index.js';
import { workerSwarms } from '../../examples/team/index.js';
import { writerCritic } from '../../examples/writer-critic/index.js';
import { checkSwarm, describeFailure, describeSwarm, pathsOf } from '../../src/entries/testing.js';
import { checkout, desk, dice, throwingGuardrail } from '../support/testing-swarms.js';

describeSwarm(activityPlanner);
describeSwarm(activityBooking, { paths: 'shortest' });
describeSwarm(contentPipeline, { paths: 'shortest' });
describeSwarm(supportTriage, { paths: 'shortest' });
describeSwarm(taskPlanner);
describeSwarm(writerCritic, { paths: 'shortest' });
describeSwarm(dayPlanner, { agents: activityAgents, paths: 'shortest' });
for (const worker of workerSwarms) describeSwarm(worker, { crashes: 3 });
describeSwarm(desk);

describe('the paths derived from a definition', () => {
  it('the activity planner: each handoff, each tool ok and failing, the model giving up, pauses, an interrupted call, maxTurns', () => {
    expect(pathsOf(activityPlanner).map((p) => p.name)).toEqual([
      'answer at once',
      'handoff → weather-agent',
      'handoff → calendar-agent',
      'handoff → allergen-agent',
      'tool get_forecast (weather-agent) succeeds',
      'tool get_forecast (weather-agent) errors',
      'tool check_calendar (calendar-agent) succeeds',
      'tool check_calendar (calendar-agent) errors',
      'tool pollen_levels (allergen-agent) succeeds',
      'tool pollen_levels (allergen-agent) errors',
      'the model gives up',
      'pause → resume',
      'pause → stop',
      'external pause in the middle of a call → resume',
      'external stop in the middle of a call',
      'maxTurns (10) reached → stop',
    ]);
  });

  it('a swarm with guardrails, a gated tool, a budget, a child swarm and a remote agent gets their paths too', () => {
    const names = pathsOf(desk).map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'handoff → clerk',
        'handoff → reviewer',
        'handoff → shipping',
        'handoff → remote-agent-4',
        'child swarm shipping fails',
        'remote agent remote-agent-4 fails',
        'budget tripped → stop',
        'guardrail not-empty (input) rejects',
        'guardrail polite (response) rejects',
        'guardrail no-huge-refunds (toolCall) rejects',
        'guardrail answered (output) rejects',
        'approval of refund approved',
        'approval of refund rejected',
      ]),
    );
  });
});

describe('broken swarms are caught, naming the path and the invariant', () => {
  it('a tool that forgets its idempotency key makes its side effect again after a crash', async () => {
    const reports = await checkSwarm(checkout, {
      // The effect is keyed by nothing stable: every run of the call charges again.
      tools: { charge: (_args, ctx) => (ctx.effect(), 'charged') },
    });
    const failures = reports.flatMap((r) => r.failures);
    const messages = failures.map(describeFailure);
    expect(failures.some((f) => f.path === 'tool charge succeeds' && f.invariant === 'effects')).toBe(true);
    expect(messages).toContainEqual(
      expect.stringMatching(
        /^path "tool charge succeeds": invariant "no side effect repeated" failed: crash after commit \d+ of \d+: the call with idempotency key .+ made 2 side effects \(1 in the clean run\)$/,
      ),
    );
    // The same tool keyed by its idempotency key passes every path.
    const fixed = await checkSwarm(checkout, { tools: { charge: (_args, ctx) => (ctx.effect(ctx.idempotencyKey), 'charged') } });
    expect(fixed.flatMap((r) => r.failures).map(describeFailure)).toEqual([]);
  });

  it('a tool answering differently when it runs again is reported at its result; a deterministic override passes', async () => {
    const reports = await checkSwarm(dice, { crashes: 2 });
    const failure = reports.find((r) => r.path === 'tool roll succeeds')!.failures[0]!;
    expect(failure.invariant).toBe('crash');
    expect(describeFailure(failure)).toMatch(
      /^path "tool roll succeeds": invariant "a crash and restart continues to the same end" failed: crash after commit \d+ of \d+: the events differ from the clean run's at seq \d+: internal:tool-complete where the clean run has internal:tool-complete \(at content\)$/,
    );
    const fixed = await checkSwarm(dice, { crashes: 2, tools: { roll: () => 4 } });
    expect(fixed.flatMap((r) => r.failures).map(describeFailure)).toEqual([]);
  });

  it('a guardrail that throws fails the swarm where the path expects it to complete', async () => {
    const reports = await checkSwarm(throwingGuardrail, { crashes: 0 });
    const failed = reports.filter((r) => r.failures.length > 0);
    expect(failed.length).toBeGreaterThan(0);
    const first = failed.find((r) => r.path === 'answer at once')!.failures[0]!;
    expect(first.invariant).toBe('outcome');
    expect(describeFailure(first)).toMatch(
      /^path "answer at once": invariant "ends as the path expects" failed: it ended failed \(.*fragile-check.*\), the path expects completed$/,
    );
  });
});
