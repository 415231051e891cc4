/**
 * Approvals survive a kill -9: a swarm paused for two approvals (its orchestrator's gated call
 * and its agent's) is killed by SIGKILL; a new process restores it waiting for the same
 * approvals, the answers given there run (or reject) each call exactly once, and the swarm
 * completes. Fixture: test/fixtures/approvals-crash.ts, on a SQLite file in a temp folder.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { PendingApproval } from '../../src/index.js';
import { runFixture } from '../support/crash-process.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/approvals-crash.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'xswarm-approvals-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('approvals across a kill -9', () => {
  it('restored waiting for the same approvals; answered in the next process, each call runs once', async () => {
    const db = join(dir, 'state.db');
    const effects = join(dir, 'effects');
    const killed = await runFixture(FIXTURE, ['start', db, effects]);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const before = lines(killed.stdout)[0]!.pending as PendingApproval[];
    expect(before.map((p) => [p.agent, p.tool, p.callId])).toEqual([
      ['desk', 'ship', 's1'],
      ['clerk', 'ship', 'k1'],
    ]);

    const answered = await runFixture(FIXTURE, ['answer', db, effects]);
    expect(answered.code, answered.stderr).toBe(0);
    const [found, done] = lines(answered.stdout);
    expect(found!.pending).toEqual(before);
    expect(done!.result).toEqual({ status: 'completed', result: 'clerk: shipped b | The call was rejected by a human: not a' });
    expect(readFileSync(effects, 'utf8')).toBe('ship b\n');
  });
});
