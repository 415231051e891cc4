/**
 * `xswarm approve|reject` and `xswarm run` at a pause for approvals, as a user runs them
 * (`node bin/xswarm.js …` on a temporary SQLite file, module test/fixtures/cli-approvals.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killCliProcesses, runCli } from '../support/cli-process.js';

const MODULE = 'test/fixtures/cli-approvals.ts';
const TIMEOUT = { timeout: 60_000 };
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xswarm-cli-approvals-'));
});
afterAll(async () => {
  killCliProcesses();
  await rm(dir, { recursive: true, force: true });
});

describe.concurrent('xswarm approve | reject', () => {
  it('run stops at the pause with the commands that answer it; approve and reject answer; a forged id is refused', TIMEOUT, async () => {
    const env = { XSWARM_DB: join(dir, 'a.db') };
    const ran = await runCli(['run', MODULE, 'deploy', 'go', '--id', 'd1'], env, '');
    expect(ran.code, ran.stderr).toBe(3);
    expect(ran.stderr).toMatch(/stays paused for approval; answer it with:\n.* approve d1 apr_\S+ \[--always\] --module/);
    const forged = await runCli(['approve', 'd1', 'apr_forgedforgedforgedforg', '--module', MODULE], env, '');
    expect(forged.code).toBe(5);
    expect(forged.stderr).toContain('is not pending on swarm "d1"');
    const [first, second] = [...ran.stderr.matchAll(/approve d1 (apr_\S+)/g)].map((m) => m[1]!);
    expect(first).toBeDefined();
    expect(second).toBeUndefined();
    const approved = await runCli(['approve', 'd1', first!, '--module', MODULE], env, '');
    // The second call still waits: the driven swarm stops at it again (exit 3), naming it.
    expect(approved.code, approved.stderr).toBe(3);
    const next = /approve d1 (apr_\S+)/.exec(approved.stderr)?.[1];
    expect(next).toMatch(/^apr_/);
    expect(next).not.toBe(first);
    const rejected = await runCli(['reject', 'd1', next!, 'not', 'today', '--module', MODULE], env, '');
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stdout.trimEnd().split('\n').at(-1)).toBe('shipped a | The call was rejected by a human: not today');
    const usage = await runCli(['reject', 'd1', next!, '--module', MODULE], env, '');
    expect(usage.code).toBe(2);
  });

  it('run answers each pending approval from stdin: y approves, a line rejects with it', TIMEOUT, async () => {
    const env = { XSWARM_DB: join(dir, 'b.db') };
    const ran = await runCli(['run', MODULE, 'deploy', 'go', '--id', 'd2', '--json'], env, 'y\nwrong build\n');
    expect(ran.code, ran.stderr).toBe(0);
    const last = JSON.parse(ran.stdout.trimEnd().split('\n').at(-1)!) as { metadata?: { result?: unknown } };
    expect(last.metadata?.result).toBe('shipped a | The call was rejected by a human: wrong build');
    expect(ran.stderr).toContain('approve ship({"build":"a"}) for deploy?');
  });
});
