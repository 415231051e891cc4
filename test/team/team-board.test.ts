/**
 * The team's task board and its limits: creation (batches all or nothing, unknown
 * dependencies, cycles named, maxTasksPerBoard), atomic claims, completion by the owner only,
 * three failures escalating with their dependents reported blocked, releases, and a board
 * rebuilt from its JSON snapshot behaving exactly like the original.
 */
import { describe, expect, it } from 'vitest';
import { createBoard, restoreBoard, type BoardFact, type TaskBoard, type TaskSpec } from '../../src/team/board.js';
import type { TeamError } from '../../src/errors.js';
import { checkLimit, DEFAULT_TEAM_LIMITS, resolveTeamLimits, type TeamLimits } from '../../src/define/team-limits.js';
import { teamError } from '../support/team-error.js';

/** A board on a clock the test moves, with its facts recorded. */
function setup(limits: Partial<TeamLimits> = {}) {
  const clock = { now: 1_000 };
  const board = createBoard({ id: 'team-a', limits, clock: () => clock.now });
  const facts: BoardFact[] = [];
  board.onFact((fact) => facts.push(fact));
  return { board, clock, facts };
}

const spec = (id: string, dependencies: string[] = [], type?: string): TaskSpec => ({
  id,
  subject: `do ${id}`,
  dependencies,
  ...(type ? { metadata: { type } } : {}),
});

describe('team limits', () => {
  it('defaults to the seed values and takes overrides', () => {
    expect(resolveTeamLimits()).toEqual({
      maxWorkers: 10,
      maxTeams: 5,
      maxTasksPerBoard: 100,
      workerTimeoutMs: 600_000,
      inboxRetentionMs: 3_600_000,
      maxAttempts: 3,
    });
    expect(resolveTeamLimits({ maxWorkers: 2, inboxRetentionMs: 5 })).toEqual({ ...DEFAULT_TEAM_LIMITS, maxWorkers: 2, inboxRetentionMs: 5 });
  });

  it.each([
    ['maxWorkers', 0],
    ['maxTeams', -1],
    ['maxTasksPerBoard', 1.5],
    ['workerTimeoutMs', Number.NaN],
    ['inboxRetentionMs', Infinity],
    ['maxAttempts', '3'],
  ])('refuses %s = %s, naming the limit', (name, value) => {
    const error = teamError(() => resolveTeamLimits({ [name]: value } as Partial<TeamLimits>), 'invalid-limit');
    expect(error.message).toContain(`team limit ${name} must be a positive integer`);
  });

  it('refuses an unknown limit name (a typo would keep the default silently)', () => {
    const error = teamError(() => resolveTeamLimits({ maxWorker: 3 } as unknown as Partial<TeamLimits>), 'invalid-limit');
    expect(error.message).toContain('unknown team limit "maxWorker"');
  });

  it('checkLimit allows exactly the limit and refuses one over', () => {
    const limits = resolveTeamLimits({ maxWorkers: 3 });
    expect(() => checkLimit(limits, 'maxWorkers', 2, 1)).not.toThrow();
    expect(() => checkLimit(limits, 'maxWorkers', 0, 3)).not.toThrow();
    const error = teamError(() => checkLimit(limits, 'maxWorkers', 3), 'limit');
    expect(error.message).toBe('maxWorkers is 3: 3 exist, adding 1 would make 4');
  });

  it('a board refuses invalid limits when it is created', () => {
    teamError(() => createBoard({ id: 'b', limits: { maxTasksPerBoard: 0 } }), 'invalid-limit');
  });
});

