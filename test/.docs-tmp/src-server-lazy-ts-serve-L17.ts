import { serve } from 'xswarm';
const server = await serve(runtime, { port: 4000 });
await server.close();
export {};
