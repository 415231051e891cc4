/**
 * How the user runs the `xswarm` command where they are, for the command lines the CLI
 * suggests (e.g. how to resume a paused swarm): in a checkout of the xswarm repository there is
 * no `xswarm` command, only the package script `npm run xswarm -- …`; where the package is
 * installed, its binary `xswarm`.
 *
 * @module
 */

/**
 * The words that start an `xswarm` command line here: `xswarm` when the running binary lies
 * inside a `node_modules` folder (a dependency, `npx xswarm`, a global install) or runs the
 * compiled CLI (only the package ships it alone), else `npm run xswarm --` (a checkout).
 *
 * @param bin The path the binary was started by (`process.argv[1]`: symlinks as given, so
 *   `node_modules/.bin/xswarm` counts as installed).
 * @param compiled Whether the CLI runs from compiled JavaScript (dist/) rather than its TypeScript sources.
 */
export function xswarmCommand(bin: string = process.argv[1] ?? '', compiled: boolean = !import.meta.url.endsWith('.ts')): string {
  const installed = compiled || bin.split(/[\\/]/).includes('node_modules');
  return installed ? 'xswarm' : 'npm run xswarm --';
}
