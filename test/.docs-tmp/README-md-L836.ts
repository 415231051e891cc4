import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
const mcp = new Client({ name: 'me', version: '1.0.0' });
await mcp.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1:4000/mcp'),
  { requestInit: { headers: { authorization: 'Bearer T' } } }));
const r = await mcp.callTool({ name: 'activity-planner_run', arguments: { input: 'Plan my Saturday', wait: true } },
  { onprogress: (p) => console.log(p.message), resetTimeoutOnProgress: true, timeout: 120_000 });
export {};
