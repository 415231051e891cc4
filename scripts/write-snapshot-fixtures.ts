/**
 * Writes the stored-snapshot compatibility fixtures of this version into
 * `test/fixtures/snapshots/v<FIXTURE_SET>/` (see `test/support/snapshot-fixtures.ts` for the
 * scenarios), run by hand: `npx tsx scripts/write-snapshot-fixtures.ts` (needs `nats-server` on
 * PATH). `test/store/snapshot-fixtures.test.ts` reads every fixture folder with the current code:
 * restores each swarm, continues it to its end, replays it.
 *
 * Run it when a stored format changes (the swarm machine version, the event format, a store's
 * record format, XState's persisted snapshot): bump `FIXTURE_SET` first, so a new folder is
 * written and the old ones stay, read by the test as data an older xswarm left behind. Running
 * it again for the current set rewrites that folder (the scenarios are deterministic; times and
 * random ids differ).
 *
 * Files: `memory.json` (each record as `load` returns it, with its events: the memory store's
 * form), `state.db` (a SQLite store file), `jetstream.json` (the KV values and stream messages
 * of a JetStream store), `manifest.json` (what wrote them).
 *
 * @module
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryStore, sqliteStore } from '../src/index.js';
import { connectNats, jetstreamStore } from '../src/entries/nats.js';
import { SWARM_MACHINE_VERSION } from '../machines/swarm.js';
import { EVENT_FORMAT } from '../machines/events.js';
import { RECORD_FORMAT } from '../src/store/jetstream/records.js';
import { startNatsServer } from '../test/support/nats-server.js';
import { dumpJetStream, FIXTURE_SET, recordingStore, writeScenarios } from '../test/support/snapshot-fixtures.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'test', 'fixtures', 'snapshots', `v${FIXTURE_SET}`);
mkdirSync(out, { recursive: true });
const json = (value: unknown) => `${JSON.stringify(value, null, 1)}\n`;

// Memory: run, close (a volatile store gets every unfinished swarm's snapshot at close), dump what was committed.
const memory = recordingStore(memoryStore());
await writeScenarios(memory.store);
writeFileSync(join(out, 'memory.json'), json(memory.entries()));

// SQLite: run on a file in a temp folder, close the store (its WAL checkpointed into the file), copy it.
const tmp = mkdtempSync(join(tmpdir(), 'xswarm-fixtures-'));
try {
  const file = join(tmp, 'state.db');
  const sqlite = sqliteStore(file);
  await writeScenarios(sqlite);
  await sqlite.close();
  if (existsSync(`${file}-wal`) && readFileSync(`${file}-wal`).length > 0) throw new Error('the SQLite WAL was not checkpointed at close');
  copyFileSync(file, join(out, 'state.db'));
  // SQLite makes its files owner-only: the fixture is read by everyone who checks the tree out.
  chmodSync(join(out, 'state.db'), 0o644);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

// JetStream: run on a nats-server of our own, dump its bucket and streams.
const server = await startNatsServer();
try {
  const connection = await connectNats({ servers: server.url });
  const store = jetstreamStore({ connection });
  await writeScenarios(store);
  await store.close();
  writeFileSync(join(out, 'jetstream.json'), json(await dumpJetStream(connection)));
  await connection.drain();
} finally {
  await server.stop();
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const xstate = JSON.parse(readFileSync(join(root, 'node_modules', 'xstate', 'package.json'), 'utf8')) as { version: string };
writeFileSync(
  join(out, 'manifest.json'),
  json({
    fixtureSet: FIXTURE_SET,
    xswarm: pkg.version,
    xstate: xstate.version,
    swarmMachineVersion: SWARM_MACHINE_VERSION,
    eventFormat: EVENT_FORMAT,
    jetstreamRecordFormat: RECORD_FORMAT,
    writtenAt: new Date().toISOString(),
  }),
);
console.log(`wrote ${out}`);
