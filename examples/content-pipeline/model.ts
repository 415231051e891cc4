/**
 * The content-pipeline demo model: the orchestrator's script (research → draft → ask the
 * editor → publish), the researcher's and the copywriter's.
 *
 * @module
 */
import { handoffToolName, type Model, type ModelRequest, type ModelResponse } from '../../src/index.js';
import { calls, createScriptedDemo, exchanges, inputOf, lastUserMessage, parseJson, type DemoModelOptions } from '../shared/demo.js';

/**
 * The content pipeline's swarm id (declared here, not in index.ts, so the script can name it
 * without importing index.ts, which imports this module).
 *
 * @example
 * runtime.forSwarm(CONTENT_PIPELINE_ID, 'post')
 */
export const CONTENT_PIPELINE_ID = 'content-pipeline';

/**
 * What the demo orchestrator asks the editor (the draft follows as the pause's context).
 *
 * @example
 * const r = await client.wait();
 * const asksForApproval = r.status === 'paused' && r.reason.message.startsWith(APPROVAL_QUESTION);
 */
export const APPROVAL_QUESTION = 'Approve this post for publication? Answer "approve", ask for changes, or "reject".';

/**
 * A title without its subtitle: what the demo does when the editor asks for a shorter title.
 *
 * @example
 * shorterTitle('Urban beekeeping: what the numbers say') // 'Urban beekeeping'
 */
export function shorterTitle(title: string): string {
  return title.split(':')[0]!.trim();
}

/**
 * A URL slug.
 *
 * @example
 * slug('Urban beekeeping!') // 'urban-beekeeping'
 */
export function slug(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The orchestrator: one step per turn, reading what the agents and the editor said. */
function pipelineScript(req: ModelRequest): ModelResponse {
  const topic = inputOf(req.messages);
  const done = exchanges(req.messages);
  const find = (name: string) => done.find((e) => e.name === name);
  const research = find(handoffToolName('researcher'));
  const draft = find(handoffToolName('copywriter'));
  const approval = find('pause');
  const published = find('publish_post');

  if (!research) return calls(req, [[handoffToolName('researcher'), { request: `Find sourced facts about ${topic}.` }]]);
  if (!draft) {
    return calls(req, [[handoffToolName('copywriter'), { request: `Write a short blog post about ${topic} from these notes:\n${research.result}` }]]);
  }
  if (!approval) return calls(req, [['pause', { reason: APPROVAL_QUESTION, context: draft.result }]]);
  const answer = approval.result ?? '';
  if (/\b(reject|rejected|don'?t publish|do not publish)\b/i.test(answer)) {
    return calls(req, [['fail', { reason: `The editor rejected the post: ${answer}` }]]);
  }
  if (!published) {
    const text = draft.result ?? '';
    const title = /^TITLE:\s*(.+)$/m.exec(text)?.[1]?.trim() ?? capitalize(topic);
    const body = text.replace(/^TITLE:.*\n+/m, '').trim();
    // Apply the feedback the demo understands; the rest still travels verbatim to publish_post.
    const finalTitle = /\btitle\b/i.test(answer) && /\bshort/i.test(answer) ? shorterTitle(title) : title;
    return calls(req, [['publish_post', { title: finalTitle, body, editor_feedback: answer }]]);
  }
  const post = parseJson<{ url: string; words: number }>(published.result);
  if (!post) return calls(req, [['fail', { reason: `Publishing failed: ${published.result}` }]]);
  return calls(req, [['complete', { result: { title: published.args.title, url: post.url, words: post.words, editorFeedback: answer } }]]);
}

/** The researcher: search, then list the findings with their sources. */
function researcherScript(req: ModelRequest): ModelResponse {
  const last = req.messages.at(-1);
  if (last?.role === 'tool') {
    const found = parseJson<{ findings: { fact: string; source: string }[] }>(last.content);
    if (!found) return { text: `The search failed: ${last.content}` };
    return { text: found.findings.map((f) => `- ${f.fact} (${f.source})`).join('\n') };
  }
  const request = lastUserMessage(req.messages);
  const topic = /about (.+?)\.?$/i.exec(request)?.[1] ?? request;
  return calls(req, [['search_sources', { topic }]]);
}

/** The copywriter: a title and a short body built from the notes it was given. */
function copywriterScript(req: ModelRequest): ModelResponse {
  const request = lastUserMessage(req.messages);
  const topic = /about (.+?) from these notes/i.exec(request)?.[1] ?? 'this topic';
  const notes = request
    .split('\n')
    .filter((l) => l.startsWith('- '))
    .map((l) => l.slice(2).trim());
  const body = [
    `${capitalize(topic)} is having a moment.`,
    ...notes.map((n) => n.replace(/\.\s*\(/, ' (').replace(/\)$/, ').')),
    'If you are curious, start small, budget honestly, and find the people who already do it near you.',
  ].join(' ');
  return { text: `TITLE: ${capitalize(topic)}: what the numbers say\n\n${body}` };
}

/**
 * Creates the demo model of the content-pipeline example.
 *
 * @example
 * const model = createContentDemoModel({ latencyMs: [0, 0], chunkDelayMs: 0 });
 */
export function createContentDemoModel(options: DemoModelOptions = {}): Model {
  return createScriptedDemo('content-pipeline demo', { [CONTENT_PIPELINE_ID]: pipelineScript, researcher: researcherScript, copywriter: copywriterScript }, options);
}
