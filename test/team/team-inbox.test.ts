/**
 * The team inbox: the six message types of seed 004 checked by their payloads, write to one
 * teammate and broadcast to all, reads in order from a cursor, isolation between two teams
 * (team B's worker can neither read nor write team A's inbox), retention, counts, and an inbox
 * rebuilt from its JSON snapshot behaving like the original.
 */
import { describe, expect, it } from 'vitest';
import { createInbox, INBOX_MESSAGE_TYPES, restoreInbox, type Inbox, type InboxMessage, type InboxPayloads, type InboxMessageType } from '../../src/team/inbox.js';
import { teamError } from '../support/team-error.js';

const HOUR = 3_600_000;

function setup(teamId = 'A', members = ['lead', 'w1', 'w2']) {
  const clock = { now: 10_000 };
  const inbox = createInbox({ teamId, members, clock: () => clock.now });
  const as = (id: string) => ({ teamId, id });
  return { inbox, clock, as };
}

/** A valid payload of every type. */
const VALID: { [T in InboxMessageType]: InboxPayloads[T] } = {
  task_completed: { taskId: 't1', result: { files: ['a.ts'] }, durationMs: 1200 },
  task_failed: { taskId: 't1', error: 'tests failed', attempt: 2 },
  idle_notification: { workerId: 'w1', completedTasks: 3 },
  help_request: { taskId: 't1', question: 'Which database?' },
  shutdown_request: { reason: 'batch done' },
  shutdown_approved: { workerId: 'w1' },
  message: { text: 'The API is up on port 4000' },
  help_answer: { requestId: 'help-1', answer: 'Postgres', by: 'leader' },
};

describe('team inbox: messages', () => {
  it('accepts each of the six message types with its payload', () => {
    const { inbox, as } = setup();
    for (const type of INBOX_MESSAGE_TYPES) inbox.write(as('w1'), 'lead', type, VALID[type] as never);
    // Optional fields may be left out.
    inbox.write(as('w1'), 'lead', 'task_completed', { taskId: 't2' });
    inbox.write(as('w1'), 'lead', 'help_request', { question: 'Anyone?' });
    inbox.write(as('w1'), 'lead', 'idle_notification', { workerId: 'w1' });
    const { messages } = inbox.read(as('lead'));
    expect(messages.map((message) => message.type)).toEqual([...INBOX_MESSAGE_TYPES, 'task_completed', 'help_request', 'idle_notification']);
    expect(messages.map((message) => message.payload)).toEqual([
      ...INBOX_MESSAGE_TYPES.map((type) => VALID[type]),
      { taskId: 't2' },
      { question: 'Anyone?' },
      { workerId: 'w1' },
    ]);
  });

  it.each([
    ['task_completed', { result: 1 }],
    ['task_completed', { taskId: 't', durationMs: -1 }],
    ['task_failed', { taskId: 't', error: 'x' }],
    ['task_failed', { taskId: 't', error: 'x', attempt: 0 }],
    ['idle_notification', { workerId: '' }],
    ['help_request', { taskId: 't' }],
    ['shutdown_request', {}],
    ['shutdown_approved', { workerId: 'w1', extra: true }],
    ['task_assigned', { taskId: 't' }],
  ])('refuses %s with payload %j', (type, payload) => {
    const { inbox, as } = setup();
    const error = teamError(() => inbox.write(as('w1'), 'lead', type as InboxMessageType, payload as never), 'invalid-message');
    expect(error.message).toMatch(type === 'task_assigned' ? /unknown message type "task_assigned"/ : new RegExp(`invalid ${type} payload`));
    expect(inbox.stats().sent).toBe(0);
  });

  it('writes to one teammate; each reads its own messages in order from a cursor', () => {
    const { inbox, as, clock } = setup();
    const first = inbox.write(as('lead'), 'w1', 'help_request', { question: 'status?' });
    expect(first).toEqual({ id: 'A:1', seq: 1, teamId: 'A', from: 'lead', to: 'w1', type: 'help_request', payload: { question: 'status?' }, at: 10_000 });
    clock.now = 11_000;
    inbox.write(as('lead'), 'w2', 'shutdown_request', { reason: 'done' });
    inbox.write(as('w2'), 'w1', 'task_completed', { taskId: 't9' });

    const read1 = inbox.read(as('w1'));
    expect(read1.messages.map((message) => message.seq)).toEqual([1, 3]);
    expect(read1.cursor).toBe(3);
    expect(inbox.read(as('w2')).messages.map((message) => [message.seq, message.type])).toEqual([[2, 'shutdown_request']]);
    // Nothing new past the cursor; reading again from the start returns the same (nothing consumed).
    expect(inbox.read(as('w1'), { since: read1.cursor })).toEqual({ messages: [], cursor: 3 });
    expect(inbox.read(as('w1')).messages).toEqual(read1.messages);
    inbox.write(as('lead'), 'w1', 'shutdown_request', { reason: 'bye' });
    expect(inbox.read(as('w1'), { since: 3 }).messages.map((message) => message.seq)).toEqual([4]);
    teamError(() => inbox.read(as('w1'), { since: -1 }), 'invalid-message');
  });

  it('broadcasts to every member but the sender, in join order', () => {
    const { inbox, as } = setup('A', ['lead', 'w1', 'w2', 'w3']);
    const sent = inbox.broadcast(as('w2'), 'idle_notification', { workerId: 'w2', completedTasks: 1 });
    expect(sent.map((message) => [message.seq, message.to])).toEqual([
      [1, 'lead'],
      [2, 'w1'],
      [3, 'w3'],
    ]);
    expect(inbox.read(as('w2')).messages).toEqual([]);
    expect(inbox.read(as('w3')).messages[0]).toMatchObject({ from: 'w2', type: 'idle_notification', payload: { workerId: 'w2', completedTasks: 1 } });
    expect(inbox.stats()).toMatchObject({ sent: 3, retained: 3, byType: { idle_notification: 3, task_completed: 0 } });
  });

  it('keeps a JSON copy of a payload, detached from the caller', () => {
    const { inbox, as } = setup();
    const result = { files: ['a.ts'] };
    inbox.write(as('w1'), 'lead', 'task_completed', { taskId: 't', result });
    result.files.push('mutated');
    expect(inbox.read(as('lead')).messages[0]!.payload).toEqual({ taskId: 't', result: { files: ['a.ts'] } });
  });

  it('tells listeners of every delivered message, in seq order', () => {
    const { inbox, as } = setup();
    const seen: InboxMessage[] = [];
    const stop = inbox.onMessage((message) => seen.push(message));
    inbox.write(as('w1'), 'lead', 'task_completed', { taskId: 't' });
    inbox.broadcast(as('lead'), 'shutdown_request', { reason: 'done' });
    stop();
    inbox.write(as('w2'), 'lead', 'shutdown_approved', { workerId: 'w2' });
    expect(seen.map((message) => [message.seq, message.to])).toEqual([
      [1, 'lead'],
      [2, 'w1'],
      [3, 'w2'],
    ]);
  });
});

