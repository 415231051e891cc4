import { createRuntime } from 'xswarm';
import { sqliteStore } from 'xswarm/sqlite';
const runtime = createRuntime({ swarms, model, store: sqliteStore('.xswarm/state.db') });
await runtime.start(); // continues the swarms a previous process left unfinished
export {};
