/**
 * `xswarm serve --inspect`: the served module's swarms report to a relay on 127.0.0.1 whose
 * address the command prints; `@statelyai/inspect`'s receiver connected there sees a swarm
 * started over REST, registered under its swarm id. `--inspect-port` alone is a usage error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebSocketReceiver } from '@statelyai/inspect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardCheckoutState } from '../support/checkout-guard.js';
import { killCliProcesses, printed, runCli, startCli } from '../support/cli-process.js';
import { until } from '../support/wait.js';

const MODULE = 'test/fixtures/cli-swarms.ts';
const TIMEOUT = { timeout: 60_000 };
let dir: string;

guardCheckoutState();
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xswarm-inspect-cli-'));
});
afterAll(async () => {
  killCliProcesses();
  await rm(dir, { recursive: true, force: true });
});

describe('xswarm serve --inspect', () => {
  it('prints the relay on 127.0.0.1, where the receiver sees a served swarm by its id', TIMEOUT, async () => {
    const served = startCli(['serve', MODULE, '--port', '0', '--inspect'], { XSWARM_DB: join(dir, 'state.db') });
    const url = (await printed(served, / at (http:\/\/\S+) \(state:/))[1]!;
    const [, page, ws] = await printed(served, /INSPECT (http:\/\/127\.0\.0\.1:\d+\/) \(Stately inspector; @statelyai\/inspect receivers: (ws:\/\/127\.0\.0\.1:\d+\/)\)/);
    expect((await fetch(page!)).status).toBe(200);

    const frames: { type: string; name?: string; sessionId: string }[] = [];
    createWebSocketReceiver({ server: ws! }).subscribe((e) => frames.push(e as never));
    await new Promise((r) => setTimeout(r, 100));
    const started = await fetch(`${url}/swarms/asker`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'book a day', swarmId: 'seen-1' }),
    });
    expect(started.status).toBe(201);
    const root = (await until('the swarm to register', () => frames.find((f) => f.type === '@xstate.actor' && f.name === 'seen-1')))!;
    await until('its snapshots', () => frames.some((f) => f.type === '@xstate.snapshot' && f.sessionId === root.sessionId));

    served.child.kill('SIGTERM');
    expect((await served.done).code).toBe(0);
  });

  it('refuses --inspect-port without --inspect', TIMEOUT, async () => {
    const done = await runCli(['serve', MODULE, '--inspect-port', '4999'], { XSWARM_DB: join(dir, 'other.db') });
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('--inspect-port goes with --inspect');
  });
});
