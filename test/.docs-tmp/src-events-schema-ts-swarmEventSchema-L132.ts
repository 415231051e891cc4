import { swarmEventSchema } from 'xswarm';
const parsed = swarmEventSchema.safeParse(JSON.parse(line));
if (parsed.success) console.log(parsed.data.swarmId, parsed.data.seq, parsed.data.kind);
else console.error(parsed.error.issues);
export {};
