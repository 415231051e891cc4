import { isFinalEvent } from 'xswarm';
for await (const e of client.events()) {
  if (e.kind === 'status-update') console.log(e.status.state, e.status.message?.parts);
  if (isFinalEvent(e)) console.log(`done after ${e.seq} events`); // and the stream ends
}
export {};
