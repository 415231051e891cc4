/**
 * The bearer token on a WebSocket upgrade as a subprotocol (`xswarm.bearer.<base64url>`), the
 * way a browser page passes it, besides the `Authorization` header; the server answers with the
 * subprotocol `xswarm`, never echoing the token.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createRuntime, scriptedModel } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { servedPerTest } from '../support/server-clients.js';

const served = servedPerTest();
// Its base64 has `+`, `/` and `=`: base64url must carry them.
const TOKEN = 'secret>>>???~';
const bearer = (token: string) => `xswarm.bearer.${Buffer.from(token, 'utf8').toString('base64url')}`;

async function start(token?: string): Promise<string> {
  served.runtime = createRuntime({ model: scriptedModel(() => ({ text: 'done' })) });
  served.server = await serve(served.runtime, token ? { token } : {});
  return `${served.server.url.replace(/^http/, 'ws')}/events`;
}

/** Opens a socket; resolves with the agreed subprotocol, or the refusing HTTP status. */
function connect(url: string, protocols: string[], headers: Record<string, string> = {}): Promise<{ protocol: string } | { status: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('open', () => {
      resolve({ protocol: ws.protocol });
      ws.close();
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

describe('the token as a subprotocol', () => {
  it('accepts the right token and answers with the subprotocol xswarm', async () => {
    const url = await start(TOKEN);
    expect(await connect(url, ['xswarm', bearer(TOKEN)])).toEqual({ protocol: 'xswarm' });
    // Order does not matter; the answer is never the token's subprotocol.
    expect(await connect(url, [bearer(TOKEN), 'xswarm'])).toEqual({ protocol: 'xswarm' });
  });

  it('carries any text token (UTF-8 before base64url)', async () => {
    const url = await start('tök€n ünïcode');
    expect(await connect(url, ['xswarm', bearer('tök€n ünïcode')])).toEqual({ protocol: 'xswarm' });
    expect(await connect(url, ['xswarm', bearer('tok€n ünïcode')])).toEqual({ status: 401 });
  });

  it('refuses a wrong token or none with 401', async () => {
    const url = await start(TOKEN);
    expect(await connect(url, ['xswarm', bearer('wrong')])).toEqual({ status: 401 });
    expect(await connect(url, ['xswarm', bearer(`${TOKEN}x`)])).toEqual({ status: 401 });
    expect(await connect(url, ['xswarm'])).toEqual({ status: 401 });
    expect(await connect(url, [])).toEqual({ status: 401 });
    // Not base64url of the token: the raw token as the suffix.
    expect(await connect(url, ['xswarm', `xswarm.bearer.${encodeURIComponent(TOKEN).replace(/%/g, '_')}`])).toEqual({ status: 401 });
  });

  it('still accepts the Authorization header (then the subprotocol is optional)', async () => {
    const url = await start(TOKEN);
    expect(await connect(url, [], { authorization: `Bearer ${TOKEN}` })).toEqual({ protocol: '' });
    expect(await connect(url, ['xswarm'], { authorization: `Bearer ${TOKEN}` })).toEqual({ protocol: 'xswarm' });
  });

  it('without a token configured, a page offering only xswarm connects', async () => {
    const url = await start();
    expect(await connect(url, ['xswarm'])).toEqual({ protocol: 'xswarm' });
    expect(await connect(url, [])).toEqual({ protocol: '' });
  });

  it('the subprotocol does not replace the token on plain HTTP requests', async () => {
    const url = await start(TOKEN);
    const res = await fetch(`${url.replace(/^ws/, 'http').replace(/\/events$/, '')}/swarms`, { headers: { 'sec-websocket-protocol': `xswarm, ${bearer(TOKEN)}` } });
    expect(res.status).toBe(401);
  });

  it('a foreign Origin is refused (403) even with the right token', async () => {
    const url = await start(TOKEN);
    expect(await connect(url, ['xswarm', bearer(TOKEN)], { origin: 'http://evil.example' })).toEqual({ status: 403 });
  });
});
