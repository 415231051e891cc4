/**
 * The command the CLI suggests running next (e.g. to resume a paused swarm) is one that works
 * where the user is: `npm run xswarm --` in a checkout of the repository, where there is no
 * `xswarm` command, and `xswarm` where the package is installed. (cli.test.ts runs both
 * layouts end to end.)
 */
import { describe, expect, it } from 'vitest';
import { xswarmCommand } from '../../src/cli/invocation.js';

describe('xswarmCommand', () => {
  it('is the npm script for the binary of a checkout running its TypeScript sources', () => {
    expect(xswarmCommand('/home/me/xswarm/bin/xswarm.js', false)).toBe('npm run xswarm --');
    expect(xswarmCommand('C:\\code\\xswarm\\bin\\xswarm.js', false)).toBe('npm run xswarm --');
  });

  it('is `xswarm` for a binary inside node_modules (a dependency, its .bin link, a global install) or a compiled CLI', () => {
    expect(xswarmCommand('/srv/app/node_modules/xswarm/bin/xswarm.js', false)).toBe('xswarm');
    expect(xswarmCommand('/srv/app/node_modules/.bin/xswarm', false)).toBe('xswarm');
    expect(xswarmCommand('C:\\app\\node_modules\\xswarm\\bin\\xswarm.js', false)).toBe('xswarm');
    expect(xswarmCommand('/usr/local/bin/xswarm', true)).toBe('xswarm');
    // A folder merely named like it is not one.
    expect(xswarmCommand('/home/me/node_modules-backup/xswarm/bin/xswarm.js', false)).toBe('npm run xswarm --');
  });

  it('reads this process by default: the tests run the sources, outside node_modules', () => {
    expect(xswarmCommand(undefined, false)).toBe(process.argv[1]!.split(/[\\/]/).includes('node_modules') ? 'xswarm' : 'npm run xswarm --');
  });
});
