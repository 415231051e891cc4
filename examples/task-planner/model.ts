/**
 * The task-planner demo model. The planner splits a multi-part request into tasks, searches
 * the swarm registry once per task (all searches in one response, so they run concurrently),
 * hands each task to the best match in one response (the child swarms run concurrently too),
 * filling structured inputs from the match's input schema, and completes with a summary.
 *
 * @module
 */
import type { Model, ModelRequest, ModelResponse } from '../../src/index.js';
import { dayIn } from '../activity-planner/agents.js';
import { activityAgents, activityPlanner, createDemoModel } from '../activity-planner/index.js';
import { peopleIn } from '../activity-booking/model.js';
import { ticketing, ticketingScript } from '../activity-booking/ticketing.js';
import { calls, createScriptedDemo, exchanges, inputOf, lastResult, parseJson, type DemoModelOptions } from '../shared/demo.js';

/**
 * The task planner's swarm id (declared here, not in index.ts, so the script can name it
 * without importing index.ts, which imports this module).
 *
 * @example
 * runtime.forSwarm(TASK_PLANNER_ID, 'tp')
 */
export const TASK_PLANNER_ID = 'task-planner';

/**
 * The forecaster's swarm id (declared here for the same reason).
 *
 * @example
 * runtime.forSwarm(FORECASTER_ID, 'tp:t2:0').getResult()
 */
export const FORECASTER_ID = 'forecaster';

/**
 * The parts of a multi-part request ("… and …", "…; …", "… then …").
 *
 * @example
 * splitTasks('Check the weather for Saturday and book kayaking for 3 people') // ['Check the weather for Saturday', 'book kayaking for 3 people']
 */
export function splitTasks(request: string): string[] {
  return request
    .split(/\s*(?:,?\s+and\s+|;\s*|,?\s+then\s+)/i)
    .map((t) => t.trim().replace(/[.!?]+$/, ''))
    .filter(Boolean);
}

/**
 * The keyword query the demo model searches with for a task: the capability it needs, in the
 * words swarm descriptions use (a real model rephrases the same way).
 *
 * @example
 * searchQuery('book kayaking for 3 people') // 'book tickets'
 */
export function searchQuery(task: string): string {
  if (/weather|forecast|rain|sunny|temperature/i.test(task)) return 'weather forecast';
  if (/\b(book|ticket|tickets|reserve)\b/i.test(task)) return 'book tickets';
  return task;
}

/** The activity a booking task names ("book kayaking for 3 people" → "Kayaking"). */
function activityOf(task: string): string {
  const what = /\b(?:book|reserve)\s+(?:tickets?\s+for\s+)?(.+?)(?=\s+(?:for|on)\b|$)/i.exec(task)?.[1] ?? task;
  return what.charAt(0).toUpperCase() + what.slice(1);
}

interface Card {
  id: string;
  inputSchema: { type?: string; properties?: Record<string, { type?: string }> };
}

/** A structured input for a card's input schema, filled from the task the way a model would. */
function fillInput(card: Card, task: string, request: string): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(card.inputSchema.properties ?? {})) {
    if (/day|date/i.test(key)) input[key] = dayIn(task, dayIn(request));
    else if (prop.type === 'integer' || prop.type === 'number') input[key] = peopleIn(task);
    else if (/activity|event/i.test(key)) input[key] = activityOf(task);
    else input[key] = task;
  }
  return input;
}

/** How a child's result reads in the summary. */
function outcomeOf(swarmId: string, result: string | undefined): string {
  const booked = parseJson<{ confirmation?: string; total?: number }>(result);
  if (swarmId === ticketing.id && booked?.confirmation) return `booked, reference ${booked.confirmation}, ${booked.total} EUR in total`;
  return (result ?? 'no answer').replace(/\.$/, '');
}

/** The best match of a search result, if any. */
function bestMatch(search: { result?: string } | undefined): Card | undefined {
  return parseJson<{ matches: Card[] }>(search?.result)?.matches[0];
}

/** The planner: search per task, hand off per task, summarize. */
function plannerScript(req: ModelRequest): ModelResponse {
  const request = inputOf(req.messages);
  const tasks = splitTasks(request);
  const done = exchanges(req.messages);
  const searches = done.filter((e) => e.name === 'swarm_registry_search');
  const handoffs = done.filter((e) => e.name === 'swarm_registry_handoff');
  if (searches.length === 0)
    return calls(
      req,
      tasks.map((t) => ['swarm_registry_search', { query: searchQuery(t) }] as [string, unknown]),
    );

  // Searches ran in task order, so the i-th search answers the i-th task; tasks nothing
  // matched get no handoff.
  const covered = tasks.flatMap((task, i) => {
    const card = bestMatch(searches[i]);
    return card ? [{ task, card }] : [];
  });
  if (covered.length === 0) return calls(req, [['fail', { reason: `No registered swarm can do: ${tasks.join('; ')}` }]]);
  if (handoffs.length === 0) {
    return calls(
      req,
      covered.map(({ task, card }): [string, unknown] => {
        const day = dayIn(task, dayIn(request));
        // A structured-input swarm gets `input` built from its schema; a text one the task.
        return [
          'swarm_registry_handoff',
          card.inputSchema.type === 'object'
            ? { swarm_id: card.id, input: fillInput(card, task, request) }
            : { swarm_id: card.id, request: dayIn(task, '') ? task : `${task} on ${day}` },
        ];
      }),
    );
  }
  // The handoffs were made in the order of the covered tasks.
  const steps = handoffs.map((h, i) => ({ task: covered[i]?.task ?? '', swarm: String(h.args.swarm_id), outcome: outcomeOf(String(h.args.swarm_id), h.result) }));
  const uncovered = tasks.filter((t) => !covered.some((c) => c.task === t));
  const summary = [
    ...steps.map((s) => `${s.task.charAt(0).toUpperCase()}${s.task.slice(1)}: ${s.outcome}.`),
    ...(uncovered.length > 0 ? [`No swarm found for: ${uncovered.join('; ')}.`] : []),
  ].join(' ');
  return calls(req, [['complete', { result: { summary, tasks: steps } }]]);
}

/** The forecaster swarm's orchestrator: one forecast, one sentence. */
function forecasterScript(req: ModelRequest): ModelResponse {
  const f = parseJson<{ day: string; sky: string; lowC: number; highC: number; rainChancePct: number; windKph: number }>(lastResult(req.messages, 'get_forecast'));
  if (f) {
    const verdict = f.rainChancePct >= 50 ? 'take a waterproof' : 'good weather to be outdoors';
    return { text: `${f.day}: ${f.sky}, ${f.lowC}–${f.highC}°C, ${f.rainChancePct}% chance of rain, wind ${f.windKph} km/h; ${verdict}.` };
  }
  return calls(req, [['get_forecast', { day: dayIn(inputOf(req.messages)) }]]);
}

/**
 * Creates the demo model of the task-planner example. Every swarm the registry may return has
 * a script: ticketing's own, and the activity planner's demo model for it and its agents.
 *
 * @example
 * const model = createTaskPlannerDemoModel({ latencyMs: [0, 0], chunkDelayMs: 0 });
 */
export function createTaskPlannerDemoModel(options: DemoModelOptions = {}): Model {
  const planner = createDemoModel(options);
  return createScriptedDemo(
    'task-planner demo',
    {
      [TASK_PLANNER_ID]: plannerScript,
      [FORECASTER_ID]: forecasterScript,
      [ticketing.id]: ticketingScript,
      [activityPlanner.id]: planner,
      ...Object.fromEntries(activityAgents.map((a) => [a.id, planner])),
    },
    options,
  );
}
