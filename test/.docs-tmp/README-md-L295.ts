import { createRuntime, defineSwarm, defineTeam, scriptedModel } from 'xswarm';

const api = defineSwarm({ id: 'api-worker', instructions: 'You build REST endpoints.' });
const web = defineSwarm({ id: 'web-worker', instructions: 'You build React pages.' });
const team = defineTeam({
  id: 'builders',
  workers: [
    { type: 'api', swarm: api, count: 2 },
    { type: 'frontend', specialty: 'React pages', swarm: web },
  ],
  limits: { workerTimeoutMs: 60_000 }, // maxWorkers 10, maxTeams 5, maxTasksPerBoard 100, inboxRetentionMs 1 h, maxAttempts 3
});
const teamRuntime = createRuntime({ model: scriptedModel(() => ({ text: 'done' })), teams: [team] });
const builders = teamRuntime.forTeam(team); // team id: the definition's id unless given
await builders.run([
  { id: 'schema', subject: 'Database schema', metadata: { type: 'api', complexity: 2 } },
  { id: 'login', subject: 'Login page', metadata: { type: 'frontend' }, dependencies: ['schema'] },
]);
const summary = await builders.wait(); // completed | stalled | paused | failed | stopped
if (summary.status === 'paused' && summary.escalation) await builders.resume({ decision: 'retry' }); // or 'skip'
for await (const e of builders.events({ since: 0 })) console.log(e.seq, e.metadata.type);
console.log(builders.metrics().durationMs, builders.board().counts, builders.inbox().stats());
export {};
