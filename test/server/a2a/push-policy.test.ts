/**
 * The SSRF policy of push-notification webhooks: through the server (the SDK client and raw
 * JSON-RPC, v1.0 and v0.3), refused URLs are a clear invalid-params error and start no task;
 * the operator's allowedPushHosts let them through; a host name is judged by the addresses it
 * resolves to, and the delivery connects to the address checked (DNS rebinding).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { checkPushTarget, isNonPublicAddress, PushTargetError } from '../../../src/server/a2a/push-policy.js';
import { postPush } from '../../../src/server/a2a/push-post.js';
import { MODES, sdkClient, sendRequest, userText } from '../../support/a2a-peers.js';
import { queueModel } from '../../support/script.js';
import { servedPerTest } from '../../support/server-clients.js';

const echo = defineSwarm({ id: 'echo', name: 'Echo', description: 'Echoes the request', instructions: 'Repeat the request.' });
const served = servedPerTest();

async function start(allowedPushHosts?: string[]) {
  served.runtime = createRuntime({ swarms: [echo], model: queueModel({ echo: [{ text: 'ok' }, { text: 'ok' }] }) });
  served.server = await serve(served.runtime, allowedPushHosts ? { allowedPushHosts } : {});
  return { base: served.server.url, cardUrl: `${served.server.url}/a2a/echo/.well-known/agent-card.json`, rt: served.runtime };
}

const REFUSED = [
  'http://127.0.0.1:9/hook',
  'http://localhost:9/hook',
  'http://10.1.2.3/hook',
  'http://169.254.169.254/latest/meta-data',
  'http://192.168.1.1/hook',
  'http://[::1]:9/hook',
  'http://[fe80::1]/hook',
  'http://[::ffff:127.0.0.1]/hook',
  'http://0.0.0.0/hook',
  'file:///etc/passwd',
];

function rpc(url: string, body: unknown, v1: boolean) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(v1 ? { 'A2A-Version': '1.0' } : {}) }, body: JSON.stringify(body) }).then(
    (r) => r.json() as Promise<{ error?: { code: number; message: string }; result?: unknown }>,
  );
}

describe('push webhook URLs (SSRF)', () => {
  it('the agent card advertises push notifications', async () => {
    const { cardUrl } = await start();
    const card = async (headers: Record<string, string>) => (await (await fetch(cardUrl, { headers })).json()) as { capabilities: { pushNotifications?: boolean } };
    expect((await card({ 'A2A-Version': '1.0' })).capabilities.pushNotifications).toBe(true);
    expect((await card({})).capabilities.pushNotifications).toBe(true);
  });

  it('refuses loopback, private, link-local, unspecified and file: URLs with invalid params, starting nothing', async () => {
    const { base, rt } = await start();
    for (const url of REFUSED) {
      const v1 = await rpc(
        `${base}/a2a/echo`,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] }, configuration: { taskPushNotificationConfig: { url } } },
        },
        true,
      );
      expect(v1.error, url).toMatchObject({ code: -32602, message: expect.stringMatching(/refused|not an http/) });
      const v03 = await rpc(
        `${base}/a2a/echo`,
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'message/send',
          params: {
            message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
            configuration: { pushNotificationConfig: { url } },
          },
        },
        false,
      );
      expect(v03.error, url).toMatchObject({ code: -32602, message: expect.stringMatching(/refused|not an http/) });
    }
    expect(await rt.list()).toHaveLength(0);
  });

  it('refuses them on the config methods too (SDK client); allowedPushHosts lets the named host through, no other', async () => {
    const { cardUrl } = await start(['127.0.0.1']);
    for (const mode of MODES) {
      const client = await sdkClient(cardUrl, mode);
      const task = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'hi')))) as { id: string };
      const config = (url: string) => ({ tenant: '', id: '', taskId: task.id, url, token: '', authentication: undefined });
      await expect(client.createTaskPushNotificationConfig(config('http://10.0.0.7/hook'))).rejects.toThrow(/refused/);
      await expect(client.createTaskPushNotificationConfig(config('http://169.254.169.254/'))).rejects.toThrow(/refused/);
      await expect(client.createTaskPushNotificationConfig(config('http://[::1]:9/hook'))).rejects.toThrow(/refused/);
      expect((await client.createTaskPushNotificationConfig(config('http://127.0.0.1:9/hook'))).url).toBe('http://127.0.0.1:9/hook');
    }
    // The tasks had ended: their configs are kept (Get, List) with nothing left to deliver.
    expect(served.runtime!.store.pushOutbox!.pending()).toEqual([]);
  });

  it('judges a host name by every address it resolves to', async () => {
    const resolver = (map: Record<string, string[]>) => async (host: string) =>
      (map[host] ?? []).map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
    const dns = resolver({ 'public.test': ['93.184.216.34'], 'mixed.test': ['93.184.216.34', '10.0.0.1'], 'inside.test': ['172.20.0.5'] });
    expect((await checkPushTarget('https://public.test/hook', [], dns)).address).toEqual({ address: '93.184.216.34', family: 4 });
    await expect(checkPushTarget('https://mixed.test/hook', [], dns)).rejects.toThrow(/mixed\.test resolves to 10\.0\.0\.1/);
    await expect(checkPushTarget('https://inside.test/hook', [], dns)).rejects.toBeInstanceOf(PushTargetError);
    await expect(checkPushTarget('https://nowhere.test/hook', [], dns)).rejects.toThrow(/resolves to no address/);
    // Allowed by name, or by the address it resolves to.
    expect((await checkPushTarget('https://inside.test/hook', ['inside.test'], dns)).address.address).toBe('172.20.0.5');
    expect((await checkPushTarget('https://inside.test/hook', ['172.20.0.5'], dns)).address.address).toBe('172.20.0.5');
    await expect(checkPushTarget('http://user:pw@public.test/', [], dns)).rejects.toThrow(/credentials/);
    for (const a of [
      '127.0.0.1',
      '10.9.9.9',
      '172.31.0.1',
      '192.168.0.1',
      '169.254.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
    ]) {
      expect(isNonPublicAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111']) expect(isNonPublicAddress(a), a).toBe(false);
  });

  it('connects to the address checked, not to a fresh lookup of the name (DNS rebinding), and follows no redirect', async () => {
    const hits: string[] = [];
    const local = createServer((req, res) => {
      hits.push(`${req.headers.host} ${req.url}`);
      if (req.url === '/moved') res.writeHead(302, { location: 'http://10.0.0.1/' }).end();
      else res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => local.close(() => resolve())));
    const port = (local.address() as AddressInfo).port;
    const message = { eventId: 't:1', body: '{}', contentType: 'application/json' };
    // `rebind.invalid` resolves nowhere: the request reaches the pinned address regardless.
    await postPush({ url: new URL(`http://rebind.invalid:${port}/hook`), address: { address: '127.0.0.1', family: 4 } }, message, 2000);
    expect(hits).toEqual([`rebind.invalid:${port} /hook`]);
    await expect(postPush({ url: new URL(`http://127.0.0.1:${port}/moved`), address: { address: '127.0.0.1', family: 4 } }, message, 2000)).rejects.toThrow(/HTTP 302/);
    expect(hits).toHaveLength(2);
  });
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});
