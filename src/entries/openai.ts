/**
 * `xswarm/openai`: a model on Chat Completions through the official `openai` client (OpenAI or
 * any compatible server). Needs the optional package openai; `openaiModel()` throws naming it
 * when it is not installed.
 *
 * @example
 * import { openaiModel } from 'xswarm/openai';
 * const model = openaiModel({ model: 'gpt-4o-mini' }); // OPENAI_API_KEY from the environment
 *
 * @module
 */
export { openaiModel } from '../models/openai.js';
export type { OpenAIModelOptions } from '../models/openai.js';
