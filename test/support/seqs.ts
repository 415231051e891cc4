/**
 * Sequence numbers: the seqs of stored or streamed events, and the runs of numbers a gap-free
 * stream's seqs must equal.
 */

/** The sequence numbers of events. */
export const seqs = (events: readonly { seq: number }[]): number[] => events.map((e) => e.seq);

/** 1 … n. */
export const oneToN = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

/** from … to (none when `to` is below `from`). */
export const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
