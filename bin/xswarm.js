#!/usr/bin/env node
// The `xswarm` command runs the compiled CLI (dist/). In a checkout of the repository (src/ is
// there and tsx, a dev dependency, is installed) it runs the TypeScript sources instead, so it is
// never stale. tsx is an optional peer for users: it is registered only to load a module given
// as TypeScript (`xswarm serve app.ts`), and its absence then is a clear error.
import { existsSync } from 'node:fs';

const args = process.argv.slice(2);
const checkout = existsSync(new URL('../src/cli/index.ts', import.meta.url));
// A command's module: an argument, or XSWARM_MODULE for the commands that read it.
const moduleEnv = ['pause', 'resume', 'stop'].includes(args[0]) ? process.env.XSWARM_MODULE : undefined;
const typescriptModule = [...args, moduleEnv ?? ''].find((a) => /\.[cm]?tsx?$/.test(a));

const tsx = checkout || typescriptModule ? await import('tsx/esm/api').catch(() => undefined) : undefined;
if (typescriptModule && !tsx) {
  process.stderr.write(`xswarm: ${typescriptModule} is TypeScript; install tsx to load it (npm install --save-dev tsx) or compile it to JavaScript\n`);
  process.exit(2);
}
tsx?.register();

const cli = tsx && checkout ? '../src/cli/index.ts' : '../dist/src/cli/index.js';
let main;
try {
  ({ main } = await import(cli));
} catch (e) {
  // The CLI serves and stores: it needs the optional peers of xswarm/server and xswarm/sqlite.
  const missing = e?.code === 'ERR_MODULE_NOT_FOUND' && /Cannot find (?:package|module) '([^']+)'/.exec(e.message)?.[1];
  if (!missing) throw e;
  const built = !missing.includes('/dist/');
  process.stderr.write(
    built
      ? `xswarm: the command line needs the package ${missing}, which is not installed: npm install ${missing}\n`
      : `xswarm: ${missing} is missing; in a checkout, run npm run build (or npm install)\n`,
  );
  process.exit(1);
}
process.exitCode = await main(args);
