import { createRuntime, memoryStore } from 'xswarm';
const store = memoryStore();
const runtime = createRuntime({ swarms, model, store });
export {};
