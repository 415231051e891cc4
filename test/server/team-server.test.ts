/**
 * Teams on `serve()`: the PRD-like team (api, frontend, database workers on a scripted model
 * that waits at a gate the test opens) driven over REST with real clients — runs, the event
 * stream over SSE (to the end, and resumed with Last-Event-ID) and WebSocket, board, summary,
 * inbox, pause/resume/stop, the escalation answer, and every refusal: 400 (a cycle, a bad body, no task),
 * 404, 405 + Allow, 409 (state, limit), 403 (foreign Origin), 401 (no token).
 */
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, scriptedModel, sqliteStore, type ModelRequest, type Runtime, type TeamEvent } from '../../src/index.js';
import { serve, type SwarmServer } from '../../src/server/index.js';
import { collect } from '../support/script.js';
import { readSse, request, Subscriber } from '../support/server-clients.js';
import { tempDirs } from '../support/temp-dirs.js';
import { until } from '../support/wait.js';
import { readTeamSnapshot } from '../../src/team/host-journal.js';

const tempDir = tempDirs();

const api = defineSwarm({ id: 'api-worker', instructions: 'You build APIs.' });
const frontend = defineSwarm({ id: 'frontend-worker', instructions: 'You build pages.' });
const database = defineSwarm({ id: 'db-worker', instructions: 'You build schemas.' });
const builders = defineTeam({
  id: 'builders',
  description: 'Builds a small web app',
  workers: [
    { type: 'database', swarm: database },
    { type: 'api', swarm: api },
    { type: 'frontend', specialty: 'React pages', swarm: frontend },
  ],
});
const tiny = defineTeam({ id: 'tiny', workers: [{ type: 'api', swarm: api }], limits: { maxTasksPerBoard: 2 } });

const BOARD = [
  { id: 'schema', subject: 'schema', metadata: { type: 'database', complexity: 2 } },
  { id: 'endpoints', subject: 'endpoints', metadata: { type: 'api', complexity: 3 }, dependencies: ['schema'] },
  { id: 'login', subject: 'login', metadata: { type: 'frontend', complexity: 2 }, dependencies: ['schema'] },
  { id: 'dashboard', subject: 'dashboard', metadata: { type: 'frontend', complexity: 3 }, dependencies: ['endpoints', 'login'] },
];

/** The task a task swarm works on (its input says `Task: <subject> …`; subjects are the ids here). */
const taskOf = (req: ModelRequest) => /Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?';

let runtime: Runtime | undefined;
let server: SwarmServer | undefined;
let openGate: () => void = () => undefined;
const sockets: Subscriber[] = [];
afterEach(async () => {
  openGate();
  for (const s of sockets.splice(0)) s.ws.terminate();
  await server?.close();
  await runtime?.close();
  server = undefined;
  runtime = undefined;
});

/**
 * Serves a runtime whose task swarms answer once the gate is open (tasks listed in `failing`
 * fail every attempt at once), so the test decides when a run can move on.
 */
async function start(options: { token?: string; failing?: string[] } = {}) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  openGate = open;
  const model = scriptedModel(async (req) => {
    const task = taskOf(req);
    if (options.failing?.includes(task)) throw new Error(`${task} broke`);
    await new Promise<void>((resolve, reject) => {
      void gate.then(resolve);
      req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true });
    });
    return { text: `built ${task}` };
  });
  runtime = createRuntime({ model, teams: [builders, tiny] });
  server = await serve(runtime, { ...(options.token ? { token: options.token } : {}), keepAliveMs: 50 });
  const url = server.url;
  const rt = runtime;
  return { url, ws: url.replace(/^http/, 'ws'), rt, open, port: Number(new URL(url).port) };
}

