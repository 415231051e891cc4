/**
 * The record journal that writes a team's and the agent registry's records: one commit for the
 * changes of a tick (and for those made while the previous commit is in flight), and `seal()`,
 * after which the commit still to come writes the state as it was at the seal, whatever the
 * owner does to its state afterwards (a team host stopping its leader and workers at close).
 * With `waitForStore` (the registry's), a store that cannot reach its server is waited out.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore, type Commit, SwarmError, type SwarmStore } from '../../src/index.js';
import { RecordJournal, type RecordJournalOptions, type RecordShape } from '../../src/store/records.js';
import { sleep } from '../support/sleep.js';

interface State {
  value: string;
}

const SHAPE: RecordShape<State> = {
  definitionId: 'xswarm.registry',
  machineVersion: 1,
  status: () => 'running',
  result: () => ({ status: 'running', currentTurn: 0, maxTurns: 0 }),
};

/**
 * How the store takes the next commits, one entry per commit: `down` fails it as a store that
 * cannot reach its server does, `landed` writes it and then fails it the same way (a write that
 * timed out but landed). Commits past the list are written.
 */
type Outage = 'down' | 'landed';

/**
 * A journal of `state` on a memory store whose commits are recorded, wait for `gate` when one is
 * set, and fail as `outages` says; `link.up` is what the store's `connected()` answers.
 */
function journalOf(state: State, events: { seq: number }[] = [], options: RecordJournalOptions & { outages?: Outage[] } = {}) {
  const base = memoryStore();
  const commits: Commit[] = [];
  let gate: Promise<void> | undefined;
  const outages = [...(options.outages ?? [])];
  const link = { up: true };
  const store: SwarmStore = {
    ...base,
    connected: () => link.up,
    commit: async (commit) => {
      commits.push(structuredClone(commit));
      await gate;
      const outage = outages.shift();
      if (outage === 'landed') await base.commit(commit);
      if (outage) throw new SwarmError('Commit: NATS has been unreachable for 300 s (timeout)', 'unavailable');
      return base.commit(commit);
    },
  };
  const lost: string[] = [];
  const journal = new RecordJournal<State>(
    { store, lease: () => ({ owner: 'me', until: Date.now() + 60_000 }) },
    'xswarm.registry.r',
    SHAPE,
    () => ({ snapshot: { ...state }, events }),
    (reason) => lost.push(reason),
    undefined,
    options,
  );
  const hold = () => {
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    return () => {
      gate = undefined;
      open();
    };
  };
  return { journal, commits, base, lost, hold, link };
}

const written = (commits: Commit[]) => commits.map((c) => (c.record?.snapshot as State | undefined)?.value);

