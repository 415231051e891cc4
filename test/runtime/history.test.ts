/**
 * History policies: what the model is SENT of a long conversation stays under `maxTokens`
 * (trimmed, or summarized by a recorded model call), never with an orphan tool message, while
 * the stored conversation and the events stay whole; a replay makes no model call (summaries
 * included), and a swarm restored mid-way keeps its summary.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { estimateAll, type HistoryPolicy, SUMMARY_INSTRUCTIONS } from '../../machines/history.js';
import {
  createRuntime,
  defineAgent,
  defineSwarm,
  handoff,
  memoryStore,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type Runtime,
  type SwarmEvent,
  type SwarmStore,
  scriptedModel,
  tool,
} from '../../src/index.js';
import { openaiModel } from '../../src/models/openai.js';
import { forbiddenModel } from '../support/crash-w1.js';
import { startOpenAIServer } from '../support/openai-server.js';
import { collect } from '../support/script.js';

/** Pages read (one tool call a turn; every 7th turn reads two pages in parallel). */
const PAGES = 400;
const MAX_TOKENS = 3000;

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const pageText = (n: number) => `page ${n}: ${'lorem ipsum dolor sit amet '.repeat(14)}`;
const readPage = tool({ name: 'read_page', description: 'Reads one page', parameters: z.object({ page: z.number() }), execute: ({ page }) => pageText(page) });

function reader(history: HistoryPolicy) {
  return defineSwarm({ id: 'reader', instructions: 'Read every page, then say how many.', tools: [readPage], maxTurns: PAGES + 10, history });
}

/** The highest page a text mentions (-1 for none). */
function lastPage(text: string): number {
  let max = -1;
  for (const m of text.matchAll(/page (\d+):/g)) max = Math.max(max, Number(m[1]));
  return max;
}

/**
 * The reader's answer: a pure function of what it is SENT (it reads on from the newest page it
 * sees), so a request that lost its newest turn would show in the pages read. A summary call is
 * answered with the newest page it covers.
 */
function respond(req: ModelRequest): ModelResponse {
  const text = req.messages.map((m) => m.content).join('\n');
  if (req.purpose === 'summary') return { text: `Pages read so far: 0 to ${lastPage(text)}.`, usage: { inputTokens: estimateAll(req.messages), outputTokens: 12 } };
  const next = lastPage(req.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '') + 1;
  if (next >= PAGES) return { text: `Read ${next} pages.` };
  const read = (page: number) => ({ id: `p${page}`, name: 'read_page', arguments: JSON.stringify({ page }) });
  return { toolCalls: next % 7 === 6 && next + 1 < PAGES ? [read(next), read(next + 1)] : [read(next)] };
}

/** Throws unless every tool message of `messages` answers a call of the assistant message before it, and every call is answered. */
function assertNoOrphans(messages: readonly { role: string; toolCalls?: { id: string }[]; toolCallId?: string }[]): void {
  let open = new Set<string>();
  for (const m of messages) {
    if (m.role === 'tool') {
      expect(open.has(m.toolCallId!), `tool result ${m.toolCallId} without its call`).toBe(true);
      open.delete(m.toolCallId!);
      continue;
    }
    expect([...open], 'calls without results').toEqual([]);
    open = new Set((m.toolCalls ?? []).map((c) => c.id));
  }
  expect([...open], 'calls without results').toEqual([]);
}

/** A scripted model recording the requests it was sent; `hold(req)` makes that call hang until aborted. */
function model(hold?: (req: ModelRequest) => boolean): Model & { requests: ModelRequest[]; held: Promise<void> } {
  const requests: ModelRequest[] = [];
  let onHeld!: () => void;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const m = scriptedModel(async (req) => {
    if (hold?.(req)) {
      onHeld();
      await new Promise<never>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }));
    }
    requests.push(req);
    return respond(req);
  }, 'reader-model');
  return Object.assign(m, { requests, held });
}

function runtime(options: Parameters<typeof createRuntime>[0]): Runtime {
  const rt = createRuntime(options);
  cleanup.push(() => rt.close());
  return rt;
}

/** Events without what differs between two runs of one conversation: their times. */
function timeless(events: readonly SwarmEvent[]): unknown[] {
  return JSON.parse(JSON.stringify(events, (k, v: unknown) => (k === 'timestamp' || k === 'durationMs' ? undefined : v))) as unknown[];
}

