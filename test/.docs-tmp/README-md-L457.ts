import { createAgentRegistry } from 'xswarm';
const registry = createAgentRegistry({ healthIntervalMs: 10_000 });
await registry.register('http://127.0.0.1:4000/a2a/translator/.well-known/agent-card.json');
const translated = registry.dispatch({ skill: 'translate', message: 'Bonjour' });
console.log((await registry.wait(translated.id)).result);
export {};
