import { factOf } from 'xswarm';
for await (const e of client.events()) {
  const h = factOf(e, 'agent-handoff');
  if (h) console.log(`${h.from} → ${h.to}`);
}
export {};
