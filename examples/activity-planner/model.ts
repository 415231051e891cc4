/**
 * `demoModel`: a scripted stand-in for an LLM, so the activity planner runs offline. It reads
 * only what a real model would read (the request's messages and tools) and answers the way a
 * well-behaved model would, with a little latency and streamed text so the event stream is
 * worth watching.
 *
 * @module
 */
import { handoffToolName, scriptedModel, type ChatMessage, type Model, type ModelRequest, type ModelResponse } from '../../src/index.js';
import { allergenAgent, calendarAgent, dayIn, weatherAgent } from './agents.js';

/**
 * Options of {@link createDemoModel}.
 *
 * @example
 * const fast: DemoModelOptions = { latencyMs: [0, 0], chunkDelayMs: 0 };
 */
export interface DemoModelOptions {
  /** Simulated thinking time per call, drawn uniformly from `[min, max]`. Default `[30, 80]`. */
  latencyMs?: readonly [number, number];
  /** Pause between streamed text chunks. Default 8. */
  chunkDelayMs?: number;
}

/**
 * Creates a scripted model for the activity planner: the orchestrator hands off to the weather,
 * calendar and allergen agents in turn, then completes with a recommendation built from their
 * answers; each agent calls its tool once, then summarizes the tool's result.
 *
 * @example
 * const fast = createDemoModel({ latencyMs: [0, 0], chunkDelayMs: 0 }); // no simulated latency, for tests
 */
export function createDemoModel(options: DemoModelOptions = {}): Model {
  const [min, max] = options.latencyMs ?? [30, 80];
  const chunkDelay = options.chunkDelayMs ?? 8;
  return scriptedModel(async (req) => {
    await sleep(min + Math.random() * (max - min), req.signal);
    // By who speaks, not by the tools offered: an agent hosted for another process (over NATS)
    // runs as a swarm of its own and is offered `complete` too.
    const response = AGENT_TOOLS.has(req.agentId) ? actAsAgent(req) : orchestrate(req);
    // Stream the text the way a real model would, so clients see `artifact-update` chunks.
    if (response.text && req.onText) {
      for (const chunk of response.text.match(/\S+\s*/g) ?? []) {
        req.onText(chunk);
        await sleep(chunkDelay, req.signal);
      }
    }
    return response;
  }, 'demo (scripted)');
}

/**
 * The default demo model (30–80 ms per call).
 *
 * @example
 * const next = await demoModel.call(req); // the script's next step for that request, after 30–80 ms
 */
export const demoModel: Model = createDemoModel();

// ---- the orchestrator ------------------------------------------------------------------

/** Which specialist to ask, in order, and how a model would phrase the question. */
const PLAN = [
  { agent: weatherAgent.id, ask: (day: string) => `What is the weather forecast for ${day}?` },
  { agent: calendarAgent.id, ask: (day: string) => `When is the user busy, and when free, on ${day}?` },
  { agent: allergenAgent.id, ask: (day: string) => `How high are pollen levels on ${day}?` },
] as const;

function orchestrate(req: ModelRequest): ModelResponse {
  const day = dayIn(req.messages.find((m) => m.role === 'user')?.content ?? '');
  const answers = toolAnswers(req.messages);
  // One handoff per turn, like a cautious model that reads each answer before the next step;
  // a handoff the runtime did not offer is skipped rather than called.
  const next = PLAN.find((p) => !answers.has(handoffToolName(p.agent)) && req.tools.some((t) => t.name === handoffToolName(p.agent)));
  if (next) {
    const name = handoffToolName(next.agent);
    return { toolCalls: [{ id: `call_${name}`, name, arguments: JSON.stringify({ request: next.ask(day) }) }] };
  }
  const get = (agent: string) => answers.get(handoffToolName(agent)) ?? '(no answer)';
  const result = recommend(day, get(weatherAgent.id), get(calendarAgent.id), get(allergenAgent.id));
  return { toolCalls: [{ id: 'call_complete', name: 'complete', arguments: JSON.stringify({ result }) }] };
}

/** Tool results of a conversation, keyed by the name of the call that produced them. */
function toolAnswers(messages: readonly ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
  const answers = new Map<string, string>();
  for (const m of messages) {
    const name = m.role === 'tool' && m.toolCallId ? names.get(m.toolCallId) : undefined;
    if (name) answers.set(name, m.content);
  }
  return answers;
}

