/**
 * The agent registry against real A2A peers: our own `serve()` instances on 127.0.0.1 whose
 * swarms answer from scripted models (see `support/registry-peers.ts`).
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineAgent } from '../../src/index.js';
import { createAgentRegistry, type AgentRegistry, type AgentRegistryOptions } from '../../src/registry/index.js';
import { selectAgent } from '../../src/registry/selection.js';
import type { AgentInfo } from '../../src/registry/types.js';
import { TeamError } from '../../src/errors.js';
import { peersClosedBy, summarizeTool, tickingClock } from '../support/registry-peers.js';
import { sleep } from '../support/sleep.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const peer = peersClosedBy(cleanups);

function registry(options: AgentRegistryOptions = {}): AgentRegistry {
  const r = createAgentRegistry({ healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock(), ...options });
  cleanups.push(() => r.close());
  return r;
}

/** A plain HTTP server answering `routes[path]` as JSON (or text), 404 elsewhere. */
async function jsonServer(routes: (base: string) => Record<string, unknown>): Promise<string> {
  let base = '';
  const server: Server = createServer((req, res) => {
    const body = routes(base)[req.url ?? ''];
    if (body === undefined) return void res.writeHead(404).end('not here');
    if (typeof body === 'string') return void res.writeHead(502, { 'content-type': 'text/html' }).end(body);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return base;
}

const validCard = (endpoint: string) => ({
  name: 'proxy',
  description: 'Behind a broken proxy',
  version: '1',
  capabilities: {},
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'translate', name: 'translate', description: 'd', tags: [] }],
  supportedInterfaces: [{ url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
});

async function codeOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(TeamError);
    return { code: (e as TeamError).code, message: (e as TeamError).message };
  }
  throw new Error('expected a rejection');
}

describe('registration and card validation', () => {
  it('registers an agent by its card URL: skills from the card, healthy, with timestamps', async () => {
    const a = await peer('A', 'translator');
    const r = registry();
    const info = await r.register(a.cardUrl);
    expect(info).toMatchObject({ id: 'translator', kind: 'remote', name: 'translator', cardUrl: a.cardUrl, health: 'healthy', load: 0, order: 0 });
    expect(info.endpoint).toBe(a.cardUrl.replace('/.well-known/agent-card.json', ''));
    expect(info.skills.map((s) => s.name)).toEqual(['translator', 'translate']);
    expect(info.lastChecked).toBeGreaterThan(info.registeredAt);
    expect(info.lastHealthy).toBe(info.lastChecked);
    expect(r.agents().map((x) => x.id)).toEqual(['translator']);
    expect(r.agents({ skill: 'TRANSLATE' }).map((x) => x.id)).toEqual(['translator']);
    expect(r.agents({ skill: 'cook' })).toEqual([]);

    // The same id or the same card again is refused; another id for another card is fine.
    expect(await codeOf(r.register(a.cardUrl, { id: 'again' }))).toMatchObject({
      code: 'duplicate-agent',
      message: expect.stringContaining('already registered as "translator"'),
    });
    const b = await peer('B', 'translator');
    expect(await codeOf(r.register(b.cardUrl))).toMatchObject({
      code: 'duplicate-agent',
      message: expect.stringContaining('An agent "translator" is already registered'),
    });
    expect((await r.register(b.cardUrl, { id: 'translator-b' })).order).toBe(1);

    expect(r.unregister('translator')).toBe(true);
    expect(r.unregister('translator')).toBe(false);
    expect(r.agents().map((x) => x.id)).toEqual(['translator-b']);
  });

  it('refuses a card without required fields, naming each problem', async () => {
    const base = await jsonServer(() => ({
      '/card.json': {
        name: 'broken',
        description: 'no version, a skill without tags, no interfaces',
        capabilities: {},
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [{ id: 'translate', name: 'translate', description: 'd' }],
      },
    }));
    const r = registry();
    const { code, message } = await codeOf(r.register(`${base}/card.json`));
    expect(code).toBe('invalid-card');
    expect(message).toBe(
      `The agent card at ${base}/card.json is invalid: "version" is missing; "skills[0].tags" is missing; "supportedInterfaces" is missing (and there is no v0.3 "url")`,
    );
    expect(r.agents()).toEqual([]);
  });

  it('refuses an unreachable card, and registers a card whose agent does not speak JSON-RPC as unhealthy', async () => {
    const base = await jsonServer((b) => ({ '/card.json': validCard(`${b}/rpc`), '/rpc': '<html>Bad gateway</html>' }));
    const r = registry();
    const missing = await codeOf(r.register(`${base}/nope.json`));
    expect(missing).toEqual({ code: 'card-unreachable', message: `The agent card at ${base}/nope.json could not be read: HTTP 404 Not Found` });

    const info = await r.register(`${base}/card.json`);
    expect(info.health).toBe('unhealthy');
    expect(info.lastError).toBe(`${base}/rpc answered HTTP 502 without JSON-RPC: <html>Bad gateway</html>`);
    expect(info.lastHealthy).toBeUndefined();
    expect(r.select('translate')).toBeUndefined();
  });

  it('registers a local agent definition: skills from its id, description and tools; tasks run in-process', async () => {
    const r = registry();
    const writer = defineAgent({ id: 'writer', description: 'Writes and summarizes', instructions: 'Write.', tools: [summarizeTool] });
    const info = r.registerLocal(writer, async (message) => `local: ${message}`);
    expect(info).toMatchObject({ id: 'writer', kind: 'local', health: 'healthy' });
    expect(info.skills).toEqual([
      { id: 'writer', name: 'writer', description: 'Writes and summarizes', tags: ['agent'] },
      { id: 'tool:summarize', name: 'summarize', description: 'Summarizes text', tags: ['tool'] },
    ]);
    const task = r.dispatch({ id: 't1', skill: 'summarize', message: 'the news' });
    expect(await r.wait(task.id)).toMatchObject({ state: 'completed', agentId: 'writer', result: 'local: the news' });
    expect(await r.message('writer', 'hi')).toBe('local: hi');
  });
});