describe('team inbox: membership and isolation', () => {
  it("a worker of team B can neither read nor write team A's inbox", () => {
    const a = setup('A', ['lead', 'w1']);
    // Team B has a worker with the same local id as one of A's, and one of its own.
    const b = setup('B', ['lead', 'w1', 'b7']);
    a.inbox.write(a.as('lead'), 'w1', 'help_request', { question: 'secret of A' });

    for (const id of ['w1', 'b7', 'lead']) {
      const intruder = b.as(id);
      const read = teamError(() => a.inbox.read(intruder), 'not-a-member');
      expect(read.message).toBe(`${id} of team B cannot read the inbox of team A`);
      teamError(() => a.inbox.write(intruder, 'w1', 'help_request', { question: 'let me in' }), 'not-a-member');
      teamError(() => a.inbox.broadcast(intruder, 'shutdown_request', { reason: 'hijack' }), 'not-a-member');
    }
    // A name that is not registered in A, even claiming team A, is refused too.
    expect(teamError(() => a.inbox.read({ teamId: 'A', id: 'b7' }), 'not-a-member').message).toBe('b7 is not a member of team A');
    teamError(() => a.inbox.write({ teamId: 'A', id: 'b7' }, 'w1', 'help_request', { question: 'x' }), 'not-a-member');
    // Nor can a member of A write to someone who is not in A.
    expect(teamError(() => a.inbox.write(a.as('lead'), 'b7', 'help_request', { question: 'x' }), 'not-a-member').message).toBe(
      'cannot write to b7: not a member of team A',
    );

    // Nothing leaked either way: B's w1 sees none of A's messages, A got nothing from B.
    expect(b.inbox.read(b.as('w1')).messages).toEqual([]);
    expect(a.inbox.stats().sent).toBe(1);
    expect(a.inbox.read(a.as('w1')).messages.map((message) => message.payload)).toEqual([{ question: 'secret of A' }]);
  });

  it('join refuses duplicates; a member who left is refused and reads its messages on rejoining', () => {
    const { inbox, as } = setup();
    teamError(() => inbox.join('w1'), 'duplicate-member');
    teamError(() => inbox.join(''), 'not-a-member');
    inbox.write(as('lead'), 'w1', 'shutdown_request', { reason: 'restart' });
    inbox.leave('w1');
    expect(inbox.members()).toEqual(['lead', 'w2']);
    teamError(() => inbox.read(as('w1')), 'not-a-member');
    teamError(() => inbox.write(as('lead'), 'w1', 'shutdown_request', { reason: 'x' }), 'not-a-member');
    teamError(() => inbox.leave('w1'), 'not-a-member');
    inbox.join('w1');
    expect(inbox.read(as('w1')).messages.map((message) => message.payload)).toEqual([{ reason: 'restart' }]);
  });
});

