/**
 * Content pipeline with a human in the loop: a researcher agent gathers sourced facts, a
 * copywriter agent drafts a post, the orchestrator calls `pause` to ask an editor for approval,
 * and on resume (the editor's answer is the pause's tool result) it publishes with the
 * `publish_post` tool, applying the feedback, or gives up when the editor rejects.
 *
 * @example
 * const { runtime } = createContentRuntime({ env: {} });
 * const client = runtime.forSwarm(contentPipeline);
 * await client.run('urban beekeeping');
 * (await client.wait()) // { status: 'paused', reason: { type: 'HITL', message: 'Approve this post for publication? …' }, … }
 * await client.resume('Approved, but use a shorter title.');
 * (await client.wait()) // { status: 'completed', result: { title: 'Urban beekeeping', url: 'https://blog.example.com/posts/urban-beekeeping', … } }
 *
 * @module
 */
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, tool } from '../../src/index.js';
import { chooseModel, type ExampleRuntime, type ExampleRuntimeOptions } from '../shared/demo.js';
import { CONTENT_PIPELINE_ID, createContentDemoModel, slug } from './model.js';

export { APPROVAL_QUESTION, createContentDemoModel, shorterTitle } from './model.js';

/**
 * `search_sources({topic})`: three sourced findings about a topic (fake, deterministic).
 *
 * @example
 * await searchSources.execute({ topic: 'urban beekeeping' }, ctx) // { topic: 'urban beekeeping', findings: [{ fact: '…', source: '…' }, …] }
 */
export const searchSources = tool({
  name: 'search_sources',
  description: 'Searches trusted sources for a topic; returns findings, each with its source.',
  parameters: z.object({ topic: z.string() }),
  execute: ({ topic }) => ({
    topic,
    findings: [
      { fact: `Interest in ${topic} has doubled over the last five years.`, source: 'Google Trends, 2025' },
      { fact: `Most newcomers to ${topic} say cost was the biggest surprise.`, source: 'Hobbyist Survey 2024, n=1,200' },
      { fact: `Local clubs are the most common way people learn ${topic}.`, source: 'City Council community report' },
    ],
  }),
});

/**
 * `publish_post({title, body, editor_feedback})`: publishes to the (fake) blog.
 *
 * @example
 * await publishPost.execute({ title: 'Urban beekeeping', body: '…', editor_feedback: 'Approved.' }, ctx)
 * // { status: 'published', url: 'https://blog.example.com/posts/urban-beekeeping', words: 97 }
 */
export const publishPost = tool({
  name: 'publish_post',
  description: "Publishes an approved post to the blog. Pass the editor's feedback as it was given.",
  parameters: z.object({
    title: z.string().min(1),
    body: z.string().min(1),
    editor_feedback: z.string().describe("The editor's answer to the approval question, verbatim"),
  }),
  execute: ({ title, body }) => ({
    status: 'published',
    url: `https://blog.example.com/posts/${slug(title)}`,
    words: body.split(/\s+/).filter(Boolean).length,
  }),
});

/**
 * Finds facts with sources.
 *
 * @example
 * createRuntime({ agents: [researcher, copywriter], swarms: [contentPipeline], model });
 */
export const researcher = defineAgent({
  id: 'researcher',
  name: 'Researcher',
  description: 'Researches a topic: returns sourced findings.',
  instructions:
    'You are a researcher. Call search_sources for the topic you are given, then answer with each finding on its own line, followed by its source in parentheses.',
  tools: [searchSources],
});

/**
 * Turns research notes into a post.
 *
 * @example
 * createRuntime({ agents: [researcher, copywriter], swarms: [contentPipeline], model });
 */
export const copywriter = defineAgent({
  id: 'copywriter',
  name: 'Copywriter',
  description: 'Writes a short blog post (title and body) from research notes.',
  instructions:
    'You write short, friendly blog posts. From the notes you are given, answer with "TITLE: <title>", a blank line, then a body of about 80 words that cites the sources.',
});

/**
 * What the pipeline returns.
 *
 * @example
 * Publication.parse({ title: 'Urban beekeeping', url: 'https://blog.example.com/posts/urban-beekeeping', words: 97, editorFeedback: 'Approved.' });
 */
export const Publication = z.object({
  title: z.string(),
  url: z.string(),
  words: z.number().int(),
  editorFeedback: z.string().describe("The editor's answer, verbatim"),
});

/**
 * The pipeline's result type.
 *
 * @example
 * const link = (p: Publication) => `<a href="${p.url}">${p.title}</a>`;
 */
export type Publication = z.output<typeof Publication>;

/**
 * The content pipeline: input is the topic.
 *
 * @example
 * const client = runtime.forSwarm(contentPipeline); // SwarmClient<string, Publication>
 */
export const contentPipeline = defineSwarm({
  id: CONTENT_PIPELINE_ID,
  name: 'Content pipeline',
  description: 'Researches a topic, drafts a blog post, asks an editor for approval, then publishes it.',
  input: z.string().min(1),
  result: Publication,
  instructions: ({ input }) =>
    [
      `You run the content pipeline for a blog post on: "${input}".`,
      '1. Hand off to researcher for sourced findings on the topic.',
      '2. Hand off to copywriter with the findings to get a draft (title and body).',
      '3. Call pause to ask the editor whether to publish; put the full draft in the pause context. Never publish without asking.',
      '4. When the editor answers: if they reject it, call fail with their reason. Otherwise apply their feedback',
      '   (e.g. a shorter title), call publish_post once with the title, the body and their answer verbatim as editor_feedback,',
      "   then call complete with the title, the URL and word count publish_post returned, and the editor's answer.",
    ].join('\n'),
  handoffs: [handoff.toAgent(researcher), handoff.toAgent(copywriter)],
  tools: [publishPost],
  maxTurns: 8,
});

/**
 * Creates a runtime with the pipeline and its two agents.
 *
 * @example
 * const { runtime } = createContentRuntime({ env: {}, demo: { latencyMs: [0, 0] } });
 */
export function createContentRuntime(options: ExampleRuntimeOptions = {}): ExampleRuntime {
  const { model, offline } = chooseModel(options, () => createContentDemoModel(options.demo));
  const runtime = createRuntime({
    swarms: [contentPipeline],
    agents: [researcher, copywriter],
    model,
    ...(options.store ? { store: options.store } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  return { runtime, model, offline };
}
