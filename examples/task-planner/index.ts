/**
 * Task planner with the swarm registry. The orchestrator has no declared handoffs, only
 * `tools: [swarmRegistry()]`: for a multi-part request it searches the registered swarms by
 * keyword (`swarm_registry_search`) and hands each task to a swarm a search returned
 * (`swarm_registry_handoff`), here the `forecaster` and the `ticketing` swarm, then completes
 * with a summary. The registry refuses ids no search returned, so the model cannot guess.
 *
 * @example
 * const { runtime } = createTaskPlannerRuntime({ env: {} });
 * const client = runtime.forSwarm(taskPlanner, 'tp');
 * await client.run('Check the weather for Saturday and book kayaking for 3 people');
 * (await client.wait()) // { status: 'completed', result: { summary: '…', tasks: [{ swarm: 'forecaster', … }, { swarm: 'ticketing', … }] } }
 *
 * @module
 */
import { z } from 'zod';
import { createRuntime, defineSwarm, swarmRegistry } from '../../src/index.js';
import { activityAgents, activityPlanner } from '../activity-planner/index.js';
import { getForecast } from '../activity-planner/agents.js';
import { ticketing } from '../activity-booking/ticketing.js';
import { chooseModel, type ExampleRuntime, type ExampleRuntimeOptions } from '../shared/demo.js';
import { createTaskPlannerDemoModel, FORECASTER_ID, TASK_PLANNER_ID } from './model.js';

export { createTaskPlannerDemoModel, searchQuery, splitTasks } from './model.js';

/**
 * A small swarm that answers weather questions (text in, text out) with `get_forecast`.
 *
 * @example
 * const client = runtime.forSwarm(forecaster); // SwarmClient<string, string>
 */
export const forecaster = defineSwarm({
  id: FORECASTER_ID,
  name: 'Forecaster',
  description: 'Weather forecasts: sky, temperatures, chance of rain and wind for a day of the coming week.',
  instructions:
    'You forecast the weather. Call get_forecast for the day asked about, then answer in one sentence: sky, temperatures, rain, wind, and whether it suits being outdoors.',
  tools: [getForecast],
  maxTurns: 3,
});

/**
 * The task planner's result.
 *
 * @example
 * TaskPlan.parse({ summary: '…', tasks: [{ task: 'book kayaking for 3 people', swarm: 'ticketing', outcome: 'booked …' }] });
 */
export const TaskPlan = z.object({
  summary: z.string(),
  tasks: z.array(z.object({ task: z.string(), swarm: z.string().describe('The id of the swarm that did it'), outcome: z.string() })),
});

/**
 * The task planner's result type.
 *
 * @example
 * const swarms = (p: TaskPlan) => p.tasks.map((t) => t.swarm);
 */
export type TaskPlan = z.output<typeof TaskPlan>;

/**
 * The task planner: input is a request with one or more tasks.
 *
 * @example
 * const client = runtime.forSwarm(taskPlanner); // SwarmClient<string, TaskPlan>
 */
export const taskPlanner = defineSwarm({
  id: TASK_PLANNER_ID,
  name: 'Task planner',
  description: 'Splits a request into tasks and delegates each to a registered swarm found through the swarm registry.',
  input: z.string().min(1),
  result: TaskPlan,
  instructions: ({ input }) =>
    [
      `The user asked: "${input}".`,
      'Split the request into its separate tasks. For each task, call swarm_registry_search with a few keywords for the capability it needs',
      '(e.g. "weather forecast", "book tickets"); you may search for several tasks at once.',
      'Then hand each task to the best match with swarm_registry_handoff: `request` for a swarm whose input schema is a string,',
      '`input` matching its input schema otherwise. Use only ids a search returned.',
      'Finally call complete with a short summary and, per task, the task, the swarm id that did it and its outcome.',
    ].join('\n'),
  tools: [swarmRegistry({ limit: 3 })],
  maxTurns: 5,
});

/**
 * Creates a runtime whose registry holds the task planner, the forecaster, ticketing and the
 * activity planner (with its agents): what a search may find.
 *
 * @example
 * const { runtime } = createTaskPlannerRuntime({ env: {}, demo: { latencyMs: [0, 0] } });
 * runtime.definitions().map((c) => c.id) // ['task-planner', 'forecaster', 'ticketing', 'activity-planner']
 */
export function createTaskPlannerRuntime(options: ExampleRuntimeOptions = {}): ExampleRuntime {
  const { model, offline } = chooseModel(options, () => createTaskPlannerDemoModel(options.demo));
  const runtime = createRuntime({
    swarms: [taskPlanner, forecaster, ticketing, activityPlanner],
    agents: activityAgents,
    model,
    ...(options.store ? { store: options.store } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  return { runtime, model, offline };
}
