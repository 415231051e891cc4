import { defineSwarm, handoff } from 'xswarm';
defineSwarm({ id: 'planner', instructions: '…', handoffs: [
  handoff.toAgent(weather),
  handoff.toAgent('calendar-agent').withDescription('Free/busy lookups'),
  handoff.toSwarm(ticketing).withDescription('Books tickets').customizable(),
  handoff.inline({ id: 'critic', description: 'Reviews a plan', instructions: 'Find flaws.' }),
  handoff.toRemoteAgent('http://127.0.0.1:4001/a2a/weather/.well-known/agent-card.json'),
  handoff.toBestAgent('forecast'), // with createRuntime({ registry })
] });
export {};