describe('health checks', () => {
  it('a stopped agent turns unhealthy (periodic check) and is skipped; restarted, it is healthy and selected again', async () => {
    const a = await peer('A', 'translator-a');
    const b = await peer('B', 'translator-b');
    const r = registry({ healthIntervalMs: 100, timeoutMs: 1000 });
    await r.register(a.cardUrl);
    await r.register(b.cardUrl);
    expect(r.select('translate')?.id).toBe('translator-a');

    await a.stop();
    await vi.waitFor(() => expect(r.agent('translator-a')?.health).toBe('unhealthy'), { timeout: 5000, interval: 50 });
    const down = r.agent('translator-a')!;
    // Refused at connect ("could not be read") or reset mid-answer ("did not answer"), as the stop lands.
    expect(down.lastError).toMatch(/(could not be read|did not answer): fetch failed/);
    expect(down.lastChecked).toBeGreaterThan(down.lastHealthy!);
    expect(r.select('translate')?.id).toBe('translator-b');
    const skipped = r.dispatch({ id: 'while-down', skill: 'translate', message: 'hola' });
    expect(await r.wait(skipped.id)).toMatchObject({ state: 'completed', agentId: 'translator-b', result: 'B did: hola' });

    await a.restart();
    await vi.waitFor(() => expect(r.agent('translator-a')?.health).toBe('healthy'), { timeout: 5000, interval: 50 });
    const up = r.agent('translator-a')!;
    expect(up.lastHealthy).toBe(up.lastChecked);
    expect(up.lastError).toBeUndefined();
    const back = r.dispatch({ id: 'after-restart', skill: 'translate', message: 'ciao' });
    expect(await r.wait(back.id)).toMatchObject({ state: 'completed', agentId: 'translator-a', result: 'A did: ciao' });
  });

  it('checks on demand; close() stops the periodic checks', async () => {
    const a = await peer('A', 'translator');
    const r = createAgentRegistry({ healthIntervalMs: 50, timeoutMs: 1000 });
    await r.register(a.cardUrl);
    await a.stop();
    const [checked] = await r.checkHealth('translator');
    expect(checked).toMatchObject({ health: 'unhealthy' });
    await a.restart();
    expect((await r.checkHealth())[0]).toMatchObject({ health: 'healthy' });
    await r.close();
    const frozen = r.agent('translator')!.lastChecked;
    await a.stop();
    await sleep(200);
    expect(r.agent('translator')!).toMatchObject({ health: 'healthy', lastChecked: frozen });
    expect(() => r.dispatch({ skill: 'translate', message: 'x' })).toThrow(expect.objectContaining({ code: 'registry-closed' }));
    expect(await codeOf(r.checkHealth('nobody'))).toMatchObject({ code: 'unknown-agent' });
  });
});

