/**
 * Placeholder: this protocol's endpoints are being built.
 *
 * @module
 */
import type { HttpHandler, ServerContext } from '../server/http.js';

/** Creates the handler. */
export function createA2AHandler(_ctx: ServerContext): HttpHandler {
  return { handle: async () => false };
}