describe('task board: create', () => {
  it('creates a batch with its fields, timestamps and facts, dependencies in any order', () => {
    const { board, facts } = setup();
    // b is listed before the task it depends on.
    const created = board.create([
      { id: 'b', subject: 'API', description: 'the endpoints', metadata: { type: 'api', complexity: 3, story: 'US-2' }, dependencies: ['a'] },
      { id: 'a', subject: 'Schema' },
    ]);
    expect(created.map((task) => task.id)).toEqual(['b', 'a']);
    expect(board.task('b')).toEqual({
      id: 'b',
      subject: 'API',
      description: 'the endpoints',
      metadata: { type: 'api', complexity: 3, story: 'US-2' },
      dependencies: ['a'],
      status: 'pending',
      attempts: 0,
      failures: 0,
      createdAt: 1_000,
      updatedAt: 1_000,
    });
    expect(facts.map((fact) => [fact.type, fact.taskId, fact.version])).toEqual([
      ['task-created', 'b', 1],
      ['task-created', 'a', 1],
    ]);
    expect(board.version).toBe(1);
  });

  it('generates ids that skip ids in use', () => {
    const { board } = setup();
    board.create([{ id: 'task-1', subject: 'mine' }, { subject: 'first generated' }, { subject: 'second generated' }]);
    expect(board.tasks().map((task) => task.id)).toEqual(['task-1', 'task-2', 'task-3']);
  });

  it('keeps a JSON copy of metadata, detached from the caller', () => {
    const { board } = setup();
    const metadata = { type: 'frontend', tags: ['x'] };
    board.create({ id: 'a', subject: 'A', metadata });
    metadata.tags.push('mutated');
    expect(board.task('a')!.metadata).toEqual({ type: 'frontend', tags: ['x'] });
  });

  it('refuses unknown dependencies, duplicates and invalid specs, adding nothing of the batch', () => {
    const { board, facts } = setup();
    board.create(spec('a'));
    const before = board.snapshot();
    expect(teamError(() => board.create([spec('b', ['a']), spec('c', ['zz'])]), 'unknown-dependency').message).toBe('task c depends on unknown task zz');
    expect(teamError(() => board.create([spec('b'), spec('a')]), 'duplicate-task').message).toBe('task a already exists on board team-a');
    teamError(() => board.create([spec('b'), spec('b')]), 'duplicate-task');
    expect(teamError(() => board.create([spec('b'), { id: 'c', subject: '' }]), 'invalid-task').message).toContain('task 2 of the batch is invalid: subject');
    teamError(() => board.create({ id: 'a:b', subject: 'colon' }), 'invalid-task');
    teamError(() => board.create({ id: 'x', subject: 'x', extra: 1 } as unknown as TaskSpec), 'invalid-task');
    expect(board.snapshot()).toEqual(before);
    expect(facts).toHaveLength(1);
  });

  it('refuses a cycle with a message naming it, adding nothing', () => {
    const { board } = setup();
    board.create(spec('root'));
    const error = teamError(() => board.create([spec('a', ['root', 'b']), spec('b', ['c']), spec('c', ['a']), spec('d')]), 'cycle');
    expect(error.message).toBe('dependency cycle: a → b → c → a');
    expect(teamError(() => board.create(spec('self', ['self'])), 'cycle').message).toBe('dependency cycle: self → self');
    expect(board.tasks().map((task) => task.id)).toEqual(['root']);
    // A diamond is not a cycle.
    board.create([spec('top'), spec('left', ['top']), spec('right', ['top']), spec('bottom', ['left', 'right'])]);
    expect(board.counts().total).toBe(5);
  });

  it('holds exactly maxTasksPerBoard tasks and refuses one more, the whole batch', () => {
    const { board, facts } = setup({ maxTasksPerBoard: 5 });
    board.create([spec('t1'), spec('t2'), spec('t3')]);
    const before = board.snapshot();
    const error = teamError(() => board.create([spec('t4'), spec('t5'), spec('t6')]), 'limit');
    expect(error.message).toBe('maxTasksPerBoard is 5: 3 exist, adding 3 would make 6');
    expect(board.snapshot()).toEqual(before);
    expect(facts).toHaveLength(3);
    board.create([spec('t4'), spec('t5')]);
    expect(board.counts().total).toBe(5);
    teamError(() => board.create(spec('t6')), 'limit');
    expect(board.counts().total).toBe(5);
  });

  it('the default limit is 100 tasks', () => {
    const { board } = setup();
    board.create(Array.from({ length: 100 }, (_, i) => spec(`t${i}`)));
    teamError(() => board.create(spec('one-more')), 'limit');
  });
});

