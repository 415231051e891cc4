#!/usr/bin/env node
/**
 * `depcruise` with TypeScript 7.0: the same command line, config and output as dependency-cruiser's own.
 *
 * dependency-cruiser 18 reads TypeScript through the compiler API of TypeScript < 7 or >= 7.1 and
 * refuses 7.0, whose API sits under `typescript/unstable/`. Refused, it does not fail: it cruises no
 * .ts file and reports no violation. These hooks hand dependency-cruiser, and only it, that API from
 * scripts/typescript-7.0-api.mjs, then run its CLI unchanged. The run also fails when fewer files were
 * parsed than the folders named on the command line hold, so that a change in either package cannot
 * turn the check off quietly.
 *
 * Delete this file and the adapter once TypeScript 7.1 is installed: `lint:deps` is then plain `depcruise`.
 */
import { readdirSync, statSync } from 'node:fs';
import { createRequire, registerHooks } from 'node:module';
import { join, relative } from 'node:path';

const require = createRequire(import.meta.url);
const installed = require('typescript/package.json').version;
if (!installed.startsWith('7.0.')) {
  console.error(
    `scripts/depcruise.mjs adapts TypeScript 7.0 for dependency-cruiser, and typescript ${installed} is installed: run depcruise directly, delete the adapter.`,
  );
  process.exit(2);
}

const API_URL = new URL('./typescript-7.0-api.mjs', import.meta.url).href;
// What dependency-cruiser's version check reads from typescript/package.json: 7.1, the first release
// whose API it knows, and the API the adapter gives it.
const VERSION_URL = 'xswarm-adapter:typescript-package.json';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (context.parentURL?.includes('/node_modules/dependency-cruiser/')) {
      if (specifier === 'typescript/package.json') return { url: VERSION_URL, format: 'json', shortCircuit: true };
      if (specifier === 'typescript/sync') return { url: API_URL, format: 'module', shortCircuit: true };
      if (specifier === 'typescript/ast') return nextResolve('typescript/unstable/ast', context);
    }
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (url === VERSION_URL) return { format: 'json', source: JSON.stringify({ name: 'typescript', version: '7.1.0' }), shortCircuit: true };
    return nextLoad(url, context);
  },
});

const adapter = await import(API_URL);
// The package exports its API (src/main/index.mjs), not its bin: the bin sits two folders up from it.
const bin = new URL('../../bin/dependency-cruiser.mjs', import.meta.resolve('dependency-cruiser'));
try {
  // Its CLI reads process.argv and sets process.exitCode: non-zero on an error-severity violation.
  await import(bin.href);
} finally {
  adapter.closeAll();
}

const expected = process.argv
  .slice(2)
  .filter((argument) => !argument.startsWith('-') && isDirectory(argument))
  .flatMap((folder) => typeScriptFiles(folder));
const missed = expected.filter((file) => !adapter.parsed.has(join(process.cwd(), file)));
if (missed.length > 0) {
  console.error(
    `\n  ERROR: dependency-cruiser read ${expected.length - missed.length} of the ${expected.length} TypeScript files; not read: ${missed.slice(0, 5).join(', ')}${missed.length > 5 ? ', …' : ''}`,
  );
  process.exitCode = 1;
}

/** @param {string} path */
function isDirectory(path) {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** @param {string} folder @returns {string[]} */
function typeScriptFiles(folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(process.cwd(), join(entry.parentPath, entry.name)));
}
