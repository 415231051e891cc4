const client = runtime.forSwarm(planner);
await client.run('Suggest outdoor activities for this weekend');
for await (const e of client.events()) console.log(e.seq, e.kind); // ends after the final event
const r = await client.getResult();
if (r.status === 'completed') console.log(r.result);
export {};
