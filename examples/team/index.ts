/**
 * Team mode (seed 004): the PRD build. A product requirements document is broken into user
 * stories with dependencies; a team of database, api and frontend workers builds them, each
 * story a fresh swarm of its worker's definition. One worker stalls on its first story and is
 * respawned; the same board is then run by a team of one worker, and the example prints the
 * metrics with the speedup measured against it.
 *
 * @module
 */
import {
  createRuntime,
  defineSwarm,
  defineTeam,
  memoryStore,
  type Runtime,
  type SwarmStore,
  type TaskSpec,
  type TeamEvent,
  type TeamRunSummary,
  type TeamRunMetrics,
} from '../../src/index.js';
import { prdModel, type PrdModelOptions } from './model.js';

export { prdModel, storyOf } from './model.js';

/** The user stories of the PRD ("recipe sharing app"), dependencies first. */
export const userStories: TaskSpec[] = [
  { id: 'db-schema', subject: 'Tables for users, recipes and ratings', metadata: { type: 'database', complexity: 3 } },
  { id: 'db-seed', subject: 'Seed data for 50 recipes', metadata: { type: 'database', complexity: 1 }, dependencies: ['db-schema'] },
  { id: 'api-auth', subject: 'Sign-up and login endpoints', metadata: { type: 'api', complexity: 2 }, dependencies: ['db-schema'] },
  { id: 'api-recipes', subject: 'CRUD endpoints for recipes', metadata: { type: 'api', complexity: 3 }, dependencies: ['db-schema'] },
  { id: 'api-search', subject: 'Search recipes by ingredient', metadata: { type: 'api', complexity: 2 }, dependencies: ['api-recipes', 'db-seed'] },
  { id: 'ui-login', subject: 'Login and sign-up pages', metadata: { type: 'frontend', complexity: 2 }, dependencies: ['api-auth'] },
  { id: 'ui-recipes', subject: 'Recipe list and detail pages', metadata: { type: 'frontend', complexity: 3 }, dependencies: ['api-recipes'] },
  { id: 'ui-search', subject: 'Search page with filters', metadata: { type: 'frontend', complexity: 2 }, dependencies: ['api-search', 'ui-recipes'] },
];

const databaseWorker = defineSwarm({
  id: 'database-worker',
  description: 'Designs schemas and data',
  instructions: 'You are a database engineer. Implement the user story.',
});
const apiWorker = defineSwarm({ id: 'api-worker', description: 'Builds REST endpoints', instructions: 'You are a backend engineer. Implement the user story.' });
const frontendWorker = defineSwarm({ id: 'frontend-worker', description: 'Builds React pages', instructions: 'You are a frontend engineer. Implement the user story.' });
const generalist = defineSwarm({ id: 'generalist-worker', description: 'Does any story', instructions: 'You are a full-stack engineer. Implement the user story.' });

/** The worker definitions: what a worker process hosts when the team's workers run elsewhere (`workers.ts`). */
export const workerSwarms = [databaseWorker, apiWorker, frontendWorker];

/** How long a worker may stay silent before it is respawned, in the demo. */
const WORKER_TIMEOUT_MS = 300;

/** The PRD team: one database worker, two api and two frontend workers. */
export const prdTeam = defineTeam({
  id: 'prd-build',
  description: 'Builds a recipe sharing app from its PRD',
  workers: [
    { type: 'database', specialty: 'PostgreSQL schemas and seed data', swarm: databaseWorker },
    { type: 'api', specialty: 'REST endpoints in TypeScript', swarm: apiWorker, count: 2 },
    { type: 'frontend', specialty: 'React pages', swarm: frontendWorker, count: 2 },
  ],
  limits: { workerTimeoutMs: WORKER_TIMEOUT_MS },
});

/** The same board with one worker: the sequential baseline of the speedup. */
export const soloTeam = defineTeam({
  id: 'prd-solo',
  description: 'The PRD build by a single worker',
  workers: [{ type: 'generalist', specialty: 'everything', swarm: generalist }],
  limits: { workerTimeoutMs: WORKER_TIMEOUT_MS },
});

/** What {@link runPrdBuild} reports. */
export interface PrdBuildReport {
  team: TeamRunSummary;
  solo: TeamRunSummary;
  events: TeamEvent[];
  /** The solo run's duration divided by the team's. */
  speedup: number;
}

