/**
 * Writer–critic loop. The writer (the swarm's orchestrator) drafts, hands the draft to a
 * critic declared inline with `handoff.inline` (no registration; it has a `text_stats` tool of
 * its own), revises on "REVISE: …" and completes with the final draft once the critic answers
 * "APPROVED". The critic names only its most important point per round, so the demo takes two
 * revisions (three critic rounds).
 *
 * @example
 * const { runtime } = createWriterCriticRuntime({ env: {} });
 * const client = runtime.forSwarm(writerCritic);
 * await client.run('Write a short blog intro on why small teams should adopt code review');
 * (await client.wait()) // { status: 'completed', result: { title: '…', text: '…For example…', revisions: 2, notes: [...] } }
 *
 * @module
 */
import { z } from 'zod';
import { createRuntime, defineSwarm, handoff, tool } from '../../src/index.js';
import { chooseModel, type ExampleRuntime, type ExampleRuntimeOptions } from '../shared/demo.js';
import { createWriterCriticDemoModel, CRITIC_ID, MAX_REVISIONS, WRITER_CRITIC_ID } from './model.js';

export { createWriterCriticDemoModel, CRITIC_ID, draftFor, MAX_REVISIONS } from './model.js';

/** Sentences of a text (split after `.`, `!`, `?`). */
function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * `text_stats({text})`: word and sentence counts, average and longest sentence, and how many
 * concrete examples ("for example", "for instance") the text gives. The critic's ruler.
 *
 * @example
 * await textStats.execute({ text: 'Short. For example, this.' }, ctx) // { words: 4, sentences: 2, avgWordsPerSentence: 2, longestSentenceWords: 3, examples: 1 }
 */
export const textStats = tool({
  name: 'text_stats',
  description: 'Counts words and sentences of a text: average and longest sentence length, and the number of concrete examples it gives.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => {
    const all = sentences(text);
    const lengths = all.map((s) => s.split(/\s+/).length);
    const words = lengths.reduce((a, b) => a + b, 0);
    return {
      words,
      sentences: all.length,
      avgWordsPerSentence: all.length ? Math.round((words / all.length) * 10) / 10 : 0,
      longestSentenceWords: Math.max(0, ...lengths),
      examples: (text.match(/\b(for example|for instance|e\.g\.)/gi) ?? []).length,
    };
  },
});

/**
 * The writer's result.
 *
 * @example
 * FinalDraft.parse({ title: 'Why review', text: 'Short. For example, this.', revisions: 2, notes: ['REVISE: …', 'REVISE: …', 'APPROVED: …'] });
 */
export const FinalDraft = z.object({
  title: z.string(),
  text: z.string().describe('The approved draft'),
  revisions: z.number().int().min(0).describe('How many times the draft was rewritten after critique'),
  notes: z.array(z.string()).describe("The critic's answers, one per round"),
});

/**
 * The writer's result type.
 *
 * @example
 * const words = (d: FinalDraft) => d.text.split(/\s+/).length;
 */
export type FinalDraft = z.output<typeof FinalDraft>;

/**
 * The writer–critic swarm: input is the writing brief.
 *
 * @example
 * const client = runtime.forSwarm(writerCritic); // SwarmClient<string, FinalDraft>
 */
export const writerCritic = defineSwarm({
  id: WRITER_CRITIC_ID,
  name: 'Writer with critic',
  description: 'Drafts a short text and revises it with a critic until the critic approves.',
  input: z.string().min(1),
  result: FinalDraft,
  instructions: ({ input }) =>
    [
      `You are a writer. Brief: "${input}".`,
      'Write a title and a draft of about 80 words, then hand it to the critic with the full draft in the request.',
      `If the critic answers "REVISE: …", rewrite the draft to fix exactly that and hand it to the critic again (at most ${MAX_REVISIONS} rewrites).`,
      'When the critic answers "APPROVED", call complete with the title, the approved draft, the number of rewrites and the critic\'s answers in order.',
    ].join('\n'),
  handoffs: [
    handoff.inline({
      id: CRITIC_ID,
      description: 'A demanding editor: reviews a draft and answers APPROVED, or REVISE with the single most important fix.',
      instructions: [
        'You are a demanding editor. Call text_stats on the draft you are given.',
        'Answer "REVISE: <fix>" naming only the most important problem: first sentences averaging more than 20 words, then no concrete example.',
        'Otherwise answer "APPROVED: <one line on what works>".',
      ].join('\n'),
      tools: [textStats],
      maxTurns: 3,
    }),
  ],
  // Up to MAX_REVISIONS + 1 critic rounds, one turn to complete, two spare for the runtime's corrections.
  maxTurns: MAX_REVISIONS + 4,
});

/**
 * Creates a runtime with the writer–critic swarm (the critic needs no registration).
 *
 * @example
 * const { runtime } = createWriterCriticRuntime({ env: {}, demo: { latencyMs: [0, 0] } });
 */
export function createWriterCriticRuntime(options: ExampleRuntimeOptions = {}): ExampleRuntime {
  const { model, offline } = chooseModel(options, () => createWriterCriticDemoModel(options.demo));
  const runtime = createRuntime({
    swarms: [writerCritic],
    model,
    ...(options.store ? { store: options.store } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  return { runtime, model, offline };
}
