/**
 * The ISO times stamped on events are formatted per minute (a table-built tail on the minute's
 * text) rather than by `Date#toISOString` on every commit: they must be exactly its text, for
 * any time, in any order of calls, and fail where it fails.
 */
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/events/stamp.js';

describe('ISO times of events', () => {
  it('are Date#toISOString, within a minute, across minutes, and for any other time', () => {
    const start = Date.UTC(2026, 10, 24, 4, 59, 58, 990);
    const times = [
      ...Array.from({ length: 5000 }, (_, i) => start + i * 7),
      ...Array.from({ length: 2000 }, (_, i) => Math.floor(Math.sin(i + 1) * 4e12)),
      0,
      59_999,
      60_000,
      -1,
      -60_001,
      8.64e15 - 60_000,
      8.64e15,
      -8.64e15,
      1.5,
      start + 0.25,
    ];
    for (const at of [...times, ...times.reverse()]) expect(isoTime(at), String(at)).toBe(new Date(at).toISOString());
  });

  it('past the last representable date it throws as toISOString does, even right after the last one', () => {
    expect(isoTime(8.64e15 - 1)).toBe(new Date(8.64e15 - 1).toISOString());
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
    expect(isoTime(8.64e15)).toBe(new Date(8.64e15).toISOString());
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