describe('task board: claim', () => {
  it('claims only pending, unowned tasks whose dependencies are completed, with an attempt key', () => {
    const { board, facts, clock } = setup();
    board.create([spec('a'), spec('b', ['a'])]);
    expect(teamError(() => board.claim('w1', 'b'), 'not-claimable').message).toBe('task b cannot be claimed: waiting on a');
    clock.now = 2_000;
    const claim = board.claim('w1', 'a');
    expect(claim).toMatchObject({ attempt: 1, key: 'team-a:a:1', task: { id: 'a', status: 'in_progress', owner: 'w1', attempts: 1, claimedAt: 2_000 } });
    expect(facts.at(-1)).toEqual({ type: 'task-claimed', boardId: 'team-a', taskId: 'a', version: 2, at: 2_000, owner: 'w1', attempt: 1, key: 'team-a:a:1' });
    expect(teamError(() => board.claim('w2', 'a'), 'not-claimable').message).toBe('task a cannot be claimed: it is in_progress (held by w1)');
    teamError(() => board.claim('w1', 'nope'), 'unknown-task');
    board.complete('a', 'w1');
    expect(board.claim('w2', 'b').key).toBe('team-a:b:1');
  });

  it('is atomic: of two claimers of one task exactly one wins', () => {
    const { board } = setup();
    board.create(spec('only'));
    const outcomes = ['w1', 'w2'].map((worker) => {
      try {
        return board.claim(worker, 'only').task.owner;
      } catch (error) {
        return (error as TeamError).code;
      }
    });
    expect(outcomes).toEqual(['w1', 'not-claimable']);
    // claimNext: the second claimer finds nothing rather than the same task.
    board.create(spec('next'));
    expect(board.claimNext('w3')?.task.id).toBe('next');
    expect(board.claimNext('w4')).toBeUndefined();
    expect(board.task('next')!.owner).toBe('w3');
  });

  it('claimNext takes the first matching task in creation order, by type', () => {
    const { board } = setup();
    board.create([spec('db', [], 'database'), spec('ui1', [], 'frontend'), spec('api', ['db'], 'api'), spec('ui2', [], 'frontend'), spec('any')]);
    expect(board.claimable({ types: ['frontend'] }).map((task) => task.id)).toEqual(['ui1', 'ui2', 'any']);
    expect(board.claimNext('fe', { types: ['frontend'] })?.task.id).toBe('ui1');
    expect(board.claimNext('fe2', { types: ['frontend'] })?.task.id).toBe('ui2');
    expect(board.claimNext('api', { types: ['api'] })?.task.id).toBe('any');
    expect(board.claimNext('api', { types: ['api'] })).toBeUndefined();
    expect(board.claimNext('dba', { types: ['database'] })?.task.id).toBe('db');
    board.complete('db', 'dba');
    expect(board.claimNext('api', { types: ['api'] })?.task.id).toBe('api');
  });
});