describe('team inbox: retention', () => {
  it('drops messages older than the retention on read, write and prune, and never returns them', () => {
    const { inbox, as, clock } = setup();
    inbox.write(as('lead'), 'w1', 'help_request', { question: 'old' }); // at 10_000
    clock.now = 10_000 + 1_000;
    inbox.write(as('lead'), 'w1', 'help_request', { question: 'newer' }); // at 11_000
    // Exactly the retention old: kept.
    clock.now = 10_000 + HOUR;
    expect(inbox.read(as('w1')).messages.map((message) => message.payload)).toEqual([{ question: 'old' }, { question: 'newer' }]);
    // One millisecond more: dropped on read.
    clock.now = 10_000 + HOUR + 1;
    const { messages, cursor } = inbox.read(as('w1'));
    expect(messages.map((message) => message.payload)).toEqual([{ question: 'newer' }]);
    expect(cursor).toBe(2);
    expect(inbox.stats()).toMatchObject({ sent: 2, expired: 1, retained: 1 });

    // On write: the newer one expires when a later message is written.
    clock.now = 11_000 + HOUR + 1;
    inbox.write(as('w2'), 'lead', 'task_completed', { taskId: 't' });
    expect(inbox.snapshot().messages.map((message) => message.seq)).toEqual([3]);
    expect(inbox.stats()).toMatchObject({ sent: 3, expired: 2, retained: 1 });
    expect(inbox.read(as('w1'), { since: 0 }).messages).toEqual([]);

    // prune at a given time.
    expect(inbox.prune(clock.now + HOUR)).toBe(0);
    expect(inbox.prune(clock.now + HOUR + 1)).toBe(1);
    expect(inbox.stats()).toMatchObject({ sent: 3, expired: 3, retained: 0 });
  });

  it('takes the retention from the team limits', () => {
    const clock = { now: 0 };
    const inbox = createInbox({ teamId: 'A', members: ['a', 'b'], limits: { inboxRetentionMs: 50 }, clock: () => clock.now });
    inbox.write({ teamId: 'A', id: 'a' }, 'b', 'shutdown_request', { reason: 'r' });
    clock.now = 50;
    expect(inbox.read({ teamId: 'A', id: 'b' }).messages).toHaveLength(1);
    clock.now = 51;
    expect(inbox.read({ teamId: 'A', id: 'b' }).messages).toHaveLength(0);
    teamError(() => createInbox({ teamId: 'A', limits: { inboxRetentionMs: 0 } }), 'invalid-limit');
  });
});

describe('team inbox: snapshot and restore', () => {
  function drive(inbox: Inbox) {
    const as = (id: string) => ({ teamId: 'A', id });
    return [
      inbox.write(as('w2'), 'lead', 'task_failed', { taskId: 't', error: 'e', attempt: 1 }),
      inbox.broadcast(as('lead'), 'shutdown_request', { reason: 'done' }),
      inbox.read(as('lead'), { since: 1 }),
      inbox.stats(),
    ];
  }

  it('an inbox rebuilt from its JSON snapshot equals the original and behaves the same', () => {
    const { inbox, as, clock } = setup();
    inbox.write(as('lead'), 'w1', 'help_request', { taskId: 't', question: 'q' });
    clock.now += 1_000;
    inbox.broadcast(as('w1'), 'idle_notification', { workerId: 'w1', completedTasks: 2 });
    clock.now += HOUR; // the first message expires at the next change
    const restored = restoreInbox(JSON.parse(JSON.stringify(inbox.snapshot())), { clock: () => clock.now });
    expect(restored.snapshot()).toEqual(inbox.snapshot());
    expect(restored.teamId).toBe('A');
    expect(drive(restored)).toEqual(drive(inbox));
    expect(restored.snapshot()).toEqual(inbox.snapshot());
    expect(restored.snapshot().nextSeq).toBe(7);
  });

  it('refuses what is not an inbox snapshot', () => {
    const { inbox, as } = setup();
    inbox.write(as('lead'), 'w1', 'shutdown_request', { reason: 'r' });
    const snapshot = inbox.snapshot();
    teamError(() => restoreInbox({ ...snapshot, format: 2 }), 'invalid-snapshot');
    teamError(() => restoreInbox({ ...snapshot, nextSeq: 1 }), 'invalid-snapshot');
    teamError(() => restoreInbox({ ...snapshot, messages: [{ ...snapshot.messages[0]!, teamId: 'B' }] }), 'invalid-snapshot');
    teamError(() => restoreInbox({ ...snapshot, messages: [{ ...snapshot.messages[0]!, payload: {} }] }), 'invalid-snapshot');
    teamError(() => restoreInbox(null), 'invalid-snapshot');
  });
});
