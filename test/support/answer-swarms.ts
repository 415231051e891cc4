/**
 * The same two pauses for every surface's answer tests (A2A, MCP, CLI): a typed question (the
 * model's `pause` call `ask1` with a response schema), a limit pause (`maxTurns: 1`) and a
 * budget pause (`modelCalls: 1`).
 */
import { z } from 'zod';
import { defineSwarm, type ModelRequest, scriptedModel, tool } from '../../src/index.js';
import { call } from './script.js';

/** The response schema of the typed question. */
export const GUESTS_SCHEMA = {
  type: 'object',
  properties: { guests: { type: 'integer', minimum: 1 }, vegan: { type: 'boolean' } },
  required: ['guests'],
};

/** Asks how many guests (pause `ask1`), then plans with what it read. */
export const dinner = defineSwarm({ id: 'dinner', description: 'Plans a dinner', instructions: 'Plan a dinner.' });

const note = tool({ name: 'note', description: 'Notes a step', parameters: z.object({ step: z.number() }), execute: ({ step }) => `noted ${step}` });

/** Takes notes, one per turn, until told to conclude: pauses at its limit of one turn. */
export const notes = defineSwarm({ id: 'notes', description: 'Takes notes', instructions: 'Take notes.', tools: [note], maxTurns: 1 });

/** The notes swarm with room for ten turns but one model call: it pauses at its budget. */
export const capped = defineSwarm({
  id: 'capped',
  description: 'Takes notes on a budget',
  instructions: 'Take notes.',
  tools: [note],
  maxTurns: 10,
  budget: { modelCalls: 1 },
});

/** The model of the swarms; `requests` records what it was sent. */
export function answerModel() {
  const requests: ModelRequest[] = [];
  const model = scriptedModel((req) => {
    requests.push(req);
    const results = req.messages.filter((m) => m.role === 'tool');
    if (req.agentId === 'dinner') {
      if (results.length === 0) return call('pause', { reason: 'How many guests?', response_schema: GUESTS_SCHEMA }, 'ask1');
      return { text: `dinner for ${results.map((m) => m.content).join(' | ')}` };
    }
    if (req.messages.some((m) => m.role === 'user' && m.content === 'conclude')) return { text: `done after ${results.length} notes` };
    return call('note', { step: results.length + 1 }, `n${results.length + 1}`);
  });
  return { model, requests };
}
