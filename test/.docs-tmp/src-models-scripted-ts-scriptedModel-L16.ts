import { scriptedModel } from 'xswarm';
const model = scriptedModel((req) =>
  req.messages.some((m) => m.role === 'tool')
    ? { text: 'Go hiking on Saturday.' }
    : { toolCalls: [{ id: 'c1', name: 'handoff_to_weather_agent', arguments: '{"request":"forecast"}' }] });
export {};
