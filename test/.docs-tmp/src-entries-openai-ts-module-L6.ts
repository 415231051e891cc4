import { openaiModel } from 'xswarm/openai';
const model = openaiModel({ model: 'gpt-4o-mini' }); // OPENAI_API_KEY from the environment
export {};
