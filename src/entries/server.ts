/**
 * `xswarm/server`: serves a runtime's swarms over REST + SSE, WebSocket, A2A and MCP, and the
 * inspector page at `/inspector/` (its API's rows are the types below). Needs the
 * optional packages express, ws, @a2a-js/sdk, @modelcontextprotocol/server and
 * @modelcontextprotocol/node; importing this entry point without them fails.
 *
 * @example
 * import { serve } from 'xswarm/server';
 * const server = await serve(runtime, { port: 4000, token: process.env.XSWARM_TOKEN });
 * console.log(`REST, SSE, WebSocket, A2A and MCP on ${server.url}`);
 *
 * @module
 */
export { serve } from '../server/index.js';
export type { ServeOptions, SwarmServer } from '../server/index.js';
export type { InspectorOverview, SwarmRow, TeamRow } from '../server/inspector/api.js';
export { verifyPushSignature, type PushSignatureCheck } from '../server/a2a/push-signature.js';
