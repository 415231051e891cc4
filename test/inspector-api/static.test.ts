/**
 * The inspector page's files at `/inspector`: served from the package's `inspector/` folder
 * without a token but under the Host/Origin policy, with the security headers; nothing outside
 * the folder (or of another kind) can be reached. And how the folder is found: walking up to
 * the package root, from `src/` and from a packed `dist/src/` alike.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime, scriptedModel } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { INSPECTOR_HEADERS, inspectorRoot } from '../../src/server/inspector/static.js';
import { REPO_ROOT } from '../support/repo-root.js';
import { servedPerTest } from '../support/server-clients.js';
import { tempDirs } from '../support/temp-dirs.js';

const served = servedPerTest();
const tempDir = tempDirs();
const TOKEN = 'static-secret';

async function start(): Promise<string> {
  served.runtime = createRuntime({ model: scriptedModel(() => ({ text: 'done' })) });
  served.server = await serve(served.runtime, { token: TOKEN });
  return served.server.url;
}

describe('serving the page', () => {
  it('serves swarm-chart.json without a token, with the security headers', async () => {
    const url = await start();
    const res = await fetch(`${url}/inspector/swarm-chart.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    for (const [name, value] of Object.entries(INSPECTOR_HEADERS)) expect(res.headers.get(name), name).toBe(value);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await res.text()).toBe(readFileSync(join(REPO_ROOT, 'inspector/swarm-chart.json'), 'utf8'));
    const head = await fetch(`${url}/inspector/swarm-chart.json`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(100);
  });

  it('redirects /inspector to /inspector/ (308), and serves index.html there when the page is present', async () => {
    const url = await start();
    const res = await fetch(`${url}/inspector?x=1`, { redirect: 'manual' });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/inspector/?x=1');
    const index = await fetch(`${url}/inspector/`);
    if (existsSync(join(REPO_ROOT, 'inspector/index.html'))) {
      expect(index.status).toBe(200);
      expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(index.headers.get('content-security-policy')).toBe(INSPECTOR_HEADERS['content-security-policy']);
    } else {
      expect(index.status).toBe(404);
    }
  });

  it('answers 404 for missing files, other names, sub-folders and traversal, without reading outside the folder', async () => {
    const url = await start();
    const paths = [
      '/inspector/missing.js',
      '/inspector/Swarm-Chart.json',
      '/inspector/swarm-chart.json.bak',
      '/inspector/notes.txt',
      '/inspector/.hidden.js',
      '/inspector/sub/file.js',
      '/inspector/..%2Fpackage.json',
      '/inspector/%2e%2e%2fpackage.json',
      '/inspector/..%5Cpackage.json',
      '/inspector/package.json',
    ];
    // Sent with the token: a path that is no file of the page needs it (`/inspector/sub/…`), and
    // must then be a 404 as well.
    for (const path of paths) {
      const res = await fetch(url + path, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).not.toContain('"name": "xswarm"');
    }
    expect((await fetch(`${url}/inspector/missing.js`)).status).toBe(404);
    expect((await fetch(`${url}/inspector/sub/file.js`)).status).toBe(401);
    // `fetch` normalises a literal `..`: send it raw to see what the server does with it.
    const raw = await rawGet(url, '/inspector/../package.json');
    expect(raw).toMatch(/^HTTP\/1\.1 (401|404)/);
  });

  it('refuses other methods (405), a foreign Origin or a rebound Host (403)', async () => {
    const url = await start();
    const post = await fetch(`${url}/inspector/swarm-chart.json`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const foreign = await fetch(`${url}/inspector/swarm-chart.json`, { headers: { origin: 'http://evil.example' } });
    expect(foreign.status).toBe(403);
    const rebound = await rawGet(url, '/inspector/swarm-chart.json', 'evil.example');
    expect(rebound).toMatch(/^HTTP\/1\.1 403/);
    const same = await fetch(`${url}/inspector/swarm-chart.json`, { headers: { origin: url } });
    expect(same.status).toBe(200);
  });

  it('keeps the token on the rest of the server (the API, /swarms)', async () => {
    const url = await start();
    expect((await fetch(`${url}/inspector/api/overview`)).status).toBe(401);
    expect((await fetch(`${url}/swarms`)).status).toBe(401);
    expect((await fetch(`${url}/inspector/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });
});

describe('finding the folder', () => {
  it('walks up from the module to the package root: from src/ here', () => {
    expect(inspectorRoot()).toBe(join(REPO_ROOT, 'inspector'));
  });

  it('from dist/src/server/inspector of an installed package, past a package.json of another name', () => {
    const pkg = join(tempDir('xswarm-inspector-'), 'node_modules', 'xswarm');
    const module = join(pkg, 'dist', 'src', 'server', 'inspector');
    mkdirSync(module, { recursive: true });
    mkdirSync(join(pkg, 'inspector'));
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'xswarm' }));
    // A nested manifest that is not ours (as `dist/` might hold for `type`): walked past.
    writeFileSync(join(pkg, 'dist', 'package.json'), JSON.stringify({ type: 'module' }));
    expect(inspectorRoot(module)).toBe(join(pkg, 'inspector'));
  });

  it('fails with a message when there is no package root above', () => {
    const lone = tempDir('xswarm-lone-');
    expect(() => inspectorRoot(lone)).toThrow(/Cannot find the xswarm package root/);
  });
});

/** A GET sent as written (no URL normalisation), with an optional Host; returns the raw answer. */
async function rawGet(base: string, path: string, host?: string): Promise<string> {
  const { connect } = await import('node:net');
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host ?? `${hostname}:${port}`}\r\nConnection: close\r\n\r\n`);
    });
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}
