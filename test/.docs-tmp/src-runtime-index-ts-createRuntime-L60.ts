import { createRuntime, openaiModel, scriptedModel, sqliteStore } from 'xswarm';
const runtime = createRuntime({
  swarms: [planner], agents: [weather],
  model: process.env.OPENAI_API_KEY ? openaiModel({ model: 'gpt-4o-mini' }) : scriptedModel(() => ({ text: 'Go hiking.' })),
  store: sqliteStore('.xswarm/state.db'), // default: memoryStore()
});
await runtime.start(); // continues the swarms a previous process left unfinished
export {};