async function run(definition: ReturnType<typeof reader>, store: SwarmStore, m = model()) {
  const rt = runtime({ swarms: [definition], model: m, store });
  const client = rt.forSwarm(definition, 'doc');
  await client.run('Read the document.');
  const result = await client.wait();
  return { result, events: await collect(client.events()), requests: m.requests, rt };
}

/** What every request of a run under `policy` must be: under budget, no orphan, pinned messages first. */
function checkRequests(requests: readonly ModelRequest[]) {
  const turns = requests.filter((r) => r.purpose !== 'summary');
  for (const req of turns) {
    expect(estimateAll(req.messages)).toBeLessThanOrEqual(MAX_TOKENS);
    expect(req.messages[0]).toEqual({ role: 'system', content: 'Read every page, then say how many.' });
    expect(req.messages[1]).toEqual({ role: 'user', content: 'Read the document.' });
    assertNoOrphans(req.messages);
  }
  return turns;
}

const llmCalls = (events: readonly SwarmEvent[]) => events.filter((e): e is Extract<SwarmEvent, { kind: 'internal:llm-call' }> => e.kind === 'internal:llm-call');

describe.each(['trim', 'summarize'] as const)("history { strategy: '%s' } over a 400-page reading", (strategy) => {
  const definition = reader({ maxTokens: MAX_TOKENS, strategy });

  it('sends under maxTokens in every request, never an orphan tool message, stores the whole conversation, and replays with zero model calls', async () => {
    const store = memoryStore();
    const { result, events, requests } = await run(definition, store);
    expect(result).toEqual({ status: 'completed', result: `Read ${PAGES} pages.` });
    const turns = checkRequests(requests);
    // Shrunk: without the policy the last request would hold every page (~60k tokens).
    expect(estimateAll(turns.at(-1)!.messages)).toBeGreaterThan(MAX_TOKENS / 4);
    expect(turns.at(-1)!.messages.length).toBeLessThan(100);
    // Stored whole: system, user, then an assistant message and its results per turn, and the answer.
    const stored = (await store.load('doc'))!.snapshot as { context: { messages: unknown[]; summary?: { text: string; upTo: number } } };
    expect(stored.context.messages.length).toBe(2 + turns.length + PAGES);
    const summaries = llmCalls(events).filter((e) => e.summary);
    if (strategy === 'trim') {
      expect(summaries).toEqual([]);
      expect(requests.some((r) => r.purpose === 'summary')).toBe(false);
    } else {
      // Extended incrementally: a summary every several turns, each recorded before its step's call, with its usage.
      expect(summaries.length).toBeGreaterThan(3);
      expect(summaries.length).toBeLessThan(turns.length / 5);
      for (const s of summaries) {
        expect(s.usage?.outputTokens).toBe(12);
        const next = events[events.indexOf(s) + 1]!;
        expect(next).toMatchObject({ kind: 'internal:llm-call', turn: s.turn, agent: 'reader' });
      }
      // Each summary call after the first extends the one before it.
      const summaryRequests = requests.filter((r) => r.purpose === 'summary');
      expect(summaryRequests).toHaveLength(summaries.length);
      expect(summaryRequests[0]!.messages[0]!.content).toBe(SUMMARY_INSTRUCTIONS);
      expect(summaryRequests[1]!.messages[1]!.content).toContain(`The summary so far:\n${summaries[0]!.response.text}`);
      // The request carries the latest summary after the pinned messages.
      expect(turns.at(-1)!.messages[2]!.content).toContain(summaries.at(-1)!.response.text!);
      expect(stored.context.summary).toEqual({ text: summaries.at(-1)!.response.text, upTo: summaries.at(-1)!.summary!.upTo });
      // Summary calls count in the swarm's usage.
      const usage = (await store.load('doc'))!.snapshot as { context: { usage: { outputTokens: number } } };
      expect(usage.context.usage.outputTokens).toBe(12 * summaries.length);
    }
    const replayer = runtime({ swarms: [definition], model: forbiddenModel(), store });
    expect(await collect(replayer.replay('doc'))).toEqual(events);
  });

  it('restored mid-way on a new runtime: the same events as an uninterrupted run (the summary kept, not made again)', async () => {
    const whole = await run(definition, memoryStore());
    const shared = memoryStore();
    const m1 = model((req) => req.purpose !== 'summary' && lastPage(req.messages.at(-1)!.content) === 250);
    const a = runtime({ swarms: [definition], model: m1, store: shared });
    await a.forSwarm(definition, 'doc').run('Read the document.');
    await m1.held;
    await a.close();
    const before = (await shared.load('doc'))!.snapshot as { context: { summary?: { text: string } } };
    if (strategy === 'summarize') expect(before.context.summary?.text).toMatch(/^Pages read so far: 0 to \d+\.$/);
    const m2 = model();
    const b = runtime({ swarms: [definition], model: m2, store: shared });
    await b.start();
    const client = b.forSwarm(definition, 'doc');
    expect(await client.wait()).toEqual(whole.result);
    const events = await collect(client.events());
    expect(timeless(events)).toEqual(timeless(whole.events));
    checkRequests(m2.requests);
    if (strategy === 'summarize') {
      // The first request after the restore carries the summary made before it.
      expect(m2.requests[0]!.messages[2]!.content).toContain(before.context.summary!.text);
      const firstSummary = m2.requests.find((r) => r.purpose === 'summary');
      expect(firstSummary?.messages[1]?.content).toContain('The summary so far:');
    }
    const replayer = runtime({ swarms: [definition], model: forbiddenModel(), store: shared });
    expect(await collect(replayer.replay('doc'))).toEqual(events);
  });
});

