/**
 * The per-test fixtures of the NATS fault suites: a fresh `nats-server -js` and scratch
 * directory for each test; after it, the runtimes it registered closed, the fixture processes it
 * started killed, the server stopped and the directory removed. Fault tests kill and restart the
 * server and processes, so nothing is shared between tests. Also: reading a fixture process's
 * JSON lines.
 */
import type { ChildProcess } from 'node:child_process';
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

/** Resolves with the first JSON line of a child's stdout that `match` accepts (rejects when it exits first). */
export function jsonLine<T>(child: ChildProcess, match: (line: Record<string, unknown>) => boolean, timeoutMs = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`no matching line within ${timeoutMs} ms\n${stderr}`)), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const onData = (d: Buffer) => {
      buffer += d.toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const parsed = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
        buffer = buffer.slice(nl + 1);
        if (match(parsed)) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          resolve(parsed as T);
          return;
        }
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`process exited (${code ?? signal}) before a matching line\n${stderr}`));
    });
  });
}