describe('task board: complete, fail, release', () => {
  it('completes only by its owner, while in progress, for the current attempt', () => {
    const { board, facts, clock } = setup();
    board.create([spec('a'), spec('b', ['a'])]);
    teamError(() => board.complete('a', 'w1'), 'wrong-state');
    board.claim('w1', 'a');
    expect(teamError(() => board.complete('a', 'w2'), 'not-owner').message).toBe('task a is held by w1, not w2');
    teamError(() => board.complete('a', 'w1', { attempt: 2 }), 'stale-attempt');
    clock.now = 3_000;
    const done = board.complete('a', 'w1', { result: { files: ['schema.sql'] }, attempt: 1 });
    expect(done).toMatchObject({ status: 'completed', result: { files: ['schema.sql'] }, updatedAt: 3_000 });
    expect(done.owner).toBeUndefined();
    expect(facts.at(-1)).toMatchObject({ type: 'task-completed', taskId: 'a', owner: 'w1', attempt: 1, result: { files: ['schema.sql'] } });
    teamError(() => board.complete('a', 'w1'), 'wrong-state');
    expect(board.claimable().map((task) => task.id)).toEqual(['b']);
  });

  it('a failure goes back to pending; the third escalates and is not retried; dependents are blocked', () => {
    const { board, facts } = setup();
    // a ← b ← c (transitively blocked), d independent, e depends on both a and d.
    board.create([spec('a'), spec('b', ['a']), spec('c', ['b']), spec('d'), spec('e', ['d', 'a'])]);
    for (const attempt of [1, 2]) {
      const claim = board.claim('w1', 'a');
      expect(claim.attempt).toBe(attempt);
      // What the leader is told before the failure is recorded: the board's own figures.
      expect(board.failureOutcome('a')).toEqual({ failures: attempt, escalates: false });
      const task = board.fail('a', 'w1', { error: `boom ${attempt}`, attempt });
      expect(task).toMatchObject({ status: 'pending', failures: attempt, attempts: attempt, lastError: `boom ${attempt}` });
      expect(task.owner).toBeUndefined();
    }
    expect(board.blocked()).toEqual([]);
    board.claim('w2', 'a');
    expect(board.failureOutcome('a')).toEqual({ failures: 3, escalates: true });
    const escalated = board.fail('a', 'w2', { error: 'boom 3' });
    expect(escalated).toMatchObject({ status: 'escalated', failures: 3, attempts: 3, lastError: 'boom 3' });
    expect(facts.slice(-2).map((fact) => fact.type)).toEqual(['task-failed', 'task-escalated']);
    expect(facts.at(-2)).toMatchObject({ owner: 'w2', attempt: 3, failures: 3, retry: false, error: 'boom 3' });
    expect(facts.at(-1)).toMatchObject({ taskId: 'a', failures: 3, lastError: 'boom 3' });
    // Never retried on its own.
    expect(teamError(() => board.claim('w1', 'a'), 'not-claimable').message).toBe('task a cannot be claimed: it is escalated');
    expect(board.claimNext('w1')?.task.id).toBe('d');
    board.complete('d', 'w1');
    expect(board.blocked()).toEqual([
      { taskId: 'b', blockedBy: ['a'] },
      { taskId: 'c', blockedBy: ['a'] },
      { taskId: 'e', blockedBy: ['a'] },
    ]);
    expect(teamError(() => board.claim('w1', 'c'), 'not-claimable').message).toBe('task c cannot be claimed: blocked by a upstream');
    expect(teamError(() => board.claim('w1', 'e'), 'not-claimable').message).toBe('task e cannot be claimed: blocked by a (escalated)');
    expect(board.counts()).toEqual({ total: 5, pending: 3, in_progress: 0, completed: 1, failed: 0, escalated: 1, claimable: 0, blocked: 3 });
    expect(board.isSettled()).toBe(true);
    expect(board.isDone()).toBe(false);

    // A human retries: a fresh round, attempt keys keep counting.
    expect(board.retry('a')).toMatchObject({ status: 'pending', failures: 0, attempts: 3 });
    expect(board.blocked()).toEqual([]);
    expect(board.claim('w3', 'a').key).toBe('team-a:a:4');
    board.complete('a', 'w3');
    expect(board.claimable().map((task) => task.id)).toEqual(['b', 'e']);
  });

  it('blockedBy lists every failed task upstream, in board order', () => {
    const { board } = setup({ maxAttempts: 1 });
    board.create([spec('x'), spec('y'), spec('mid', ['y']), spec('z', ['mid', 'x'])]);
    board.claim('w', 'y');
    board.fail('y', 'w', { error: 'e' });
    board.claim('w', 'x');
    board.fail('x', 'w', { error: 'e' });
    expect(board.task('x')!.status).toBe('escalated');
    expect(board.blocked()).toEqual([
      { taskId: 'mid', blockedBy: ['y'] },
      { taskId: 'z', blockedBy: ['x', 'y'] },
    ]);
  });

  it('maxAttempts is configurable, retry: false fails for good, and abandon ends an escalation', () => {
    const { board, facts } = setup({ maxAttempts: 1 });
    board.create([spec('a'), spec('b'), spec('c', ['b'])]);
    board.claim('w', 'a');
    expect(board.fail('a', 'w', { error: 'once' }).status).toBe('escalated');
    board.claim('w', 'b');
    expect(board.fail('b', 'w', { error: 'bad input', retry: false })).toMatchObject({ status: 'failed', failures: 1 });
    expect(facts.at(-1)).toMatchObject({ type: 'task-failed', taskId: 'b', retry: false });
    expect(board.blocked()).toEqual([{ taskId: 'c', blockedBy: ['b'] }]);
    teamError(() => board.abandon('b'), 'wrong-state');
    expect(board.abandon('a', 'not worth it').status).toBe('failed');
    expect(facts.at(-1)).toMatchObject({ type: 'task-abandoned', taskId: 'a', reason: 'not worth it' });
    teamError(() => board.retry('c'), 'wrong-state');
    expect(board.isSettled()).toBe(true);
  });

  it('a release returns the task to pending without counting a failure; the old attempt is stale', () => {
    const { board, facts } = setup();
    board.create([spec('a'), spec('b'), spec('c')]);
    const first = board.claim('w1', 'a');
    teamError(() => board.release('a', 'w2'), 'not-owner');
    const released = board.release('a', 'w1', { reason: 'worker timed out' });
    expect(released).toMatchObject({ status: 'pending', failures: 0, attempts: 1 });
    expect(released.owner).toBeUndefined();
    expect(facts.at(-1)).toMatchObject({ type: 'task-released', taskId: 'a', owner: 'w1', attempt: 1, reason: 'worker timed out' });
    // The same worker id (a respawn) claims again: a new attempt, a new key.
    const second = board.claim('w1', 'a');
    expect(second.key).toBe('team-a:a:2');
    expect(teamError(() => board.complete('a', 'w1', { attempt: first.attempt }), 'stale-attempt').message).toBe('attempt 1 of task a is over; attempt 2 is current');
    board.complete('a', 'w1', { attempt: second.attempt });

    board.claim('w2', 'b');
    board.claim('w2', 'c');
    expect(board.releaseAll('w2', 'heartbeat missed').map((task) => task.id)).toEqual(['b', 'c']);
    expect(board.counts()).toMatchObject({ pending: 2, in_progress: 0, claimable: 2 });
    expect(board.isSettled()).toBe(false);
    for (const id of ['b', 'c']) {
      board.claim('w3', id);
      board.complete(id, 'w3');
    }
    expect(board.isDone()).toBe(true);
    expect(board.isSettled()).toBe(true);
  });
});

