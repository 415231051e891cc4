/**
 * Known secrets never reach the store: a provider error that echoes the API key, a tool error
 * that echoes a token, are written with `[REDACTED]` in their place (snapshots, events,
 * results), and answered so too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, openaiModel, type SwarmEvent, scriptedModel, tool } from '../../src/index.js';
import { startOpenAIServer } from '../support/openai-server.js';
import { collect } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const API_KEY = 'sk-test-6f1c0e2b9a4d47e8b3c5a1d2e7f90c3b';
const TOKEN = 'tok_live_Zq8rX2mN4pL7sV1c';

/** The test's SQLite file, and what each test opened, closed after it (last opened first). */
const file = sqliteFilePerTest('xswarm-secrets-', { ignoreCloseErrors: true });

/** Occurrences of `secret` in every file of the store's directory (database, WAL, SHM). */
function copiesOnDisk(secret: string): number {
  let n = 0;
  for (const name of readdirSync(file.dir)) n += readFileSync(join(file.dir, name)).toString('latin1').split(secret).length - 1;
  return n;
}

describe('redaction of secrets', () => {
  it('an OpenAI-compatible server echoing the API key in its error: the key is stored zero times, the failure says [REDACTED]', async () => {
    const server = await startOpenAIServer(() => ({
      status: 401,
      body: JSON.stringify({
        error: { message: `Incorrect API key provided: ${API_KEY}. Check your key.`, type: 'invalid_request_error', code: 'invalid_api_key' },
      }),
    }));
    file.track(server);
    const store = file.open();
    const echo = defineSwarm({ id: 'echo', instructions: 'Repeat.' });
    const runtime = createRuntime({ swarms: [echo], model: openaiModel({ model: 'gpt-test', baseURL: server.url, apiKey: API_KEY, maxRetries: 0 }), store });
    file.track(runtime);
    const heard: SwarmEvent[] = [];
    runtime.subscribe((e) => heard.push(e));

    const client = runtime.forSwarm(echo, 's1');
    await client.run('hello');
    const result = await client.wait();
    expect(server.requests).toHaveLength(1);
    expect(result).toEqual({ status: 'failed', reason: expect.stringContaining('Incorrect API key provided: [REDACTED]. Check your key.') });
    expect(JSON.stringify(result)).not.toContain(API_KEY);
    const events = await collect(client.events());
    expect(events.at(-1)).toMatchObject({ metadata: { type: 'failed' } });
    expect(JSON.stringify(events)).not.toContain(API_KEY);
    expect(JSON.stringify(events)).toContain('[REDACTED]');
    expect(JSON.stringify(heard)).not.toContain(API_KEY);
    expect(JSON.stringify(await store.load('s1'))).not.toContain(API_KEY);
    expect(copiesOnDisk(API_KEY)).toBe(0);
  });

  it('createRuntime({ redact }): a token a tool error echoes is kept out of snapshots and events of a swarm that goes on', async () => {
    const store = file.open();
    const charge = tool({
      name: 'charge',
      description: 'Charges a card',
      parameters: z.object({ amount: z.number() }),
      execute: async () => {
        throw new Error(`payment gateway refused token ${TOKEN}: short of funds`);
      },
    });
    const swarm = defineSwarm({ id: 'pay', instructions: 'Charge, then report.', tools: [charge] });
    const model = scriptedModel((req) =>
      req.messages.some((m) => m.role === 'tool')
        ? {
            text: `done: ${req.messages
              .filter((m) => m.role === 'tool')
              .map((m) => m.content)
              .join(' ')}`,
          }
        : { toolCalls: [{ id: 'c1', name: 'charge', arguments: '{"amount":5}' }] },
    );
    const runtime = createRuntime({ swarms: [swarm], model, store, redact: [TOKEN, 'short'] });
    file.track(runtime);
    const client = runtime.forSwarm(swarm, 'p1');
    await client.run('charge 5');
    const result = await client.wait();
    expect(result.status).toBe('completed');
    expect(JSON.stringify(result)).not.toContain(TOKEN);
    expect(JSON.stringify(result)).toContain('[REDACTED]');
    expect(copiesOnDisk(TOKEN)).toBe(0);
    // A secret shorter than 8 characters is ignored: ordinary words stay readable.
    expect(JSON.stringify(await collect(client.events()))).toContain('refused token [REDACTED]: short of funds');
  });
});
