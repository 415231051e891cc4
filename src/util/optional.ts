/**
 * The optional peer packages: the heavy parts (SQLite, the servers, the A2A client, the OpenAI
 * client) load only when used, and a missing package fails with an error that names it and
 * the install command instead of Node's bare "Cannot find package".
 *
 * @module
 */
import { createRequire } from 'node:module';

/**
 * The packages each optional part needs; `package.json` lists the same ones as optional peer
 * dependencies (a test checks they agree).
 */
export const OPTIONAL_PEERS = {
  server: ['express', 'ws', '@a2a-js/sdk', '@modelcontextprotocol/server', '@modelcontextprotocol/node'],
  sqlite: ['better-sqlite3'],
  a2a: ['@a2a-js/sdk'],
  openai: ['openai'],
  nats: ['@nats-io/transport-node', '@nats-io/jetstream', '@nats-io/kv'],
  inspect: ['@statelyai/inspect', 'ws'],
  testing: ['vitest'],
  metrics: ['prom-client'],
  tracing: ['@opentelemetry/api'],
} as const satisfies Record<string, readonly string[]>;

// Resolved from this file, so a package installed in the application that depends on xswarm is found.
const require = createRequire(import.meta.url);

/** Whether `pkg` resolves; an ESM-only package without a `require` export still counts as installed. */
export function installed(pkg: string): boolean {
  try {
    require.resolve(pkg);
    return true;
  } catch (e) {
    return (e as { code?: unknown }).code !== 'MODULE_NOT_FOUND';
  }
}

/** The error for `what` (e.g. `'serve()'`) needing `absent` packages: names them and the install command. */
export function missingPackages(what: string, absent: readonly string[], cause?: unknown): Error {
  const names = absent.length === 1 ? `the package ${absent[0]}, which is` : `the packages ${absent.join(', ')}, which are`;
  return new Error(`${what} needs ${names} not installed: npm install ${absent.join(' ')}`, cause === undefined ? {} : { cause });
}

/** Throws {@link missingPackages}'s error for those of `packages` that are not installed, if any. */
export function assertInstalled(what: string, packages: readonly string[], cause?: unknown): void {
  const absent = packages.filter((p) => !installed(p));
  if (absent.length > 0) throw missingPackages(what, absent, cause);
}

/** Imports `pkg` through `load` where it is installed, else resolves to `undefined`: for a module that works without it. */
export async function importIfInstalled<T>(pkg: string, load: () => Promise<T>): Promise<T | undefined> {
  return installed(pkg) ? load() : undefined;
}

/** Loads a CommonJS package synchronously (better-sqlite3), or throws {@link assertInstalled}'s error. */
export function requireOptional<T>(what: string, pkg: string): T {
  assertInstalled(what, [pkg]);
  return require(pkg) as T;
}

/** Runs `load` (a dynamic import of a module that needs `packages`), explaining a failure due to a missing one. */
export async function importOptional<T>(what: string, packages: readonly string[], load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    assertInstalled(what, packages, e);
    throw e;
  }
}