describe('selection by skill and load', () => {
  it('the less loaded agent wins; ties go to the first registered', async () => {
    const a = await peer('A', 'translator-a');
    const b = await peer('B', 'translator-b');
    const c = await peer('C', 'summarizer', [summarizeTool]);
    const r = registry();
    await r.register(a.cardUrl);
    await r.register(b.cardUrl);
    await r.register(c.cardUrl);

    // Tie at load 0: the first registered.
    expect(r.select('Translate')?.id).toBe('translator-a');
    expect(r.select('summarize')?.id).toBe('summarizer');
    expect(r.select('tool')?.id).toBe('translator-a'); // a tag
    expect(r.select('cook')).toBeUndefined();

    const release = a.model.hold('long one');
    const first = r.dispatch({ id: 'first', skill: 'translate', message: 'long one' });
    await vi.waitFor(() => expect(r.task(first.id)?.state).toBe('working'));
    expect(r.task(first.id)?.agentId).toBe('translator-a');
    expect(r.agent('translator-a')?.load).toBe(1);
    // A is busy: B is less loaded.
    expect(r.select('translate')?.id).toBe('translator-b');
    const second = r.dispatch({ id: 'second', skill: 'translate', message: 'short one' });
    expect(await r.wait(second.id)).toMatchObject({ state: 'completed', agentId: 'translator-b', result: 'B did: short one' });

    release();
    expect(await r.wait(first.id)).toMatchObject({ state: 'completed', agentId: 'translator-a', result: 'A did: long one' });
    expect(r.agents().map((x) => x.load)).toEqual([0, 0, 0]);
    // Idle again: back to the tie-break.
    const third = r.dispatch({ id: 'third', skill: 'translate', message: 'again' });
    expect(await r.wait(third.id)).toMatchObject({ agentId: 'translator-a' });

    const none = r.dispatch({ id: 'none', skill: 'cook', message: 'soup' });
    expect(await r.wait(none.id)).toMatchObject({ state: 'failed', error: 'No healthy agent has the skill "cook"' });
  });

  it('selectAgent is a pure function of health, skills, load and order', () => {
    const agent = (id: string, order: number, load: number, health: AgentInfo['health'] = 'healthy'): AgentInfo => ({
      id,
      kind: 'remote',
      name: id,
      description: id,
      skills: [{ id: 'x', name: 'X', description: '', tags: ['Writing'] }],
      health,
      load,
      order,
      registeredAt: 0,
    });
    expect(selectAgent([agent('b', 1, 0), agent('a', 0, 0)], 'writing')?.id).toBe('a');
    expect(selectAgent([agent('a', 0, 2), agent('b', 1, 1)], 'x')?.id).toBe('b');
    expect(selectAgent([agent('a', 0, 0, 'unhealthy'), agent('b', 1, 5)], 'x')?.id).toBe('b');
    expect(selectAgent([agent('a', 0, 0, 'unknown')], 'x')).toBeUndefined();
  });
});

