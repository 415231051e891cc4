/**
 * The writer–critic demo model. The writer addresses every point the critic has raised so far;
 * the critic measures the draft with `text_stats` and raises one point at a time, so the loop
 * ends by itself once the draft is good, not after a fixed count.
 *
 * @module
 */
import { handoffToolName, type Model, type ModelRequest, type ModelResponse } from '../../src/index.js';
import { calls, createScriptedDemo, exchanges, inputOf, lastUserMessage, parseJson, type DemoModelOptions } from '../shared/demo.js';

/**
 * The writer–critic swarm id (declared here, not in index.ts, so the script can name it
 * without importing index.ts, which imports this module).
 *
 * @example
 * runtime.forSwarm(WRITER_CRITIC_ID, 'wc')
 */
export const WRITER_CRITIC_ID = 'writer-critic';

/**
 * The inline critic's id; its handoff tool is `handoff_to_critic`.
 *
 * @example
 * handoffToolName(CRITIC_ID) // 'handoff_to_critic'
 */
export const CRITIC_ID = 'critic';

/**
 * Most rewrites the writer makes before it stops asking: the loop's own bound, besides the
 * swarm's maxTurns (which is derived from it).
 *
 * @example
 * const maxTurns = MAX_REVISIONS + 4; // the writer-critic swarm's: the critic rounds, one to complete, two spare
 */
export const MAX_REVISIONS = 3;

/**
 * The demo writer's draft for a brief: long-winded unless `short`, abstract unless `example`.
 *
 * @example
 * draftFor('Write a blog intro on why teams should review code', { short: true, example: true }).title
 * // 'Why teams should review code'
 */
export function draftFor(brief: string, fixes: { short: boolean; example: boolean }): { title: string; text: string } {
  const subject = (/\b(?:on|about)\s+(.+?)[.?!]*$/i.exec(brief)?.[1] ?? brief).trim();
  const title = subject.charAt(0).toUpperCase() + subject.slice(1);
  const lead = /^(why|how|what|whether|when)\b/i.test(subject) ? `Wondering ${subject}?` : `Let's talk about ${subject}.`;
  const body = fixes.short
    ? [
        'It sounds like extra work at first.',
        'Once it becomes a shared habit, it pays for itself.',
        'You make fewer mistakes.',
        'Knowledge spreads across the team.',
        'Weeks get calmer.',
        'It is also easier to start than you think: begin small and keep at it for a few weeks.',
      ]
    : [
        'The honest answer is that it is one of those habits which sounds like extra work at first but which, once everyone on the team shares it and looks forward to it rather than dreading it, pays for itself many times over in fewer mistakes, knowledge that spreads across the team and calmer weeks.',
        'It is also easier to start than most people expect, especially if you begin small, keep at it for a few weeks and talk openly about what is and is not working for you.',
      ];
  const example = fixes.example ? ['For example, try it on one piece of work this week, then spend ten minutes on Friday comparing notes.'] : [];
  return { title, text: [lead, ...body, ...example].join(' ') };
}

/** How the writer phrases a review request, and how the critic reads the draft back out of it. */
const reviewRequest = (d: { title: string; text: string }) => `Please review this draft.\n\nTitle: ${d.title}\n\n${d.text}`;
const draftIn = (request: string) => request.split('\n\n').slice(2).join('\n\n');

/** The writer: draft, hand to the critic, rewrite on REVISE, complete on APPROVED. */
function writerScript(req: ModelRequest): ModelResponse {
  const brief = inputOf(req.messages);
  const critic = handoffToolName(CRITIC_ID);
  const rounds = exchanges(req.messages).filter((e) => e.name === critic && e.result !== undefined);
  const notes = rounds.map((r) => r.result!);
  const last = rounds.at(-1);
  if (last && (/^APPROVED/.test(last.result!) || rounds.length > MAX_REVISIONS)) {
    const draft = draftIn(String(last.args.request));
    const title = /^Title: (.*)$/m.exec(String(last.args.request))?.[1] ?? brief;
    return calls(req, [['complete', { result: { title, text: draft, revisions: rounds.length - 1, notes } }]]);
  }
  // Every point raised so far stays fixed: a writer does not undo an earlier revision.
  const fixes = { short: notes.some((n) => /sentence/i.test(n)), example: notes.some((n) => /example/i.test(n)) };
  const draft = draftFor(brief, fixes);
  const point = last?.result?.replace(/^REVISE:\s*/, '').split(/(?<=\.)\s/)[0];
  const say = point ? `Revision ${rounds.length}, addressing: ${point}` : 'First draft done; asking the critic.';
  return calls(req, [[critic, { request: reviewRequest(draft) }]], say);
}

/** The critic: measure, then name the single most important problem, or approve. */
function criticScript(req: ModelRequest): ModelResponse {
  const last = req.messages.at(-1);
  if (last?.role !== 'tool') return calls(req, [['text_stats', { text: draftIn(lastUserMessage(req.messages)) }]]);
  const s = parseJson<{ avgWordsPerSentence: number; longestSentenceWords: number; examples: number }>(last.content);
  if (!s) return { text: `REVISE: I could not measure the draft (${last.content}). Send it again.` };
  if (s.avgWordsPerSentence > 20) {
    return {
      text: `REVISE: The sentences are too long (average ${s.avgWordsPerSentence} words, longest ${s.longestSentenceWords}). Split them into sentences of under 20 words.`,
    };
  }
  if (s.examples === 0) return { text: 'REVISE: It stays abstract. Add one concrete example the reader can try this week.' };
  return { text: `APPROVED: Short sentences (average ${s.avgWordsPerSentence} words) and a concrete example. Ready to publish.` };
}

/**
 * Creates the demo model of the writer–critic example.
 *
 * @example
 * const model = createWriterCriticDemoModel({ latencyMs: [0, 0], chunkDelayMs: 0 });
 */
export function createWriterCriticDemoModel(options: DemoModelOptions = {}): Model {
  return createScriptedDemo('writer-critic demo', { [WRITER_CRITIC_ID]: writerScript, [CRITIC_ID]: criticScript }, options);
}
