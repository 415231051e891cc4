/**
 * The latest events a JetStream store keeps per swarm from the values it sees
 * (`RecentValues` in src/store/jetstream/seen.ts): an outbox that follows on is appended, the
 * last 64 kept; one that does not replaces them; a lease write keeps them.
 */
import { describe, expect, it } from 'vitest';
import { RECORD_FORMAT, type StoredValue } from '../../src/store/jetstream/records.js';
import { RecentValues } from '../../src/store/jetstream/seen.js';
import { event, record } from '../support/store-fixtures.js';

/** A value whose outbox holds the events `from`..`to` (none when `to < from`), its record's last seq `to`. */
function value(from: number, to: number, lastSeq = to): StoredValue {
  const { lease: _l, problem: _p, ...rest } = record('s1', 2, lastSeq);
  const events = Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => event('s1', from + i));
  return { v: RECORD_FORMAT, record: rest, ...(events.length > 0 ? { outbox: { events, messages: [] } } : {}), w: 'w' };
}

const seqs = (recent: RecentValues) => recent.get('s1')!.events.map((e) => e.seq);

describe('recent events of a swarm', () => {
  it('appends an outbox that follows on, keeping the last 64', () => {
    const recent = new RecentValues();
    recent.note('s1', 1, 10, value(1, 40));
    recent.note('s1', 2, 20, value(41, 60));
    expect(seqs(recent)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    recent.note('s1', 3, 30, value(61, 70));
    expect(seqs(recent)).toEqual(Array.from({ length: 64 }, (_, i) => i + 7));
    // An outbox of more than 64 events on its own: the last 64 of it.
    recent.note('s1', 4, 40, value(71, 170));
    expect(seqs(recent)).toEqual(Array.from({ length: 64 }, (_, i) => i + 107));
    // The value before is left as it was (a new array, not the one it held).
    recent.note('s1', 5, 50, value(171, 171));
    expect(seqs(recent).at(-1)).toBe(171);
    expect(seqs(recent)).toHaveLength(64);
  });

  it('replaces the events with an outbox that does not follow on, keeps them across a lease write, ignores an older revision', () => {
    const recent = new RecentValues();
    recent.note('s1', 1, 10, value(1, 3));
    recent.note('s1', 2, 20, value(5, 6));
    expect(seqs(recent)).toEqual([5, 6]);
    // A lease write: the same record, no outbox; the events and when they were written stay.
    recent.note('s1', 3, 30, value(1, 0, 6));
    expect(seqs(recent)).toEqual([5, 6]);
    expect(recent.get('s1')!.at).toBe(20);
    recent.note('s1', 2, 40, value(7, 9));
    expect(recent.get('s1')!.rev).toBe(3);
  });
});