/** A request through node:http, where every header (Origin) is sent as given. */
function raw(port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function openSocket(url: string, headers?: Record<string, string>): Promise<Subscriber> {
  const s = await Subscriber.open(url, headers);
  sockets.push(s);
  return s;
}

const upgradeStatus = (url: string, headers?: Record<string, string>) =>
  openSocket(url, headers).then(
    () => 101,
    (e: { status?: number }) => e.status,
  );

const factTypes = (events: readonly TeamEvent[]) => events.map((e) => e.metadata.type);

/** How many team hosts a runtime keeps (its teams' private count: no door shows it). */
const hostsKept = (rt: Runtime) => (rt as unknown as { teams: { size: number } }).teams.size;

describe('teams over REST, SSE and WebSocket', () => {
  it('lists the team definitions as cards', async () => {
    const { url } = await start();
    const list = await request(url, 'GET', '/teams');
    expect(list.status).toBe(200);
    expect(list.body.map((c: { id: string }) => c.id)).toEqual(['builders', 'tiny']);
    expect(list.body[0]).toEqual({
      id: 'builders',
      description: 'Builds a small web app',
      workers: [
        { type: 'database', specialty: 'database', count: 1, swarm: 'db-worker' },
        { type: 'api', specialty: 'api', count: 1, swarm: 'api-worker' },
        { type: 'frontend', specialty: 'React pages', count: 1, swarm: 'frontend-worker' },
      ],
      limits: builders.limits,
    });
    expect((await request(url, 'GET', '/teams/tiny')).body.limits.maxTasksPerBoard).toBe(2);
  });

  it('runs a board over POST; SSE follows it to the end, Last-Event-ID resumes, WebSocket streams it; board, summary, inbox', async () => {
    const { url, ws, rt, open } = await start();
    const created = await request(url, 'POST', '/teams/builders/b1/run', { tasks: BOARD });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/teams/builders/b1');
    expect(created.body.status).toBe('running');
    expect(created.body.tasks.map((t: { id: string; status: string }) => [t.id, t.status])).toEqual(BOARD.map((t) => [t.id, 'pending']));

    // Tasks added while the run is under way join it: 200, not a new run.
    const joined = await request(url, 'POST', '/teams/builders/b1/run', { tasks: [{ id: 'docs', subject: 'docs', metadata: { type: 'api' } }] });
    expect(joined.status).toBe(200);
    expect(joined.body.tasks.map((t: { id: string }) => t.id)).toEqual(['docs']);

    const running = await request(url, 'GET', '/teams/builders/b1');
    expect(running.body).toMatchObject({ status: 'running', teamId: 'b1', counts: { total: 5 } });

    // A WebSocket subscriber from seq 2 and an SSE reader from the start, both opened mid-run.
    const sub = await openSocket(`${ws}/events?teamId=b1&definitionId=builders&since=2`);
    let connected!: () => void;
    const sseOpen = new Promise<void>((resolve) => (connected = resolve));
    const sse = readSse(`${url}/teams/builders/b1/events`, { onComment: () => connected() });
    await sseOpen;
    await sub.waitFor((frames) => frames.length > 0);
    // Nothing can finish before the gate opens: both follow the run live from here.
    expect(sub.frames.some((f) => (f as unknown as TeamEvent).metadata?.type === 'team-ended')).toBe(false);
    open();

    const streamed = await sse;
    expect(streamed.status).toBe(200);
    expect(streamed.contentType).toContain('text/event-stream');
    expect(streamed.ended).toBe(true);
    const expected = await collect(rt.forTeam('builders', 'b1').events());
    expect(expected.at(-1)).toMatchObject({ final: true, metadata: { type: 'team-ended', status: 'completed' } });
    expect(streamed.events.map((e) => e.data)).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(streamed.events.map((e) => [e.id, e.event])).toEqual(expected.map((e) => [String(e.seq), 'status-update']));

    // Reconnecting with Last-Event-ID (it wins over ?since) gets the rest only.
    const cut = expected[6]!.seq;
    const rest = await readSse(`${url}/teams/builders/b1/events?since=1`, { headers: { 'last-event-id': String(cut) } });
    expect(rest.events.map((e) => e.data)).toEqual(JSON.parse(JSON.stringify(expected.slice(7))));

    expect(await sub.closed).toMatchObject({ code: 1000 });
    expect(sub.frames).toEqual(JSON.parse(JSON.stringify(expected.filter((e) => e.seq > 2))));

    const board = await request(url, 'GET', '/teams/builders/b1/board');
    expect(board.status).toBe(200);
    expect(board.body.counts).toMatchObject({ total: 5, completed: 5 });
    expect(board.body.tasks.find((t: { id: string }) => t.id === 'dashboard')).toMatchObject({ status: 'completed', result: 'built dashboard' });

    const summary = await request(url, 'GET', '/teams/builders/b1');
    expect(summary.body).toMatchObject({ status: 'completed', counts: { completed: 5 }, blocked: [], metrics: { spawns: 3, respawns: 0 } });
    expect(summary.body.metrics.workers.map((w: { workerId: string; completed: number }) => [w.workerId, w.completed])).toEqual([
      ['database-1', 1],
      ['api-1', 2],
      ['frontend-1', 2],
    ]);

    const inbox = await request(url, 'GET', '/teams/builders/b1/inbox');
    expect(inbox.body.leader).toBe('leader');
    expect(inbox.body.members).toEqual(['leader', 'database-1', 'api-1', 'frontend-1']);
    const done = inbox.body.messages.filter((m: { type: string }) => m.type === 'task_completed');
    expect(done.map((m: { payload: { taskId: string } }) => m.payload.taskId).sort()).toEqual(['dashboard', 'docs', 'endpoints', 'login', 'schema']);
    const later = await request(url, 'GET', `/teams/builders/b1/inbox?since=${inbox.body.cursor}`);
    expect(later.body).toMatchObject({ messages: [], cursor: inbox.body.cursor });

    // One model call per task (this model reports no tokens): the team's usage counts them all.
    const usage = await request(url, 'GET', '/teams/builders/b1/usage');
    expect(usage).toMatchObject({ status: 200, body: { modelCalls: 5, inputTokens: 0, unpriced: ['scripted'] } });
  });

  it('pauses, resumes and stops a run; a command that does not fit the state is a 409', async () => {
    const { url } = await start();
    expect((await request(url, 'POST', '/teams/builders/b2/run', { tasks: BOARD })).status).toBe(201);

    const paused = await request(url, 'POST', '/teams/builders/b2/pause', { reason: 'coffee break' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ ok: true, summary: { status: 'paused', reason: 'coffee break' } });
    expect((await request(url, 'POST', '/teams/builders/b2/resume', { decision: 'maybe' })).status).toBe(400);
    const resumed = await request(url, 'POST', '/teams/builders/b2/resume', { message: 'back' });
    expect(resumed.body).toMatchObject({ ok: true, summary: { status: 'running' } });
    const notPaused = await request(url, 'POST', '/teams/builders/b2/resume', {});
    expect(notPaused.status).toBe(409);
    expect(notPaused.body.error).toContain('not paused');

    const stopped = await request(url, 'POST', '/teams/builders/b2/stop', { reason: 'enough' });
    expect(stopped.status).toBe(200);
    const summary = await until(
      'b2 to be stopped',
      () => request(url, 'GET', '/teams/builders/b2'),
      (r) => r.body.status === 'stopped',
    );
    expect(summary.body.reason).toBe('enough');
    expect((await request(url, 'POST', '/teams/builders/b2/stop', {})).status).toBe(409);

    // A stream opened on the finished team replays it and ends.
    const replay = await readSse(`${url}/teams/builders/b2/events`);
    const types = replay.events.map((e) => (e.data as unknown as TeamEvent).metadata.type);
    expect(types).toEqual(expect.arrayContaining(['team-started', 'team-paused', 'team-resumed']));
    expect(replay.events.at(-1)?.data).toMatchObject({ final: true, status: { state: 'canceled' }, metadata: { type: 'team-ended', status: 'stopped' } });
  });

  it('reports an escalation in the summary; resume with decision skip ends the run stalled', async () => {
    const { url, rt, open } = await start({ failing: ['schema'] });
    open();
    await request(url, 'POST', '/teams/builders/b3/run', { tasks: BOARD });
    const paused = await until(
      'b3 to be paused',
      () => request(url, 'GET', '/teams/builders/b3'),
      (r) => r.body.status === 'paused',
    );
    expect(paused.body.escalation).toMatchObject({ taskId: 'schema', failures: 3 });
    expect(paused.body.blocked.map((b: { taskId: string }) => b.taskId).sort()).toEqual(['dashboard', 'endpoints', 'login']);
    expect((await request(url, 'POST', '/teams/builders/b3/resume', { decision: 'skip' })).status).toBe(200);
    const stalled = await until(
      'b3 to be stalled',
      () => request(url, 'GET', '/teams/builders/b3'),
      (r) => r.body.status === 'stalled',
    );
    expect(stalled.body.counts).toMatchObject({ failed: 1, completed: 0 });
    expect(factTypes(await collect(rt.forTeam('builders', 'b3').events()))).toContain('team-escalation');
  });

  it('refuses bad requests: 400 a cycle or a bad body, 404 unknown, 405 with Allow, 409 a limit', async () => {
    const { url, ws } = await start();
    const cycle = await request(url, 'POST', '/teams/builders/c1/run', {
      tasks: [
        { id: 'a', subject: 'a', dependencies: ['b'] },
        { id: 'b', subject: 'b', dependencies: ['a'] },
      ],
    });
    expect(cycle.status).toBe(400);
    expect(cycle.body.error).toMatch(/dependency cycle: (a → b → a|b → a → b)/);
    // Nothing was created: the team never ran.
    expect((await request(url, 'GET', '/teams/builders/c1')).status).toBe(404);
    expect((await request(url, 'POST', '/teams/builders/c1/run', { tasks: 'all of them' })).status).toBe(400);
    expect((await request(url, 'POST', '/teams/builders/c1/run', { tasks: [{ id: 'x' }] })).status).toBe(400);
    expect((await request(url, 'POST', '/teams/builders/c1/run', { tasks: [{ id: 'x', subject: 'x', dependencies: ['nope'] }] })).status).toBe(400);
    expect((await request(url, 'POST', '/teams/builders/c1/run', '[1')).status).toBe(400);
    expect((await request(url, 'GET', '/teams/builders/bad%20id!')).status).toBe(400);

    const limit = await request(url, 'POST', '/teams/tiny/t1/run', { tasks: ['a', 'b', 'c'].map((id) => ({ id, subject: id })) });
    expect(limit.status).toBe(409);
    expect(limit.body.error).toContain('maxTasksPerBoard');

    expect((await request(url, 'GET', '/teams/nope')).status).toBe(404);
    expect((await request(url, 'POST', '/teams/nope/x/run', { tasks: BOARD })).status).toBe(404);
    expect((await request(url, 'GET', '/teams/builders/never-ran/events')).status).toBe(404);
    expect((await request(url, 'GET', '/teams/builders/x/y/z')).status).toBe(404);
    expect((await request(url, 'GET', '/teams/builders/x/elsewhere')).status).toBe(404);
    expect(await upgradeStatus(`${ws}/events?teamId=never-ran&definitionId=builders`)).toBe(404);
    expect(await upgradeStatus(`${ws}/events?teamId=x&definitionId=nope`)).toBe(404);
    expect(await upgradeStatus(`${ws}/events?teamId=x`)).toBe(400);

    for (const [method, path, allow] of [
      ['GET', '/teams/builders/x/run', 'POST'],
      ['POST', '/teams', 'GET'],
      ['PUT', '/teams/builders/x', 'GET, DELETE'],
      ['POST', '/teams/builders/x/board', 'GET'],
      ['GET', '/teams/builders/x/stop', 'POST'],
    ] as const) {
      const r = await request(url, method, path);
      expect([path, r.status, r.headers.get('allow')]).toEqual([path, 405, allow]);
    }
  });

  it('guards every team door with the policy: 403 a foreign Origin, 401 without the token', async () => {
    const token = 'team-token';
    const { url, ws, port } = await start({ token });
    const auth = { authorization: `Bearer ${token}` };
    const origin = { ...auth, origin: 'https://evil.example' };
    expect((await raw(port, 'GET', '/teams', origin)).status).toBe(403);
    expect((await raw(port, 'POST', '/teams/builders/p1/run', { ...origin, 'content-type': 'application/json' })).status).toBe(403);
    expect(await upgradeStatus(`${ws}/events?teamId=p1&definitionId=builders`, origin)).toBe(403);
    expect((await raw(port, 'GET', '/teams', { ...auth, origin: url })).status).toBe(200);

    expect((await request(url, 'GET', '/teams')).status).toBe(401);
    expect((await request(url, 'POST', '/teams/builders/p1/run', { tasks: BOARD })).status).toBe(401);
    expect((await request(url, 'GET', '/teams/builders/p1/events')).status).toBe(401);
    expect(await upgradeStatus(`${ws}/events?teamId=p1&definitionId=builders`)).toBe(401);
    // Nothing was started by the refused requests.
    expect((await request(url, 'GET', '/teams/builders/p1', undefined, auth)).status).toBe(404);
    expect((await request(url, 'POST', '/teams/builders/p1/run', { tasks: BOARD }, auth)).status).toBe(201);
  });

  it('answers 404 to 1000 reads of unknown teams and keeps nothing for them, nor for a refused run or stream', async () => {
    const { url, ws, rt } = await start();
    for (let i = 0; i < 1000; i++) {
      const path = `/teams/builders/ghost-${i}${['', '/board', '/inbox'][i % 3]}`;
      expect((await request(url, 'GET', path)).status).toBe(404);
    }
    expect(await upgradeStatus(`${ws}/teams/builders/ghost-ws/events`)).toBe(404);
    // A bad body, then an invalid task: refused before and by the board, nothing kept either way.
    expect((await request(url, 'POST', '/teams/builders/ghost-run/run', { tasks: 'no' })).status).toBe(400);
    expect((await request(url, 'POST', '/teams/builders/ghost-run/run', { tasks: [{ id: 'a', subject: 'a', dependencies: ['a'] }] })).status).toBe(400);
    expect((await request(url, 'POST', '/teams/builders/ghost-run/pause', {})).status).toBe(404);
    expect(hostsKept(rt)).toBe(0);
    // The team that runs is the one kept.
    expect((await request(url, 'POST', '/teams/tiny/real/run', { tasks: [{ id: 't', subject: 't', metadata: { type: 'api' } }] })).status).toBe(201);
    expect(hostsKept(rt)).toBe(1);
  });

  it('refuses an empty run with a 400 that says why; six of them hold no maxTeams slot (5), a real run still starts', async () => {
    const { url, rt } = await start();
    for (let i = 1; i <= 6; i++) {
      const empty = await request(url, 'POST', `/teams/builders/empty-${i}/run`, { tasks: [] });
      expect(empty.status).toBe(400);
      expect(empty.body.error).toBe(`team empty-${i}: a run needs at least one task`);
      expect((await request(url, 'GET', `/teams/builders/empty-${i}`)).status).toBe(404);
    }
    expect(hostsKept(rt)).toBe(0);
    const real = await request(url, 'POST', '/teams/builders/real/run', { tasks: BOARD });
    expect(real.status).toBe(201);
    expect(real.body.status).toBe('running');
    // An empty addition to the run under way is refused too, and changes nothing.
    expect((await request(url, 'POST', '/teams/builders/real/run', { tasks: [] })).status).toBe(400);
    expect((await request(url, 'GET', '/teams/builders/real/board')).body.counts.total).toBe(BOARD.length);
  });

  it('reads what another runtime on the same SQLite file ran under an id it answered 404 to, and runs it on the stored team', async () => {
    const path = join(tempDir('xswarm-team-ghost-'), 'state.db');
    const model = scriptedModel(() => ({ text: 'ok' }));
    const store = sqliteStore(path);
    try {
      runtime = createRuntime({ model, teams: [tiny], store });
      server = await serve(runtime);
      const url = server.url;
      expect((await request(url, 'GET', '/teams/tiny/ghost')).status).toBe(404);

      const other = createRuntime({ model, teams: [tiny], store: sqliteStore(path), owner: 'other' });
      const there = other.forTeam(tiny, 'ghost');
      await there.run([{ id: 't', subject: 't', metadata: { type: 'api' } }]);
      expect((await there.wait()).status).toBe('completed');
      await other.close();
      const before = (await store.load('ghost'))!;

      const read = await request(url, 'GET', '/teams/tiny/ghost');
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ status: 'completed', counts: { completed: 1 } });
      const ran = await request(url, 'POST', '/teams/tiny/ghost/run', { tasks: [{ id: 'u', subject: 'u', metadata: { type: 'api' } }] });
      expect(ran.status).toBe(201);
      // The run goes on the stored board and is written there.
      const after = await until(
        'the new run written to the stored board',
        () => store.load('ghost'),
        (r) => r?.status === 'completed' && r.revision > before.revision,
      );
      expect(readTeamSnapshot('x', after!.snapshot).state.board.tasks.map((t) => [t.id, t.status])).toEqual([
        ['t', 'completed'],
        ['u', 'completed'],
      ]);
      expect((await request(url, 'GET', '/teams/tiny/ghost')).body).toMatchObject({ status: 'completed', counts: { completed: 2 } });
    } finally {
      await server?.close();
      await runtime?.close();
      server = undefined;
      runtime = undefined;
      await store.close();
    }
  });
});
