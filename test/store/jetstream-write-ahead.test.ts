/**
 * A swarm's next KV write waits for the publish of the value it replaces (a value is not
 * replaced before its outbox is in the stream), but it is decided and serialized meanwhile: the
 * write leaves as soon as that publish is acknowledged, with no CPU work left between the two on
 * the path of a swarm's consecutive commits (a hosted child's first and last, in every handoff).
 * The key writer runs here over doubles of the KV bucket, the values seen and the outages.
 */
import { describe, expect, it, vi } from 'vitest';
import { Names } from '../../src/store/jetstream/names.js';
import type { Outages } from '../../src/store/jetstream/outage.js';
import { OutboxPublisher } from '../../src/store/jetstream/outbox.js';
import { RECORD_FORMAT, type StoredValue } from '../../src/store/jetstream/records.js';
import type { Known, Seen } from '../../src/store/jetstream/seen.js';
import type { Broker } from '../../src/store/jetstream/setup.js';
import { KeyWriter } from '../../src/store/jetstream/writer.js';
import { event, record } from '../support/store-fixtures.js';

const macrotask = () => new Promise((resolve) => setImmediate(resolve));

function value(revision: number, lastSeq: number): Omit<StoredValue, 'w'> {
  const { lease: _l, problem: _p, ...rest } = record('s1', revision, lastSeq);
  return { v: RECORD_FORMAT, record: rest, outbox: { events: [event('s1', lastSeq)], messages: [] } };
}

describe('the next write of a swarm whose last commit is being published', () => {
  it('is serialized while the publish is in flight, and sent once it is acknowledged', async () => {
    const log: string[] = [];
    const names = new Names('xswarm');
    // The swarm's first commit: written, its outbox's publish in flight.
    const cur: Known = { rev: 1, decoded: { value: { ...value(1, 1), w: 'first' } }, at: 0, published: false };
    const remembered: Known[] = [];
    const seen = { get: () => cur, remember: (_id: string, k: Known) => remembered.push(k) } as unknown as Seen;
    const outages = { retry: <T>(_what: string, attempt: () => Promise<T>) => attempt() } as unknown as Outages;
    const outbox = new OutboxPublisher(names, 1000);
    // The value's bytes are made, its outbox's commit message body kept from them, before the wait.
    const keep = outbox.keepBody.bind(outbox);
    vi.spyOn(outbox, 'keepBody').mockImplementation((o, body) => {
      log.push('serialized');
      keep(o, body);
    });
    let acknowledge!: () => void;
    const publishing = new Promise<void>((resolve) => (acknowledge = resolve)).then(() => {
      cur.published = true;
      log.push('published');
    });
    void outbox.inBackground('s1', publishing);
    const puts: { key: string; json: Uint8Array; previousSeq: number | undefined }[] = [];
    const r = {
      kv: {
        put: async (key: string, json: Uint8Array, opts: { previousSeq?: number }) => {
          log.push('put');
          puts.push({ key, json, previousSeq: opts.previousSeq });
          return 2;
        },
      },
      ctx: {},
    } as unknown as Broker;
    const writer = new KeyWriter(names, seen, outbox, outages, 1000);
    const next = value(2, 2);
    const writing = writer.update(r, 's1', 'Commit of swarm "s1"', () => {
      log.push('decided');
      return next;
    });
    await macrotask();
    // Ready to go, and held until the value it replaces is in the stream.
    expect(log).toEqual(['decided', 'serialized']);
    acknowledge();
    const written = await writing;
    expect(log).toEqual(['decided', 'serialized', 'published', 'put']);
    expect(puts).toHaveLength(1);
    expect(puts[0]!.key).toBe(names.key('s1'));
    expect(puts[0]!.previousSeq).toBe(1);
    const stored = JSON.parse(new TextDecoder().decode(puts[0]!.json)) as StoredValue;
    expect(stored).toEqual(JSON.parse(JSON.stringify({ ...next, w: stored.w })));
    expect(written?.rev).toBe(2);
    expect(remembered.map((k) => k.rev)).toEqual([2]);
  });
});
