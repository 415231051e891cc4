/**
 * The swarm's config is stored once, as a one-row list, and referenced by every snapshot
 * (src/store/messages.ts): written with the first step and again only for another config
 * object, put back by every store's load with the in-flight model call's tools and handoffs
 * the same arrays as the config's, and not rewritten after a restore.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createW1Runtime, W1_INPUT } from '../../bench/w1.js';
import { decodeValue, RECORD_FORMAT } from '../../src/store/jetstream/records.js';
import { assembleSnapshot, CONFIG_LIST, MessageLists, type MessageWrite } from '../../src/store/messages.js';
import { sqliteStore } from '../../src/store/sqlite/store.js';
import type { Commit } from '../../src/store/types.js';

type Snap = {
  context: { config: { tools: unknown[]; handoffs: unknown[] }; messages: unknown[] };
  children: Record<string, { snapshot: { input: Record<string, unknown> } }>;
};

/** Applies `writes` to `lists` as a store does. */
function apply(lists: Map<string, unknown[]>, writes: readonly MessageWrite[]): void {
  for (const w of writes) lists.set(w.list, [...(w.from === 0 ? [] : (lists.get(w.list) ?? [])), ...w.items]);
}

function snapshot(config: Snap['context']['config'], messages: unknown[]): Snap {
  return {
    context: { config, messages },
    children: { model: { snapshot: { input: { messages, tools: config.tools, handoffs: config.handoffs } } } },
  };
}

const config = () => ({
  instructions: 'Plan the user’s weekend.',
  tools: [{ name: 'lookup', parameters: { type: 'object' } }],
  handoffs: [{ toolName: 'handoff_to_weather_agent', agent: { instructions: 'Answer briefly.', tools: [] } }],
});

describe('the stored config', () => {
  it('is written with the first step only, referenced by each snapshot, and put back with the same arrays in the model call', () => {
    const lists = new Map<string, unknown[]>();
    const writer = new MessageLists();
    const cfg = config();
    const m1 = [{ role: 'system', content: 'x' }];
    const first = writer.split(snapshot(cfg, m1));
    expect(first.writes.filter((w) => w.list === CONFIG_LIST)).toEqual([{ list: CONFIG_LIST, from: 0, items: [cfg] }]);
    apply(lists, first.writes);
    const stored = JSON.parse(JSON.stringify(first.snapshot)) as Snap;
    expect(stored.context.config).toEqual({ xswarm$value: CONFIG_LIST });
    expect(stored.children.model!.snapshot.input).toMatchObject({
      tools: { xswarm$value: CONFIG_LIST, at: 'tools' },
      handoffs: { xswarm$value: CONFIG_LIST, at: 'handoffs' },
    });

    const m2 = [...m1, { role: 'user', content: 'y' }];
    const second = writer.split(snapshot(cfg, m2));
    expect(second.writes.map((w) => w.list)).toEqual(['']);
    apply(lists, second.writes);

    // Put back from what was stored as text, as a store loads it.
    const loaded = assembleSnapshot(JSON.parse(JSON.stringify(second.snapshot)), new Map(JSON.parse(JSON.stringify([...lists])))) as Snap;
    expect(loaded).toEqual(snapshot(cfg, m2));
    expect(loaded.children.model!.snapshot.input.handoffs).toBe(loaded.context.config.handoffs);
    expect(loaded.children.model!.snapshot.input.tools).toBe(loaded.context.config.tools);

    // A restored writer trusts the assembled config: its next step does not write it again.
    const restored = new MessageLists();
    restored.prime(loaded);
    const third = restored.split(snapshot(loaded.context.config, [...loaded.context.messages, { role: 'assistant', content: 'z' }]));
    expect(third.writes).toEqual([{ list: '', from: 2, items: [{ role: 'assistant', content: 'z' }] }]);
    // Another config object is written again, whole.
    const other = { ...cfg, instructions: 'Something else.' };
    expect(restored.split(snapshot(other, m2)).writes.filter((w) => w.list === CONFIG_LIST)).toEqual([{ list: CONFIG_LIST, from: 0, items: [other] }]);
  });

  it('JetStream records say their format: 3 with list writes in commit messages, 2 (config references, rows in the messages stream) and 1 (config inline) still read, others refused', () => {
    const value = (v: unknown) => JSON.stringify({ v, w: 'w1', record: { swarmId: 's', revision: 1, status: 'running', result: { status: 'running' } } });
    expect(decodeValue(value(RECORD_FORMAT)).value?.v).toBe(3);
    expect(decodeValue(value(2)).value?.v).toBe(2);
    expect(decodeValue(value(1)).value?.v).toBe(1);
    expect(decodeValue(value(4)).problem).toBe('stored in record format 4; this xswarm reads formats 1 to 3');
  });

  it('leaves empty tool lists as they are, and names a missing config when loading', () => {
    const cfg = { ...config(), tools: [] };
    const { snapshot: stripped } = new MessageLists().split(snapshot(cfg, []));
    expect((stripped as Snap).children.model!.snapshot.input.tools).toEqual([]);
    expect(() => assembleSnapshot(stripped, new Map())).toThrow(`the swarm's config (list "${CONFIG_LIST}") is missing`);
  });
});

describe('the stored config on SQLite', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'xswarm-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('W1: one config write per run, the stored snapshot references it, and loads with its config', async () => {
    const path = join(dir, 'state.db');
    const store = sqliteStore(path, { synchronous: 'NORMAL' });
    const commits: Commit[] = [];
    const counted = Object.assign(Object.create(store) as typeof store, {
      commit: (c: Commit) => {
        commits.push(c);
        return store.commit(c);
      },
    });
    const { runtime, swarm } = createW1Runtime(0, counted);
    const client = runtime.forSwarm(swarm);
    await client.run(W1_INPUT);
    expect(await client.wait()).toMatchObject({ status: 'completed' });
    await runtime.close();
    const configWrites = commits.flatMap((c) => (c.messages ?? []).filter((w) => w.list === CONFIG_LIST));
    expect(configWrites).toHaveLength(1);
    expect(commits.filter((c) => c.record?.snapshot).length).toBeGreaterThan(5);

    const db = new Database(path, { readonly: true });
    const { snapshot } = db.prepare(`SELECT snapshot FROM swarms WHERE swarm_id = ?`).get(client.swarmId) as { snapshot: string };
    db.close();
    expect(JSON.parse(snapshot).context.config).toEqual({ xswarm$value: CONFIG_LIST });
    // The instructions (with their ’) are not in the stored snapshot any more.
    expect(snapshot).not.toContain('weekend');
    const loaded = (await store.load(client.swarmId))!.snapshot as Snap;
    expect(loaded.context.config).toEqual(configWrites[0]!.items[0]);
    await store.close();
  });
});