describe('dispatch with dependencies', () => {
  it('tracks submitted → working → completed with timestamps; a blocking task waits for its dependency', async () => {
    const a = await peer('A', 'translator');
    const r = registry();
    await r.register(a.cardUrl);
    const release = a.model.hold('step 1');
    const t1 = r.dispatch({ id: 't1', skill: 'translate', message: 'step 1' });
    const t2 = r.dispatch({ id: 't2', skill: 'translate', message: 'step 2', dependsOn: [{ taskId: 't1', kind: 'blocking' }] });
    expect(t2).toMatchObject({ state: 'submitted', dependsOn: [{ taskId: 't1', kind: 'blocking' }] });
    await vi.waitFor(() => expect(r.task('t1')?.state).toBe('working'));
    await sleep(100);
    expect(r.task('t2')?.state).toBe('submitted');
    expect(a.model.seen).toEqual(['step 1']);

    release();
    const done2 = await r.wait(t2.id);
    const done1 = r.task(t1.id)!;
    expect(done2).toMatchObject({ state: 'completed', result: 'A did: step 2' });
    expect(a.model.seen).toEqual(['step 1', 'step 2']);
    expect(done2.startedAt).toBeGreaterThan(done1.endedAt!);
    for (const t of [done1, done2]) {
      expect(t.history.map((h) => h.state)).toEqual(['submitted', 'working', 'completed']);
      expect(t.history.map((h) => h.at)).toEqual([t.submittedAt, t.startedAt, t.endedAt]);
      expect(t.submittedAt < t.startedAt! && t.startedAt! < t.endedAt!).toBe(true);
    }
    expect(r.tasks().map((t) => t.id)).toEqual(['t1', 't2']);
  });

  it('a failed blocking dependency fails its dependents (transitively); an optional one does not block', async () => {
    const a = await peer('A', 'translator');
    const r = registry();
    await r.register(a.cardUrl);
    const bad = r.dispatch({ id: 'bad', skill: 'translate', message: 'FAIL this' });
    const blocked = r.dispatch({ id: 'blocked', skill: 'translate', message: 'never sent', dependsOn: [{ taskId: 'bad', kind: 'blocking' }] });
    const chained = r.dispatch({ id: 'chained', skill: 'translate', message: 'never sent either', dependsOn: [{ taskId: 'blocked', kind: 'blocking' }] });
    const optional = r.dispatch({ id: 'optional', skill: 'translate', message: 'anyway', dependsOn: [{ taskId: 'bad', kind: 'optional' }] });

    expect(await r.wait(bad.id)).toMatchObject({ state: 'failed', agentId: 'translator', error: 'The remote agent "translator" failed: A cannot do "FAIL this"' });
    expect(await r.wait(blocked.id)).toMatchObject({
      state: 'failed',
      error: 'Blocking dependency "bad" failed: The remote agent "translator" failed: A cannot do "FAIL this"',
    });
    const chainedDone = await r.wait(chained.id);
    expect(chainedDone.error).toMatch(/^Blocking dependency "blocked" failed: Blocking dependency "bad" failed/);
    expect(chainedDone.history.map((h) => h.state)).toEqual(['submitted', 'failed']);
    const optionalDone = await r.wait(optional.id);
    expect(optionalDone).toMatchObject({ state: 'completed', result: 'A did: anyway' });
    expect(optionalDone.startedAt).toBeGreaterThan(r.task('bad')!.endedAt!);
    expect(a.model.seen).not.toContain('never sent');
    expect(a.model.seen).not.toContain('never sent either');
  });

  it('a parallel dependency runs at once, next to the task it names', async () => {
    const a = await peer('A', 'translator-a');
    const b = await peer('B', 'translator-b');
    const r = registry();
    await r.register(a.cardUrl);
    await r.register(b.cardUrl);
    const release = a.model.hold('slow');
    r.dispatch({ id: 'slow', skill: 'translate', message: 'slow' });
    const side = r.dispatch({ id: 'side', skill: 'translate', message: 'side', dependsOn: [{ taskId: 'slow', kind: 'parallel' }] });
    expect(await r.wait(side.id)).toMatchObject({ state: 'completed', agentId: 'translator-b' });
    expect(r.task('slow')?.state).toBe('working');
    release();
    expect(await r.wait('slow')).toMatchObject({ state: 'completed' });
  });

  it('refuses bad dispatches with coded errors', async () => {
    const r = registry();
    r.registerLocal(defineAgent({ id: 'local', instructions: 'x' }), async (m) => m);
    r.dispatch({ id: 'x', agent: 'local', message: 'm' });
    const refused = (spec: Parameters<AgentRegistry['dispatch']>[0]) => {
      try {
        r.dispatch(spec);
      } catch (e) {
        return `${(e as TeamError).code}: ${(e as TeamError).message}`;
      }
      return 'accepted';
    };
    expect(refused({ id: 'x', skill: 's', message: 'm' })).toBe('duplicate-task: A task with id "x" already exists');
    expect(refused({ id: 'y', message: 'm' })).toBe('invalid-task: Task "y" names neither a skill nor an agent');
    expect(refused({ id: 'y', skill: 's', message: 'm', dependsOn: [{ taskId: 'nope', kind: 'blocking' }] })).toBe(
      'unknown-task: Task "y" depends on unknown task "nope"',
    );
    expect(refused({ id: 'y', skill: 's', message: 'm', dependsOn: [{ taskId: 'x', kind: 'soon' as 'blocking' }] })).toMatch(
      /^invalid-task: .*"soon" is not one of blocking, parallel, optional/,
    );
    expect(refused({ id: 'y', agent: 'ghost', message: 'm' })).toBe('unknown-agent: Task "y" names agent "ghost", which is not registered');
    expect(await codeOf(r.wait('nope'))).toMatchObject({ code: 'unknown-task' });
    expect(await codeOf(r.message('nobody', 'hi'))).toMatchObject({ code: 'unknown-agent' });
  });

  it('snapshots as JSON and restores: ended tasks kept, agents known again', async () => {
    const a = await peer('A', 'translator');
    const r = registry({ id: 'reg-1' });
    await r.register(a.cardUrl);
    await r.wait(r.dispatch({ id: 'done', skill: 'translate', message: 'one' }).id);
    const snapshot = JSON.parse(JSON.stringify(r.snapshot()));
    await r.close();

    const restored = registry({ restore: snapshot });
    expect(restored.id).toBe('reg-1');
    expect(restored.task('done')).toMatchObject({ state: 'completed', result: 'A did: one' });
    expect(restored.agent('translator')).toMatchObject({ health: 'healthy', load: 0 });
    const next = restored.dispatch({ id: 'next', skill: 'translate', message: 'two', dependsOn: [{ taskId: 'done', kind: 'blocking' }] });
    expect(await restored.wait(next.id)).toMatchObject({ state: 'completed', result: 'A did: two' });
  });
});
