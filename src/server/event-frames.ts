/**
 * Batched frames of the `/events` WebSocket (`batch=1`): several events of one swarm in one
 * JSON array text frame. A browser pays per WebSocket frame (≈0.1 ms each in Chromium, however
 * small), so a page replaying 100,000 events one per frame spends seconds on frames alone.
 *
 * A frame holds the events that are at hand together — a stored page on replay, what one
 * commit made visible live — in `seq` order, and stays within {@link MAX_FRAME_BYTES} and
 * {@link MAX_FRAME_EVENTS} so the slow-subscriber bounds keep meaning something: one frame is
 * never a whole history. A single event larger than the byte bound is a frame of its own.
 *
 * @module
 */
import { PAGE_SIZE } from '../store/pages.js';
import type { StreamedEvent } from '../http/sse.js';

/** The bytes of events a batched frame holds at most (one larger event is a frame alone). */
export const MAX_FRAME_BYTES = 256 * 1024;

/** The events a batched frame holds at most: one stored page. */
export const MAX_FRAME_EVENTS = PAGE_SIZE;

/** One batched frame ready to send: the JSON array's text, how many events, the last one. */
export interface BatchFrame<E extends StreamedEvent = StreamedEvent> {
  readonly text: string;
  readonly count: number;
  readonly last: E;
}

/**
 * Collects events, each serialized once, into array frames within the bounds. `add` hands
 * back the frame collected so far when the event would not fit in it; `take` the rest.
 */
export class FrameCollector<E extends StreamedEvent = StreamedEvent> {
  private parts: string[] = [];
  private bytes = 0;
  private last: E | undefined;

  constructor(
    private readonly maxBytes = MAX_FRAME_BYTES,
    private readonly maxEvents = MAX_FRAME_EVENTS,
  ) {}

  /** Whether no event is waiting. */
  get empty(): boolean {
    return this.parts.length === 0;
  }

  /** Adds an event; returns the frame it did not fit in, if any, to send before it. */
  add(event: E): BatchFrame<E> | undefined {
    const text = JSON.stringify(event);
    // Bytes of UTF-8 would be exact; string length is within a small factor and costs nothing.
    const full = this.parts.length > 0 && (this.parts.length >= this.maxEvents || this.bytes + text.length + 1 > this.maxBytes);
    const before = full ? this.take() : undefined;
    this.parts.push(text);
    this.bytes += text.length + 1;
    this.last = event;
    return before;
  }

  /** The events collected so far as one frame (none: undefined), and starts afresh. */
  take(): BatchFrame<E> | undefined {
    if (this.parts.length === 0 || !this.last) return undefined;
    const frame = { text: `[${this.parts.join(',')}]`, count: this.parts.length, last: this.last };
    this.parts = [];
    this.bytes = 0;
    this.last = undefined;
    return frame;
  }
}

/** Splits events (a stored page) into array frames within the bounds. */
export function batchFrames<E extends StreamedEvent>(events: readonly E[], maxBytes = MAX_FRAME_BYTES, maxEvents = MAX_FRAME_EVENTS): BatchFrame<E>[] {
  const collector = new FrameCollector<E>(maxBytes, maxEvents);
  const frames: BatchFrame<E>[] = [];
  for (const event of events) {
    const full = collector.add(event);
    if (full) frames.push(full);
  }
  const rest = collector.take();
  if (rest) frames.push(rest);
  return frames;
}
