import { serve } from 'xswarm/server';
const server = await serve(runtime, { port: 4000, token: process.env.XSWARM_TOKEN });
console.log(`REST, SSE, WebSocket, A2A and MCP on ${server.url}`);
export {};
