/**
 * A budget across kill -9 (issue 30, "limit → pause → extend → resume → complete, across a kill
 * -9"): a process pauses at its budget and is killed; the next extends it, resumes and is killed
 * in the middle of the call the extension allowed (its reservation held in the ledger); the third
 * makes that call again and completes. The spend is kept across the kills and the re-made call
 * finds its own reservation, so it counts once; nothing stays reserved; the replay makes no call.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, scriptedModel, sqliteStore, tool } from '../../src/index.js';
import { exited, firstLine, killAll, runFixture, startFixture } from '../support/crash-process.js';
import { collect } from '../support/script.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/budget-crash.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'xswarm-budget-crash-'));

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

it('limit → pause → kill -9 → extend → resume → kill -9 mid-call → complete, spend counted once', async () => {
  const db = join(dir, 'state.db');
  const env = { MODEL_LOG: join(dir, 'model.txt'), OWNER: 'budget-crash' };
  const args = (mode: string) => [db, 'bc1', mode];

  const first = startFixture(FIXTURE, args('run'), env);
  expect(await firstLine(first)).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { limit: 'modelCalls', max: 2, spent: 2, left: 0 } } });
  first.kill('SIGKILL');
  await exited(first);

  const second = startFixture(FIXTURE, args('extend'), env);
  expect(await firstLine(second)).toEqual({ calling: true });
  second.kill('SIGKILL');
  await exited(second);

  const third = await runFixture(FIXTURE, args('finish'), env);
  expect(third.code, third.stderr).toBe(0);
  expect(JSON.parse(third.stdout.trim().split('\n').at(-1)!)).toEqual({ status: 'completed', result: 'done after 2 notes' });
  // Calls made: two, paused; the third, killed mid-call; made again after the restart.
  expect(readFileSync(env.MODEL_LOG, 'utf8').trim().split('\n')).toEqual(['run:2', 'run:4', 'extend:7', 'finish:7']);

  const store = sqliteStore(db);
  try {
    const account = await store.budgets!.account('swarm:bc1');
    // The re-made third call found its own reservation: three calls counted, not four; none held.
    expect(account).toMatchObject({ caps: { modelCalls: 3 }, spent: { modelCalls: 3, tokens: 45 }, reserved: { modelCalls: 0, tokens: 0 } });
    let calls = 0;
    const note = tool({ name: 'note', description: 'Notes a step', parameters: z.object({ step: z.number() }), execute: () => calls++ });
    const rt = createRuntime({
      swarms: [defineSwarm({ id: 'planner', instructions: 'Take notes.', tools: [note], maxTurns: 20 })],
      model: scriptedModel(() => {
        calls++;
        return { text: 'no' };
      }),
      store,
    });
    const events = await collect(rt.forSwarm('planner', 'bc1').events());
    expect(await collect(rt.replay('bc1'))).toEqual(events);
    expect(calls).toBe(0);
    await rt.close();
  } finally {
    await store.close();
  }
}, 60_000);