describe('history under a budget', () => {
  it('a summary call is reserved and counted like any model call: the budget trips with every call, summaries included, counted once', async () => {
    const capped = defineSwarm({
      id: 'reader',
      instructions: 'Read every page, then say how many.',
      tools: [readPage],
      maxTurns: PAGES + 10,
      history: { maxTokens: MAX_TOKENS, strategy: 'summarize' },
      budget: { modelCalls: 60 },
    });
    const m = model();
    const rt = runtime({ swarms: [capped], model: m, store: memoryStore() });
    const client = rt.forSwarm(capped, 'doc');
    await client.run('Read the document.');
    const result = await client.wait();
    // Paused, its stream does not end: its stored events so far.
    const events = await rt.store.readEvents('doc', 0);
    const requests = m.requests;
    expect(result).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { limit: 'modelCalls', max: 60, spent: 60, left: 0 } } });
    const calls = llmCalls(events);
    expect(calls.some((e) => e.summary)).toBe(true);
    // Sixty calls made and recorded, summaries among them; none past the cap.
    expect(requests).toHaveLength(60);
    expect(calls).toHaveLength(60);
    const own = (await rt.forSwarm(capped, 'doc').usage()).budgets?.at(-1);
    expect(own).toMatchObject({ spent: { modelCalls: 60 }, left: { modelCalls: 0 } });
  });
});