/** Options of {@link runPrdBuild}. */
export interface PrdBuildOptions extends PrdModelOptions {
  store?: SwarmStore;
  /** Called with every event of the team run, as it happens. */
  onEvent?: (event: TeamEvent) => void;
}

/**
 * Runs the PRD build with the team, then the same board with one worker, each on a runtime of
 * its own (same model behaviour, the stalled first attempt included), and measures the speedup.
 */
export async function runPrdBuild(options: PrdBuildOptions = {}): Promise<PrdBuildReport> {
  const runId = Date.now().toString(36);
  const events: TeamEvent[] = [];
  const team = await runBoard(prdTeam, `prd-${runId}`, options, (e) => {
    events.push(e);
    options.onEvent?.(e);
  });
  const solo = await runBoard(soloTeam, `solo-${runId}`, options);
  return { team, solo, events, speedup: solo.metrics.durationMs / Math.max(1, team.metrics.durationMs) };
}

async function runBoard(definition: typeof prdTeam, teamId: string, options: PrdBuildOptions, onEvent?: (e: TeamEvent) => void): Promise<TeamRunSummary> {
  const store = options.store ?? memoryStore();
  const runtime: Runtime = createRuntime({ model: prdModel(options), store, teams: [definition] });
  try {
    const client = runtime.forTeam(definition, teamId);
    await client.run(userStories);
    if (onEvent) for await (const event of client.events()) onEvent(event);
    return await client.wait();
  } finally {
    await runtime.close();
    if (!options.store) await store.close();
  }
}

/** One readable line for a team event, or undefined to skip it. */
export function describeTeamEvent(e: TeamEvent): string | undefined {
  const f = e.metadata;
  switch (f.type) {
    case 'team-started':
      return `team started with ${f.tasks} user stories`;
    case 'team-worker-spawned':
      return `+ ${f.workerId} (${f.workerType}) joined`;
    case 'team-worker-respawned':
      return `↻ ${f.workerId} went silent and was respawned (respawn ${f.respawns})`;
    case 'team-task-claimed':
      return `${f.workerId} ▸ ${f.taskId} (attempt ${f.attempt})`;
    case 'team-task-completed':
      return `${f.workerId} ✓ ${f.taskId}`;
    case 'team-task-failed':
      return `${f.workerId} ✗ ${f.taskId}: ${f.error}`;
    case 'team-task-released':
      return `${f.taskId} released by ${f.workerId}: ${f.reason}`;
    case 'team-escalation':
      return `⚠ ${f.taskId} escalated after ${f.failures} failures`;
    case 'team-worker-shutdown':
      return `- ${f.workerId} shut down`;
    case 'team-ended':
      return `team ${f.status}${f.reason ? `: ${f.reason}` : ''}`;
    default:
      return undefined;
  }
}

/** The metrics as printed lines. */
export function metricsLines(label: string, m: TeamRunMetrics): string[] {
  return [
    `${label}: ${m.durationMs} ms, ${m.batches} batches (avg ${Math.round(m.averageBatchMs)} ms), ${m.spawns} spawns (${m.respawns} respawns), ${m.messages} messages`,
    ...m.workers.map((w) => `  ${w.workerId.padEnd(12)} completed ${w.completed}, failed ${w.failed}, avg ${Math.round(w.avgDurationMs)} ms, respawns ${w.respawns}`),
  ];
}

/**
 * What `npm start -- team` runs: narrates the team run, prints both runs' metrics and the
 * measured speedup; resolves with the exit code.
 */
export async function runTeamExample(options: { store?: SwarmStore } = {}): Promise<number> {
  console.log('example: team (the PRD build: database, api and frontend workers on a task board; one worker stalls and is respawned)');
  console.log('model: offline scripted demo');
  const report = await runPrdBuild({
    ...(options.store ? { store: options.store } : {}),
    onEvent: (e) => {
      const line = describeTeamEvent(e);
      if (line) console.log(`[${String(e.seq).padStart(3)}] ${line}`);
    },
  });
  console.log('');
  for (const line of metricsLines('team of 5', report.team.metrics)) console.log(line);
  for (const line of metricsLines('one worker', report.solo.metrics)) console.log(line);
  console.log(
    `speedup: ${report.speedup.toFixed(2)}x (the same board with one worker: ${report.solo.metrics.durationMs} ms, with the team: ${report.team.metrics.durationMs} ms)`,
  );
  return report.team.status === 'completed' && report.solo.status === 'completed' ? 0 : 1;
}
