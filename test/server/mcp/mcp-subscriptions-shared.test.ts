/**
 * Resource subscriptions behind several processes: a 2025-era MCP session on one runtime's
 * server is told of a swarm another runtime drives on the same SQLite file — subscribed before
 * the swarm exists, notified when it starts, pauses, resumes and ends — and hears nothing more
 * once it unsubscribed.
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { serve } from '../../../src/server/index.js';
import { answerModel, dinner } from '../../support/answer-swarms.js';
import { sqliteFilePerTest } from '../../support/sqlite-file.js';
import { until } from '../../support/wait.js';

const file = sqliteFilePerTest('xswarm-mcp-shared-');

describe('MCP resource subscriptions across runtimes sharing a store', () => {
  it('a session on one runtime hears of a swarm the other runtime starts, pauses, resumes and ends', async () => {
    const serving = file.runtime({ swarms: [dinner], model: answerModel().model, store: file.open() });
    const driving = file.runtime({ swarms: [dinner], model: answerModel().model, store: file.open() });
    const server = await serve(serving);
    file.track(server);
    const client = new V1Client({ name: 'xswarm-test-v1', version: '1.0.0' });
    await client.connect(new V1Transport(new URL(`${server.url}/mcp`)));
    file.track(() => client.close());
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    const uri = 'swarm://dinner/shared-1/result';
    const read = async () => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text) as { status: string };

    // Subscribed before the swarm exists anywhere.
    await client.subscribeResource({ uri });
    const swarm = driving.forSwarm(dinner, 'shared-1');
    await swarm.run('plan');
    expect(await swarm.wait()).toMatchObject({ status: 'paused' });
    await until('a first update', () => updates.length >= 1, { timeout: 10_000 });
    await until('the resource to read paused', read, (r) => r.status === 'paused', { timeout: 10_000 });
    expect(new Set(updates)).toEqual(new Set([uri]));

    // The other runtime resumes it to its end: the session hears of it again.
    const beforeResume = updates.length;
    await swarm.resume({ guests: 2 });
    expect((await swarm.wait()).status).toBe('completed');
    await until('an update after the resume', () => updates.length > beforeResume, { timeout: 10_000 });
    await until('the resource to read completed', read, (r) => r.status === 'completed', { timeout: 10_000 });

    // Unsubscribed: a later run of the same definition under another id, or this id, says nothing.
    await client.unsubscribeResource({ uri });
    const after = updates.length;
    const other = driving.forSwarm(dinner, 'shared-2');
    await other.run('plan');
    await other.wait();
    await new Promise((r) => setTimeout(r, 300));
    expect(updates.length).toBe(after);
  });
});
