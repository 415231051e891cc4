import { createAgentRegistry, createRuntime, defineSwarm, handoff, sqliteStore } from 'xswarm';
const registry = createAgentRegistry({ id: 'main' });
await registry.register('http://127.0.0.1:4001/a2a/forecaster/.well-known/agent-card.json');
const planner = defineSwarm({ id: 'planner', instructions: 'Plan with the weather.', handoffs: [handoff.toBestAgent('forecast')] });
const runtime = createRuntime({ swarms: [planner], model, registry, store: sqliteStore('.xswarm/state.db') });
await runtime.start(); // restores the registry's agents and tasks kept in the store
export {};