describe('task board: snapshot and restore', () => {
  /** The same operations, on any board; returns what they returned. */
  function drive(board: TaskBoard) {
    const out: unknown[] = [];
    out.push(board.claimNext('w1')?.key);
    out.push(board.fail('a', 'w1', { error: 'again' }).status);
    out.push(board.claimNext('w2', { types: ['api'] })?.key);
    out.push(board.claimNext('w3')?.key);
    out.push(board.create({ subject: 'later', dependencies: ['c'] })[0]!.id);
    out.push(board.blocked());
    return out;
  }

  it('a board rebuilt from its JSON snapshot equals the original and behaves the same', () => {
    const clock = { now: 5_000 };
    const board = createBoard({ id: 'team-a', limits: { maxAttempts: 2, maxTasksPerBoard: 10 }, clock: () => clock.now });
    board.create([spec('a', [], 'api'), spec('b', ['a'], 'api'), spec('c', [], 'frontend'), { subject: 'generated' }]);
    board.claim('w1', 'a');
    board.fail('a', 'w1', { error: 'first' });
    board.claim('w1', 'c');
    board.complete('c', 'w1', { result: { ok: true, nested: [1, 'two'] } });
    board.claim('w9', 'task-1');

    const json = JSON.parse(JSON.stringify(board.snapshot())) as unknown;
    const restored = restoreBoard(json, { clock: () => clock.now });
    expect(restored.snapshot()).toEqual(board.snapshot());
    expect(restored.id).toBe('team-a');
    expect(restored.limits).toEqual(board.limits);
    expect(restored.task('task-1')!.owner).toBe('w9');

    clock.now = 6_000;
    const original = drive(board);
    const again = drive(restored);
    expect(again).toEqual(original);
    expect(original.slice(0, 5)).toEqual(['team-a:a:2', 'escalated', undefined, undefined, 'task-2']);
    expect(restored.snapshot()).toEqual(board.snapshot());
  });

  it('refuses what is not a board snapshot', () => {
    const board = createBoard({ id: 'b' });
    board.create([spec('a'), spec('b', ['a'])]);
    const snapshot = board.snapshot();
    teamError(() => restoreBoard({ ...snapshot, format: 2 }), 'invalid-snapshot');
    teamError(() => restoreBoard({ ...snapshot, tasks: [snapshot.tasks[1]] }), 'invalid-snapshot');
    teamError(() => restoreBoard({ ...snapshot, tasks: [...snapshot.tasks, snapshot.tasks[0]] }), 'invalid-snapshot');
    teamError(() => restoreBoard({ ...snapshot, tasks: [{ ...snapshot.tasks[0]!, status: 'in_progress' }, snapshot.tasks[1]] }), 'invalid-snapshot');
    const cyclic = [{ ...snapshot.tasks[0]!, dependencies: ['b'] }, snapshot.tasks[1]];
    expect(teamError(() => restoreBoard({ ...snapshot, tasks: cyclic }), 'invalid-snapshot').message).toContain('a → b → a');
    teamError(() => restoreBoard('nope'), 'invalid-snapshot');
  });

  it('subscribers see each accepted change once, and nothing for a refused one', () => {
    const { board } = setup();
    const versions: number[] = [];
    const stop = board.subscribe((snapshot) => versions.push(snapshot.version));
    board.create(spec('a'));
    teamError(() => board.create(spec('a')), 'duplicate-task');
    teamError(() => board.complete('a', 'w'), 'wrong-state');
    board.claim('w', 'a');
    stop();
    board.complete('a', 'w');
    expect(versions).toEqual([1, 2]);
  });
});