describe('record journal', () => {
  it('writes the changes of one tick in one commit, and those made during a commit in flight in the next one', async () => {
    const state = { value: 'a' };
    const { journal, commits, lost } = journalOf(state);
    state.value = 'b';
    journal.changed();
    state.value = 'c';
    journal.changed();
    await journal.flush();
    expect(written(commits)).toEqual(['c']);

    state.value = 'd';
    journal.changed();
    await Promise.resolve();
    // In flight now: these three changes make one more commit, of the state when it begins.
    state.value = 'e';
    journal.changed();
    journal.changed();
    state.value = 'f';
    journal.changed();
    await journal.flush();
    expect(written(commits)).toEqual(['c', 'd', 'f']);
    expect(commits.map((c) => c.record?.revision)).toEqual([1, 2, 3]);
    expect(lost).toEqual([]);
  });

  it('once sealed, the commit still to come writes the state as it was at the seal, and nothing more is written', async () => {
    const state = { value: 'a' };
    const events = [{ seq: 1 }];
    const { journal, commits, base, hold } = journalOf(state, events);
    const open = hold();
    journal.changed();
    await Promise.resolve();
    // The first commit is in flight; a change made meanwhile waits for it.
    state.value = 'changed';
    events.push({ seq: 2 });
    journal.changed();
    journal.seal();
    // The owner tears its state down after the seal: none of it is the record's.
    state.value = 'torn down';
    events.push({ seq: 3 });
    journal.changed();
    open();
    await journal.flush();
    expect(written(commits)).toEqual(['a', 'changed']);
    expect(commits.map((c) => c.events.map((e) => e.seq))).toEqual([[1], [2]]);
    const record = await base.load('xswarm.registry.r');
    expect({ value: (record?.snapshot as State | undefined)?.value, lastSeq: record?.lastSeq, revision: record?.revision }).toEqual({
      value: 'changed',
      lastSeq: 2,
      revision: 2,
    });

    // Sealed with nothing scheduled: nothing is written.
    const other = journalOf({ value: 'x' });
    other.journal.seal();
    other.journal.changed();
    await other.journal.flush();
    expect(other.commits).toEqual([]);
  });

  describe('waiting for the store (waitForStore)', () => {
    const stored = async (base: SwarmStore) => {
      const record = await base.load('xswarm.registry.r');
      return { value: (record?.snapshot as State | undefined)?.value, revision: record?.revision };
    };

    it('a commit the store could not make is made again once it is connected, with the state as it is then; without the option it is final', async () => {
      const state = { value: 'a' };
      const { journal, commits, base, lost, link } = journalOf(state, [], { waitForStore: true, outages: ['down'] });
      link.up = false;
      journal.changed();
      await sleep(100);
      // Still waiting for the store: nothing lost, nothing written.
      expect(written(commits)).toEqual(['a']);
      state.value = 'b';
      link.up = true;
      await journal.flush();
      expect(written(commits)).toEqual(['a', 'b']);
      expect(await stored(base)).toEqual({ value: 'b', revision: 1 });
      expect(lost).toEqual([]);
      expect(journal.failure).toBeUndefined();

      const final = journalOf({ value: 'a' }, [], { outages: ['down'] });
      final.journal.changed();
      await final.journal.flush();
      expect(final.lost).toEqual(['Commit: NATS has been unreachable for 300 s (timeout)']);
    });

    it('an attempt that landed although it failed is recognised as its own write when the next is refused, and the journal goes on from it', async () => {
      const state = { value: 'a' };
      const { journal, commits, base, lost } = journalOf(state, [], { waitForStore: true, outages: ['landed'] });
      journal.changed();
      await journal.flush();
      // Revision 1 landed; its retry was refused (revision 1 exists); the state went on as revision 2.
      expect(commits.map((c) => c.record?.revision)).toEqual([1, 1, 2]);
      expect(await stored(base)).toEqual({ value: 'a', revision: 2 });
      expect(lost).toEqual([]);
      state.value = 'b';
      journal.changed();
      await journal.flush();
      expect(await stored(base)).toEqual({ value: 'b', revision: 3 });
    });

    it('a record another runtime wrote meanwhile is lost, not taken back', async () => {
      const { journal, base, lost } = journalOf({ value: 'a' }, [], { waitForStore: true, outages: ['down'] });
      // Their journal writes the record while this one's commit fails with the store unreachable.
      const theirs = new RecordJournal<State>(
        { store: base, lease: () => ({ owner: 'them', until: Date.now() + 60_000 }) },
        'xswarm.registry.r',
        SHAPE,
        () => ({ snapshot: { value: 'theirs' }, events: [] }),
        () => undefined,
      );
      theirs.changed();
      await theirs.flush();
      journal.changed();
      await journal.flush();
      expect(lost).toHaveLength(1);
      expect(await stored(base)).toEqual({ value: 'theirs', revision: 1 });
    });

    it('sealed while waiting: one more attempt, then nothing more is written and the record is not reported lost', async () => {
      const { journal, commits, lost, link } = journalOf({ value: 'a' }, [], { waitForStore: true, outages: ['down', 'down', 'down'] });
      link.up = false;
      journal.changed();
      await sleep(50);
      journal.seal();
      await journal.flush();
      expect(written(commits)).toEqual(['a', 'a']);
      expect(lost).toEqual([]);
      expect(journal.failure).toMatch(/unreachable/);
    });
  });
});