describe('history policies of agents and of ad-hoc swarms', () => {
  it("an agent's conversation is shrunk by its own policy (the request kept), and its replay makes no model call", async () => {
    const agentPages = 120;
    const agentMax = 1500;
    const readerAgent = defineAgent({
      id: 'reader-agent',
      description: 'Reads documents',
      instructions: 'Read every page.',
      tools: [readPage],
      maxTurns: agentPages + 5,
      history: { maxTokens: agentMax, strategy: 'summarize' },
    });
    const delegator = defineSwarm({ id: 'delegator', instructions: 'Have the document read.', handoffs: [handoff.toAgent(readerAgent)] });
    const requests: ModelRequest[] = [];
    const m = scriptedModel((req) => {
      requests.push(req);
      if (req.agentId === 'delegator') {
        return req.messages.some((x) => x.role === 'tool')
          ? { text: 'The agent read it.' }
          : { toolCalls: [{ id: 'h0', name: 'handoff_to_reader_agent', arguments: JSON.stringify({ request: 'Read it all.' }) }] };
      }
      if (req.purpose === 'summary') return { text: `Read up to ${lastPage(req.messages[1]!.content)}.` };
      const next = lastPage(req.messages.filter((x) => x.role === 'tool').at(-1)?.content ?? '') + 1;
      return next >= agentPages ? { text: `Read ${next} pages.` } : { toolCalls: [{ id: `p${next}`, name: 'read_page', arguments: JSON.stringify({ page: next }) }] };
    });
    const store = memoryStore();
    const rt = runtime({ swarms: [delegator], agents: [readerAgent], model: m, store });
    const client = rt.forSwarm(delegator, 'doc');
    await client.run('Read the document.');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'The agent read it.' });
    const agentTurns = requests.filter((r) => r.agentId === 'reader-agent' && r.purpose !== 'summary');
    expect(agentTurns).toHaveLength(agentPages + 1);
    for (const req of agentTurns) {
      expect(estimateAll(req.messages)).toBeLessThanOrEqual(agentMax);
      expect(req.messages.slice(0, 2)).toEqual([
        { role: 'system', content: 'Read every page.' },
        { role: 'user', content: 'Read it all.' },
      ]);
      assertNoOrphans(req.messages);
    }
    const events = await collect(client.events());
    expect(llmCalls(events).filter((e) => e.summary && e.agent === 'reader-agent').length).toBeGreaterThan(1);
    // The orchestrator has no policy: its requests are its whole conversation.
    expect(requests.filter((r) => r.agentId === 'delegator').at(-1)!.messages).toHaveLength(4);
    const replayer = runtime({ swarms: [delegator], agents: [readerAgent], model: forbiddenModel(), store });
    expect(await collect(replayer.replay('doc'))).toEqual(events);
  });

  it('an ad-hoc swarm takes a policy; an invalid one is refused when defined', async () => {
    const m = model();
    const rt = runtime({ swarms: [], model: m, store: memoryStore() });
    const adhoc = rt.adhoc('doc');
    await adhoc.run({
      userMessage: 'Read the document.',
      instructions: 'Read every page, then say how many.',
      tools: [readPage],
      maxTurns: PAGES + 10,
      history: { maxTokens: MAX_TOKENS, strategy: 'trim' },
    });
    expect(await adhoc.wait()).toEqual({ status: 'completed', result: `Read ${PAGES} pages.` });
    checkRequests(m.requests);
    expect(() => reader({ maxTokens: 10, strategy: 'trim' })).toThrow(/history.maxTokens must be a whole number of at least 256/);
    expect(() => reader({ maxTokens: 1000, strategy: 'drop' as never })).toThrow(/history.strategy must be 'trim' or 'summarize'/);
  });
});

describe('history over the wire', () => {
  it('the real openai client sends a trimmed conversation the API accepts: tool results only after their calls', async () => {
    const pages = 40;
    const server = await startOpenAIServer((body) => {
      const tools = body.messages.filter((x) => x.role === 'tool');
      const next = lastPage(String(tools.at(-1)?.content ?? '')) + 1;
      if (next >= pages) return { text: `Read ${next} pages.` };
      const read = (page: number) => ({ id: `p${page}`, name: 'read_page', arguments: JSON.stringify({ page }) });
      return { toolCalls: next % 3 === 2 ? [read(next), read(next + 1)] : [read(next)] };
    });
    cleanup.push(() => server.close());
    const definition = defineSwarm({ id: 'reader', instructions: 'Read every page.', tools: [readPage], maxTurns: pages, history: { maxTokens: 800, strategy: 'trim' } });
    const rt = runtime({ swarms: [definition], model: openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k', stream: false }), store: memoryStore() });
    const client = rt.forSwarm(definition, 'doc');
    await client.run('Read the document.');
    expect(await client.wait()).toMatchObject({ status: 'completed', result: expect.stringMatching(/^Read \d+ pages\.$/) });
    expect(server.requests.length).toBeGreaterThan(20);
    for (const body of server.requests as { messages: { role: string; content: string; tool_calls?: { id: string }[]; tool_call_id?: string }[] }[]) {
      // What the API checks: every tool message answers a tool call of the assistant message before it.
      assertNoOrphans(body.messages.map((x) => ({ role: x.role, toolCalls: x.tool_calls, toolCallId: x.tool_call_id })));
      expect(body.messages.slice(0, 2).map((x) => x.role)).toEqual(['system', 'user']);
      expect(body.messages.length).toBeLessThan(20);
    }
  });
});
