import { createRuntime, sqliteStore } from 'xswarm'; // or sqliteStore from 'xswarm/sqlite'
const store = sqliteStore('.xswarm/state.db', { synchronous: 'NORMAL' });
const runtime = createRuntime({ swarms, model, store });
await runtime.start(); // continues what a crashed process left unfinished
export {};
