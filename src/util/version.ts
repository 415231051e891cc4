/**
 * xswarm's own version, for what it announces (the MCP server's `serverInfo`).
 *
 * @module
 */
import { createRequire } from 'node:module';

/**
 * The version in xswarm's package.json, reached through the package's self-reference
 * (`xswarm/package.json` is an export): the same specifier resolves from the sources in a
 * checkout and from `dist/` once installed, where a relative path would not (it differs by one
 * folder between the two).
 */
export const XSWARM_VERSION: string = (createRequire(import.meta.url)('xswarm/package.json') as { version: string }).version;
