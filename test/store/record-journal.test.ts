/**
 * The record journal that writes a team's and the agent registry's records: one commit for the
 * changes of a tick (and for those made while the previous commit is in flight), and `seal()`,
 * after which the commit still to come writes the state as it was at the seal, whatever the
 * owner does to its state afterwards (a team host stopping its leader and workers at close).
 */
import { describe, expect, it } from 'vitest';
import { memoryStore, type Commit, type SwarmStore } from '../../src/index.js';
import { RecordJournal, type RecordShape } from '../../src/store/records.js';

interface State {
  value: string;
}

const SHAPE: RecordShape<State> = {
  definitionId: 'xswarm.registry',
  machineVersion: 1,
  status: () => 'running',
  result: () => ({ status: 'running', currentTurn: 0, maxTurns: 0 }),
};

/** A journal of `state` on a memory store whose commits are recorded and wait for `gate` when one is set. */
function journalOf(state: State, events: { seq: number }[] = []) {
  const base = memoryStore();
  const commits: Commit[] = [];
  let gate: Promise<void> | undefined;
  const store: SwarmStore = {
    ...base,
    commit: async (commit) => {
      commits.push(structuredClone(commit));
      await gate;
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
  );
  const hold = () => {
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    return () => {
      gate = undefined;
      open();
    };
  };
  return { journal, commits, base, lost, hold };
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
});
