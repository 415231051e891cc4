import type { Model } from 'xswarm';
const echo: Model = { name: 'echo', call: async (req) => ({ text: req.messages.at(-1)?.content ?? '' }) };
export {};