/** Turns the three answers (plain text, as a model reads them) into an ActivityRecommendation. */
function recommend(day: string, weather: string, calendar: string, pollen: string) {
  const rain = Number(/(\d+)% chance of rain/.exec(weather)?.[1] ?? 0);
  const wind = Number(/wind (\d+) km\/h/.exec(weather)?.[1] ?? 0);
  const busy = /busy (.+?);/.exec(calendar)?.[1]?.replace(/^never$/, '');
  const free = /free (\d\d:\d\d-\d\d:\d\d)/.exec(calendar)?.[1];
  const highPollen = [...pollen.matchAll(/(\w+) pollen high/g)].map((m) => m[1]!);
  const wet = rain >= 50;
  const activities = wet
    ? ['Visit the science museum', 'Indoor climbing session', 'Cinema followed by a café']
    : highPollen.includes('grass')
      ? ['Bike ride along the river path', 'Kayaking on the lake', 'Walking tour of the old town']
      : ['Hike in the hills', 'Picnic in the park', 'Bike ride along the river path'];
  const warnings = [
    ...(highPollen.length > 0 ? [`High ${highPollen.join(' and ')} pollen: take antihistamines and avoid meadows.`] : []),
    ...(busy ? [`Busy ${busy}: plan activities around it.`] : []),
    ...(wet ? [`${rain}% chance of rain: bring a waterproof.`] : []),
    ...(wind >= 25 ? [`Windy (${wind} km/h): avoid exposed ridges and water.`] : []),
  ];
  const why = wet
    ? 'Rain is likely, so I picked indoor activities'
    : `The weather is good, so I picked outdoor activities${highPollen.includes('grass') ? ' away from grassy areas' : ''}`;
  const reasoning = `Weather: ${weather} Calendar: ${calendar} Allergens: ${pollen} ${why}${free ? `, all within your free time (${free})` : ''}.`;
  return { day, activities, reasoning, warnings };
}

// ---- the agents ------------------------------------------------------------------------

/** Each agent's own tool: the one it calls before answering. */
const AGENT_TOOLS = new Map([weatherAgent, calendarAgent, allergenAgent].map((a) => [a.id, a.tools[0]!.name]));

function actAsAgent(req: ModelRequest): ModelResponse {
  const last = req.messages.at(-1);
  if (last?.role === 'tool') {
    const name = toolNameOf(req.messages, last.toolCallId) ?? '';
    return { text: summarize(name, last.content) };
  }
  const tool = req.tools.find((t) => t.name === AGENT_TOOLS.get(req.agentId));
  if (!tool) return { text: 'I have no tools to answer that.' };
  const day = dayIn(last?.content ?? '');
  // Unique per conversation: the runtime keys calls by id.
  return { toolCalls: [{ id: `call_${tool.name}_${req.messages.length}`, name: tool.name, arguments: JSON.stringify({ day }) }] };
}

function toolNameOf(messages: readonly ChatMessage[], id: string | undefined): string | undefined {
  for (const m of messages) for (const c of m.toolCalls ?? []) if (c.id === id) return c.name;
  return undefined;
}

/** A one-sentence summary of a tool result; falls back to the raw text on anything odd. */
function summarize(toolName: string, content: string): string {
  let d: Record<string, any>;
  try {
    d = JSON.parse(content) as Record<string, any>;
  } catch {
    return `The tool said: ${content}`;
  }
  switch (toolName) {
    case 'get_forecast':
      return `${d.day}: ${d.sky}, ${d.lowC}–${d.highC}°C, ${d.rainChancePct}% chance of rain, wind ${d.windKph} km/h.`;
    case 'check_calendar': {
      const busy = (d.busy as { time: string; title: string }[]).map((b) => `${b.time} (${b.title})`).join(', ');
      return `${d.day}: busy ${busy || 'never'}; free ${d.free}.`;
    }
    case 'pollen_levels': {
      const high = ['grass', 'tree', 'weed'].filter((k) => d[k] === 'high');
      const concern = high.length > 0 ? ` That is a concern for allergy sufferers.` : ' No concern for allergy sufferers.';
      return `${d.day} in ${d.area}: grass pollen ${d.grass}, tree pollen ${d.tree}, weed pollen ${d.weed}.${concern}`;
    }
    default:
      return `The tool said: ${content}`;
  }
}

/** Resolves after `ms`; rejects when the swarm aborts the call (pause, stop). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
