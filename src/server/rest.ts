/**
 * Placeholder: this protocol's endpoints are being built.
 *
 * @module
 */
import type { HttpHandler, ServerContext } from './http.js';

/** Creates the handler. */
export function createRestHandler(_ctx: ServerContext): HttpHandler {
  return { handle: async () => false };
}
