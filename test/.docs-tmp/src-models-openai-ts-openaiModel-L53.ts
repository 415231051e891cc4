import { openaiModel } from 'xswarm'; // or from 'xswarm/openai'
const model = openaiModel({ model: 'gpt-4o-mini' }); // needs OPENAI_API_KEY
const local = openaiModel({ model: 'qwen2.5', baseURL: 'http://127.0.0.1:8000/v1', stream: false });
const answer = await model.call({ agentId: 'a', swarmId: 's', tools: [],
  messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal,
  onText: (chunk) => process.stdout.write(chunk) });
export {};
