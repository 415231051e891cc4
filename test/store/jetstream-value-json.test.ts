/**
 * The JetStream store serializes and encodes a commit's value once, and takes the body of its
 * outbox's commit message from those bytes: byte for byte what `JSON.stringify` and UTF-8 gave
 * before, so values and commit messages are stored as they were.
 */
import { describe, expect, it } from 'vitest';
import { readCommitBody } from '../../src/store/jetstream/batch.js';
import { decodeValue, type Outbox, RECORD_FORMAT, type StoredValue, valueBytes } from '../../src/store/jetstream/records.js';
import { event, record } from '../support/store-fixtures.js';

function stored(over: Partial<StoredValue>): StoredValue {
  const { lease: _l, problem: _p, ...rest } = record('s1', 2, 3, { snapshot: { value: 'x', context: { n: 1, missing: undefined } } as never });
  return { v: RECORD_FORMAT, record: rest, ...over, w: 'write-id' };
}

describe('one serialization of an outbox', () => {
  const events = [event('s1', 2), event('s1', 3, 'with "quotes" and \u2028 and é')];
  const messages = [{ list: 'chat', from: 0, items: [{ role: 'user', content: 'hi', skipped: undefined }] }];

  it('encodes the value and its commit message body once, byte for byte as JSON.stringify and UTF-8 gave', () => {
    const utf8 = new TextEncoder();
    const text = new TextDecoder();
    const cases: [StoredValue, Outbox | undefined][] = [
      [stored({ outbox: { events, messages } }), { events, messages }],
      [stored({ lease: { owner: 'Ä', until: 5 }, outbox: { events, messages: [] }, lists: { chat: 1 } }), { events, messages: [] }],
      [stored({ outbox: { events: [], messages }, legacyRows: true }), { events: [], messages }],
      // Outbox first: the value's first key.
      [{ outbox: { events, messages }, v: RECORD_FORMAT, record: stored({}).record, w: 'é' } as StoredValue, { events, messages }],
    ];
    for (const [value, outbox] of cases) {
      const { bytes, body } = valueBytes(value);
      expect(Buffer.from(bytes).equals(Buffer.from(utf8.encode(JSON.stringify(value))))).toBe(true);
      expect(decodeValue(text.decode(bytes))).toEqual({ value: JSON.parse(JSON.stringify(value)) });
      // The body the publish sends: what it serialized itself before (no `messages` when none).
      const expected = outbox!.messages.length > 0 ? JSON.stringify(outbox) : JSON.stringify({ events: outbox!.events });
      expect(text.decode(body)).toBe(expected);
      expect(readCommitBody(text.decode(body))).toEqual(JSON.parse(expected));
    }
  });

  it('encodes a value without an outbox, or with one of another shape, as JSON.stringify did, with no body', () => {
    const utf8 = new TextEncoder();
    const older = stored({ outbox: { events, messages, fresh: ['chat'] } });
    const reordered = stored({ outbox: { messages, events } as Outbox });
    for (const value of [stored({ lease: { owner: 'A', until: 5 } }), older, reordered, stored({ outbox: undefined }), {} as StoredValue]) {
      const { bytes, body } = valueBytes(value);
      expect(Buffer.from(bytes).equals(Buffer.from(utf8.encode(JSON.stringify(value))))).toBe(true);
      expect(body).toBeUndefined();
    }
  });
});
