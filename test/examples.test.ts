/**
 * The examples: the activity planner through the public API on its scripted demo model, and
 * `examples/main.ts` (what `npm start` runs) as a child process.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { factOf, isFinalEvent, type Runtime, type SwarmEvent } from '../src/index.js';
import {
  activityAgents,
  activityPlanner,
  ActivityRecommendation,
  createActivityRuntime,
  demoModel,
} from '../examples/activity-planner/index.js';

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

/**
 * Runs `examples/main.ts …args` offline; resolves with its exit code and output. `npx tsx` is
 * what `npm start` does; `node --import tsx` skips npm's start-up, to keep the extra runs cheap.
 */
function runMain(launcher: 'npx' | 'node', ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  return new Promise((resolve, reject) => {
    const [command, ...prefix] = launcher === 'npx' ? ['npx', 'tsx'] : [process.execPath, '--import', 'tsx'];
    const child = spawn(command!, [...prefix, 'examples/main.ts', ...args], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('examples/main.ts (npm start)', () => {
  it('narrates the activity planner and prints its result as JSON', async () => {
    const { code, stdout, stderr } = await runMain('npx');
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('offline scripted demo');
    expect(stdout).toContain('activity-planner → weather-agent: "What is the weather forecast for Saturday?"');
    expect(stdout).toContain('activity-planner → calendar-agent:');
    expect(stdout).toContain('activity-planner → allergen-agent:');
    expect(stdout).toContain('weather-agent calls get_forecast');
    expect(stdout).toMatch(/turn 3\/10/);
    expect(stdout).not.toContain('checkpoint'); // internal events only with --verbose
    // The result is the last thing printed: pretty JSON from a line that is just "{".
    const json = stdout.slice(stdout.indexOf('\n{\n') + 1);
    expect(ActivityRecommendation.parse(JSON.parse(json)).day).toBe('Saturday');
  });

  it('takes an example name and input, and rejects unknown examples', async () => {
    const [sunday, unknown] = await Promise.all([
      runMain('node', 'activity-planner', 'Anything', 'fun', 'on', 'Sunday?', '--verbose'),
      runMain('node', 'no-such-example'),
    ]);
    expect(sunday.code, sunday.stderr).toBe(0);
    expect(sunday.stdout).toContain('checkpoint');
    expect(JSON.parse(sunday.stdout.slice(sunday.stdout.indexOf('\n{\n') + 1)).day).toBe('Sunday');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('activity-planner');
  });
});
