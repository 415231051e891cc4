/**
 * A guardrail's pause survives a crash: a process killed by `SIGKILL` while its swarm waits at
 * a guardrail leaves it paused in the store; the next runtime finds it paused with the same
 * reason, a resume runs the held call exactly once, and the replay makes zero calls.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFixture } from '../support/crash-process.js';
import { deleterModel, opsSwarm } from '../support/guardrail-ops.js';
import { collect } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-guardrail-crash-');
const FIXTURE = join(import.meta.dirname, '../fixtures/guardrail-crash.ts');

describe('a guardrail pause across a kill -9', () => {
  it('is found paused by the next runtime; resume runs the held call once; replay makes zero calls', async () => {
    const effects = join(file.dir, 'effects.log');
    const crashed = await runFixture(FIXTURE, [file.path, 'g1', effects]);
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const printed = JSON.parse(crashed.stdout.trim()) as { status: string; result: { reason: { type: string; pauseId: string } } };
    expect(printed).toMatchObject({ status: 'paused', result: { reason: { type: 'GUARDRAIL', pauseId: 'guardrail:t0:1' } } });
    expect(existsSync(effects)).toBe(false);

    const rt = file.runtime({ swarms: [opsSwarm(effects)], model: deleterModel(), store: file.open() });
    await rt.start();
    const client = rt.forSwarm('ops', 'g1');
    expect(await client.getResult()).toMatchObject({
      status: 'paused',
      reason: { type: 'GUARDRAIL', pauseId: 'guardrail:t0:1', guardrail: { guardrail: 'no-system-files', step: 'toolCall', callId: 'd1' } },
    });
    await client.resume('go ahead', { pauseId: 'guardrail:t0:1' });
    expect(await client.wait()).toEqual({ status: 'completed', result: 'after: deleted /etc/passwd' });
    expect(readFileSync(effects, 'utf8')).toBe('/etc/passwd\n');
    expect(await collect(rt.replay('g1'))).toEqual(await collect(client.events()));
    expect(readFileSync(effects, 'utf8')).toBe('/etc/passwd\n');
  });
});
