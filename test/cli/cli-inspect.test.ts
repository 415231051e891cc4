/**
 * `xswarm inspect`: the inspector page's address for a swarm or a team, as a child process
 * (`node bin/xswarm.js inspect …`): the server from --url (default the one `xswarm serve`
 * listens on), the token in the fragment only with --with-token, ids checked, and --open
 * handing the address to the system's opener (a stand-in `xdg-open` here), or saying it could not.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inspectorUrl } from '../../src/cli/inspect.js';
import { guardCheckoutState } from '../support/checkout-guard.js';
import { killCliProcesses, printed, runCli, startCli } from '../support/cli-process.js';
import { tempDirs } from '../support/temp-dirs.js';

const tempDir = tempDirs();
guardCheckoutState();
afterAll(() => killCliProcesses());

describe('xswarm inspect', () => {
  it("prints the page's address for a swarm, a team, or the list", async () => {
    const [swarm, child, team, list, url] = await Promise.all([
      runCli(['inspect', 'trip-1']),
      runCli(['inspect', 'trip-1:t2:0']),
      runCli(['inspect', '--team', 'crew/sprint+1']),
      runCli(['inspect']),
      runCli(['inspect', 'trip-1', '--url', 'http://localhost:5000/']),
    ]);
    expect([swarm.code, swarm.stdout, swarm.stderr]).toEqual([0, 'http://127.0.0.1:4000/inspector/#swarm=trip-1\n', '']);
    expect(child.stdout).toBe('http://127.0.0.1:4000/inspector/#swarm=trip-1:t2:0\n');
    expect(team.stdout).toBe('http://127.0.0.1:4000/inspector/#team=crew/sprint%2B1\n');
    expect(list.stdout).toBe('http://127.0.0.1:4000/inspector/\n');
    expect(url.stdout).toBe('http://localhost:5000/inspector/#swarm=trip-1\n');
  });

  it('puts the token in the fragment only with --with-token', async () => {
    const file = join(tempDir('xswarm-inspect-token-'), 'token');
    writeFileSync(file, 's3cret&x=1\n');
    const [fromEnv, notAsked, fromFile, missing, unasked] = await Promise.all([
      runCli(['inspect', 'trip-1', '--with-token'], { XSWARM_TOKEN: 'env-token' }),
      runCli(['inspect', 'trip-1'], { XSWARM_TOKEN: 'env-token' }),
      runCli(['inspect', 'trip-1', '--with-token', '--token-file', file]),
      runCli(['inspect', 'trip-1', '--with-token']),
      runCli(['inspect', 'trip-1', '--token-file', file]),
    ]);
    expect(fromEnv.stdout).toBe('http://127.0.0.1:4000/inspector/#swarm=trip-1&token=env-token\n');
    expect(notAsked.stdout).toBe('http://127.0.0.1:4000/inspector/#swarm=trip-1\n');
    // Encoded: the token's own `&` and `=` do not split the fragment.
    expect(fromFile.stdout).toBe('http://127.0.0.1:4000/inspector/#swarm=trip-1&token=s3cret%26x%3D1\n');
    expect([missing.code, missing.stderr]).toEqual([2, 'xswarm inspect: --with-token needs a token: --token-file PATH, --token T or XSWARM_TOKEN\n']);
    expect(unasked.code).toBe(2);
  });

  it('refuses an invalid id, a swarm and a team at once, a malformed --team or --url (exit 2)', async () => {
    const results = await Promise.all(
      [
        ['inspect', 'a/b'],
        ['inspect', 'a', '--team', 'crew/x'],
        ['inspect', '--team', 'crew'],
        ['inspect', '--team', 'crew/'],
        ['inspect', '--team', 'crew/a b'],
        ['inspect', 'a', '--url', 'ftp://host'],
        ['inspect', 'a', '--url', 'not a url'],
        ['inspect', 'a', 'b'],
      ].map((args) => runCli(args)),
    );
    for (const r of results) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
    }
    expect(results[0]!.stderr).toMatch(/^xswarm inspect: Invalid swarm id: a swarm id may not contain "\/"/);
    expect(results[4]!.stderr).toMatch(/^xswarm inspect: --team crew\/a b: an id may not contain U\+0020/);
  });

  it('--open hands the address to the opener, and says so when there is none', async () => {
    const bin = tempDir('xswarm-inspect-open-');
    const seen = join(bin, 'seen');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const opened = await runCli(['inspect', 'trip-1', '--open'], { PATH: bin });
    expect([opened.code, opened.stdout, opened.stderr]).toEqual([0, 'http://127.0.0.1:4000/inspector/#swarm=trip-1\n', '']);
    expect(readFileSync(seen, 'utf8')).toBe('http://127.0.0.1:4000/inspector/#swarm=trip-1');
    const none = await runCli(['inspect', 'trip-1', '--open'], { PATH: tempDir('xswarm-inspect-empty-') });
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('http://127.0.0.1:4000/inspector/#swarm=trip-1\n');
    expect(none.stderr).toBe('xswarm inspect: could not open a browser (xdg-open: ENOENT); open the address above\n');
  }, 15_000);

  it('matches xswarm serve: the printed PAGE serves the page files, and inspect --url points there', async () => {
    const served = startCli(['serve', 'test/fixtures/cli-swarms.ts', '--port', '0'], { XSWARM_DB: join(tempDir('xswarm-inspect-serve-'), 'state.db') });
    const [, url, page] = await printed(served, / at (http:\/\/\S+) \(state:[\s\S]*PAGE {2}(\S+) \(the inspector page\)/);
    expect(page).toBe(`${url}/inspector/`);
    expect((await fetch(`${page}swarm-chart.json`)).status).toBe(200);
    const printedUrl = (await runCli(['inspect', 'r1', '--url', url!])).stdout;
    expect(printedUrl).toBe(`${url}/inspector/#swarm=r1\n`);
    served.child.kill('SIGTERM');
    expect((await served.done).code).toBe(0);
  }, 60_000);

  it('builds the same address as a function (for embedders and the page)', () => {
    expect(inspectorUrl('http://h:1/', { swarmId: 'x:t1:0' }, 't k')).toBe('http://h:1/inspector/#swarm=x:t1:0&token=t%20k');
    expect(inspectorUrl('http://h:1', { team: { definitionId: 'd', teamId: 't' } })).toBe('http://h:1/inspector/#team=d/t');
  });
});
