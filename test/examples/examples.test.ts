/**
 * The examples: the activity planner through the public API on its scripted demo model, and
 * `examples/main.ts` (what `npm start` runs) as a child process on a temporary database, with
 * the crash demo (`--crash-after-turn`, then the command it prints).
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { factOf, isFinalEvent, type Runtime, sqliteStore, type SwarmEvent } from '../../src/index.js';
import { activityAgents, activityPlanner, ActivityRecommendation, createActivityRuntime, demoModel } from '../../examples/activity-planner/index.js';
import { runCli } from '../support/cli-process.js';
import { examplesInTempFolder, printedResult } from '../support/example-process.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const agentIds = activityAgents.map((a) => a.id);

describe('activity planner', () => {
  it('consults weather, calendar and allergen agents in order and completes with a typed plan', async () => {
    // An empty environment: the demo model even where OPENAI_API_KEY happens to be set.
    const setup = createActivityRuntime({ env: {} });
    expect(setup.model).toBe(demoModel);
    expect(setup.offline).toBe(true);
    runtime = setup.runtime;
    const client = runtime.forSwarm(activityPlanner);
    await client.run('Suggest outdoor activities for Saturday');

    const events: SwarmEvent[] = [];
    for await (const e of client.events()) events.push(e);
    const result = await client.getResult();

    expect(result.status).toBe('completed');
    if (result.status !== 'completed') return;
    const plan = ActivityRecommendation.parse(result.result);
    expect(plan.day).toBe('Saturday');
    // Facts that only the tools know, passed on by the agents' answers.
    expect(plan.reasoning).toContain('13–24°C'); // get_forecast
    expect(plan.reasoning).toContain('Dentist appointment'); // check_calendar
    expect(plan.reasoning).toContain('grass pollen high'); // pollen_levels
    expect(plan.warnings.some((w) => /grass pollen/i.test(w))).toBe(true);

    const handoffs = events.flatMap((e) => factOf(e, 'agent-handoff') ?? []);
    expect(handoffs.map((h) => h.to)).toEqual(agentIds);
    expect(handoffs.every((h) => h.from === activityPlanner.id && h.request.includes('Saturday'))).toBe(true);

    const toolCalls = events.flatMap((e) => factOf(e, 'tool-call') ?? []);
    for (const [agent, toolName] of [
      ['weather-agent', 'get_forecast'],
      ['calendar-agent', 'check_calendar'],
      ['allergen-agent', 'pollen_levels'],
    ] as const) {
      expect(toolCalls.filter((c) => c.agent === agent).map((c) => c.toolName)).toEqual([toolName]);
    }

    // Agents stream their answers.
    expect(events.some((e) => e.kind === 'artifact-update' && e.artifact.name === 'stream')).toBe(true);
    const last = events.at(-1)!;
    expect(isFinalEvent(last)).toBe(true);
    expect(factOf(last, 'completed')?.result).toEqual(plan);
  });

  it('picks OpenAI when OPENAI_API_KEY is set (no request is made)', async () => {
    const setup = createActivityRuntime({ env: { OPENAI_API_KEY: 'sk-test', XSWARM_MODEL: 'gpt-test' } });
    runtime = setup.runtime;
    expect(setup.offline).toBe(false);
    expect(setup.model.name).toBe('gpt-test');
  });
});

const { runExample, newDb } = examplesInTempFolder('xswarm-examples-');

describe('examples/main.ts (npm start)', () => {
  it('narrates the activity planner and prints its result as JSON', async () => {
    const { code, stdout, stderr } = await runExample([], { launcher: 'npx' });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('offline scripted demo');
    expect(stdout).toContain('activity-planner → weather-agent: "What is the weather forecast for Saturday?"');
    expect(stdout).toContain('activity-planner → calendar-agent:');
    expect(stdout).toContain('activity-planner → allergen-agent:');
    expect(stdout).toContain('weather-agent calls get_forecast');
    expect(stdout).toMatch(/turn 3\/10/);
    expect(stdout).not.toContain('checkpoint'); // internal events only with --verbose
    // The result is the last thing printed: pretty JSON from a line that is just "{".
    expect(ActivityRecommendation.parse(printedResult(stdout)).day).toBe('Saturday');
  });

  it('takes an example name and input, and rejects unknown examples and options', async () => {
    const [sunday, unknown, option] = await Promise.all([
      runExample(['activity-planner', 'Anything', 'fun', 'on', 'Sunday?', '--verbose']),
      runExample(['no-such-example']),
      runExample(['--no-such-option']),
    ]);
    expect(sunday.code, sunday.stderr).toBe(0);
    expect(sunday.stdout).toContain('checkpoint');
    expect((printedResult(sunday.stdout) as { day: string }).day).toBe('Sunday');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('activity-planner');
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/Unknown option '--no-such-option'(.*\n)*usage: npm start/);
  });

  it('keeps its swarms in the database --db names (else XSWARM_DB)', async () => {
    const [byFlag, byEnv] = [newDb(), newDb()];
    const run = await runExample(['--db', byFlag], { db: byEnv });
    expect(run.code, run.stderr).toBe(0);
    const id = /^swarm (\S+)$/m.exec(run.stdout)![1]!;
    expect(existsSync(byEnv)).toBe(false);
    const store = sqliteStore(byFlag);
    try {
      expect((await store.list()).map((s) => [s.swarmId, s.status])).toEqual([[id, 'completed']]);
    } finally {
      await store.close();
    }
  });
});

describe('the crash demo: npm start -- --crash-after-turn N, then npm start', () => {
  it('dies by SIGKILL right after turn N is stored; the next run continues that swarm, repeating no step, and replays it', { timeout: 60_000 }, async () => {
    const db = newDb();
    const crashed = await runExample(['--crash-after-turn', '2', '--db', db]);
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const [, id, again] =
      /crash: turn 2 of swarm (\S+) is stored; killing this process with SIGKILL .*\n {2}continue it with: npm start -- (.*)\n$/.exec(crashed.stderr) ?? [];
    expect(id, crashed.stderr).toBeDefined();
    expect(again).toBe(`activity-planner --db ${db}`);
    expect(crashed.stdout).not.toMatch(/turn 3\/10|completed/);

    // The command it printed, as a user pastes it.
    const resumed = await runExample(again!.split(' '));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`continuing swarm ${id}, interrupted earlier (${db})`);
    for (const turn of [1, 2, 3, 4]) expect(resumed.stdout.split(`turn ${turn}/10 done`)).toHaveLength(2);
    for (const call of ['weather-agent calls get_forecast', 'calendar-agent calls check_calendar', 'allergen-agent calls pollen_levels']) {
      expect(resumed.stdout.split(call)).toHaveLength(2);
    }
    expect(ActivityRecommendation.parse(printedResult(resumed.stdout)).day).toBe('Saturday');

    const replayed = await runCli(['replay', id!, '--db', db]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout).toMatch(/completed\n/);
  });

  it('refuses a turn that is not a number, and --memory (a crash would lose everything)', async () => {
    const [notANumber, memory] = await Promise.all([runExample(['--crash-after-turn', 'two']), runExample(['--crash-after-turn', '2', '--memory'])]);
    expect([notANumber.code, memory.code]).toEqual([2, 2]);
    expect(notANumber.stderr).toContain('--crash-after-turn takes a turn number (1, 2, …), not "two"');
    expect(memory.stderr).toContain('--crash-after-turn needs a swarm example on SQLite');
  });
});
