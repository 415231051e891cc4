/**
 * `xswarm resume` answering a typed pause (issue 30, item 8): `--pause-id` names the pause (a
 * stale one is refused), `--answer` gives the typed answer as JSON (checked against the pause's
 * schema); every refusal says what is wrong, exits with its code and changes nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { model, swarms } from '../fixtures/cli-answers.js';
import { guardCheckoutState } from '../support/checkout-guard.js';
import { killCliProcesses, runCli } from '../support/cli-process.js';

const MODULE = 'test/fixtures/cli-answers.ts';
let dir: string;

guardCheckoutState();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xswarm-cli-answers-'));
});
afterAll(async () => {
  killCliProcesses();
  await rm(dir, { recursive: true, force: true });
});

describe('xswarm resume of a typed pause', () => {
  it('refuses a wrong shape, a stale --pause-id and bad JSON with nothing changed, then --answer with --pause-id completes it', { timeout: 60_000 }, async () => {
    const db = join(dir, 'state.db');
    const xswarm = (args: string[]) => runCli(args, { XSWARM_DB: db });
    const paused = await xswarm(['run', MODULE, 'booker', 'book a day', '--id', 'b1']);
    expect(paused.code, paused.stderr).toBe(3);
    const result = await xswarm(['list', '--status', 'paused', '--json']);
    expect(JSON.parse(result.stdout)).toMatchObject([{ swarmId: 'b1', result: { status: 'paused', reason: { pauseId: 'q1', responseSchema: { required: ['day'] } } } }]);

    const before = (await xswarm(['events', 'b1', '--json'])).stdout;
    // One at a time: each takes the swarm over in its own process.
    const wrong = await xswarm(['resume', 'b1', '--answer', '{"day":"Monday"}', '--module', MODULE]);
    const stale = await xswarm(['resume', 'b1', '--answer', '{"day":"Sunday"}', '--pause-id', 'q0', '--module', MODULE]);
    // Usage errors, refused before anything is opened.
    const [notJson, both, elsewhere] = await Promise.all([
      xswarm(['resume', 'b1', '--answer', '{day:', '--module', MODULE]),
      xswarm(['resume', 'b1', 'Sunday', '--answer', '{"day":"Sunday"}', '--module', MODULE]),
      xswarm(['stop', 'b1', '--pause-id', 'q1']),
    ]);
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringMatching(/does not match the response schema.*day/)]);
    expect([stale.code, stale.stderr]).toEqual([5, expect.stringContaining('not paused at "q0" (a stale pause id): its current pause is "q1"')]);
    expect([notJson.code, notJson.stderr]).toEqual([2, expect.stringContaining(`--answer must be JSON, such as --answer '{"approved":true}'`)]);
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining('either as the message or with --answer, not both')]);
    expect([elsewhere.code, elsewhere.stderr]).toEqual([2, expect.stringContaining('--pause-id and --answer are for resume only')]);
    expect((await xswarm(['events', 'b1', '--json'])).stdout).toBe(before);

    const done = await xswarm(['resume', 'b1', '--answer', '{"day":"Sunday"}', '--pause-id', 'q1', '--module', MODULE]);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/Booked for \{"day":"Sunday"\}\n$/);
  });

  it('sends --answer and --pause-id to `xswarm serve` with --url: refusals keep their message and code', { timeout: 60_000 }, async () => {
    const runtime = createRuntime({ swarms, model });
    const server = await serve(runtime, { token: 'secret' });
    try {
      const client = runtime.forSwarm('booker', 'u1');
      await client.run('book a day');
      await client.wait();
      const xswarm = (args: string[]) => runCli([...args, '--url', server.url], { XSWARM_TOKEN: 'secret' });
      const [wrong, stale] = await Promise.all([
        xswarm(['resume', 'u1', '--answer', '{"day":"Monday"}']),
        xswarm(['resume', 'u1', '--answer', '{"day":"Sunday"}', '--pause-id', 'q0']),
      ]);
      expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringMatching(/answered 400: .*does not match the response schema/)]);
      expect([stale.code, stale.stderr]).toEqual([5, expect.stringMatching(/answered 409: .*stale pause id/)]);
      expect(await client.getResult()).toMatchObject({ status: 'paused', reason: { pauseId: 'q1' } });
      const done = await xswarm(['resume', 'u1', '--answer', '{"day":"Saturday"}', '--pause-id', 'q1']);
      expect([done.code, done.stderr]).toEqual([0, '']);
      expect(await client.wait()).toEqual({ status: 'completed', result: 'Booked for {"day":"Saturday"}' });
    } finally {
      await server.close();
      await runtime.close();
    }
  });
});
