import { z } from 'zod';
const c = runtime.adhoc();
await c.run({ userMessage: 'Plan a picnic', instructions: 'You plan picnics.', result: z.object({ items: z.array(z.string()) }) });
export {};
