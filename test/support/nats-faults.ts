/**
 * The per-test fixtures of the NATS fault suites: a fresh `nats-server -js` and scratch
 * directory for each test; after it, the runtimes it registered closed, the fixture processes it
 * started killed, the server stopped and the directory removed. Fault tests kill and restart the
 * server and processes, so nothing is shared between tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach } from 'vitest';
import type { Runtime } from '../../src/index.js';
import { killAll } from './crash-process.js';
import { type NatsServer, natsServerMissing, startNatsServer } from './nats-server.js';

/** Registers the hooks; the returned object reads this test's server and directory. */
export function natsFaultFixtures(scratchPrefix: string): { readonly server: NatsServer; readonly dir: string; readonly runtimes: Runtime[] } {
  let server: NatsServer | undefined;
  let dir = '';
  const runtimes: Runtime[] = [];
  beforeEach(async () => {
    if (natsServerMissing) return;
    server = await startNatsServer();
    dir = mkdtempSync(join(tmpdir(), scratchPrefix));
  });
  afterEach(async () => {
    for (const r of runtimes.splice(0)) await r.close();
    await killAll();
    if (natsServerMissing) return;
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(killAll);
  return {
    get server() {
      return server!;
    },
    get dir() {
      return dir;
    },
    runtimes,
  };
}
