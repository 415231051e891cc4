/**
 * The activity planner: an orchestrator that asks a weather, a calendar and an allergen agent
 * about a day, then recommends activities as a typed {@link ActivityRecommendation}.
 *
 * Runs offline on {@link demoModel}, or on OpenAI (or any compatible server) when
 * `OPENAI_API_KEY` is set.
 *
 * @example
 * const { runtime } = createActivityRuntime();
 * const client = runtime.forSwarm(activityPlanner);
 * await client.run('Suggest outdoor activities for Saturday');
 * const r = await client.wait(); // { status: 'completed', result: { day: 'Saturday', activities: [...], ... } }
 *
 * @module
 */
import { z } from 'zod';
import { createRuntime, defineSwarm, handoff, openaiModel, type Model, type Runtime, type SwarmStore } from '../../src/index.js';
import { allergenAgent, calendarAgent, weatherAgent } from './agents.js';
import { demoModel } from './model.js';

export { allergenAgent, calendarAgent, weatherAgent, getForecast, checkCalendar, pollenLevels } from './agents.js';
export { createDemoModel, demoModel, type DemoModelOptions } from './model.js';

/**
 * The planner's result.
 *
 * @example
 * ActivityRecommendation.parse({ day: 'Saturday', activities: ['Hike'], reasoning: 'Sunny.', warnings: [] });
 */
export const ActivityRecommendation = z.object({
  day: z.string().describe('The day the plan is for, e.g. "Saturday"'),
  activities: z.array(z.string()).min(1).describe('Concrete activities that fit the weather and free time'),
  reasoning: z.string().describe('Why, citing what the weather, calendar and allergen agents said'),
  warnings: z.array(z.string()).describe('Allergens, busy slots, rain, wind; empty when none'),
});

/**
 * The planner's result type.
 *
 * @example
 * const r: ActivityRecommendation = { day: 'Saturday', activities: ['Hike'], reasoning: 'Sunny.', warnings: [] };
 */
export type ActivityRecommendation = z.output<typeof ActivityRecommendation>;

/**
 * The three specialists, in the order the planner consults them.
 *
 * @example
 * createRuntime({ swarms: [activityPlanner], agents: activityAgents, model: demoModel });
 */
export const activityAgents = [weatherAgent, calendarAgent, allergenAgent] as const;

/**
 * The activity planner swarm: input is the user's request in plain text.
 *
 * @example
 * const client = runtime.forSwarm(activityPlanner); // SwarmClient<string, ActivityRecommendation>
 */
export const activityPlanner = defineSwarm({
  id: 'activity-planner',
  name: 'Activity Planner',
  description: 'Recommends activities for a day from the weather, the calendar and pollen levels.',
  input: z.string().min(1),
  result: ActivityRecommendation,
  // A function of the input so the request is in the system prompt, where models weigh it most.
  instructions: ({ input }) =>
    [
      `You plan activities for a user who asked: "${input}".`,
      'Work out which day they mean (a weekday; "weekend" or no day means Saturday).',
      'Consult your agents one at a time, each about that day: first weather-agent, then calendar-agent, then allergen-agent.',
      'Then call complete with: the day; three concrete activities that suit the weather, fit the free time and respect allergies;',
      'reasoning that cites what each agent said; and warnings (high pollen, busy slots, rain, wind), or an empty list.',
    ].join('\n'),
  handoffs: activityAgents.map((a) => handoff.toAgent(a)),
  maxTurns: 10,
});

/**
 * Options of {@link createActivityRuntime}.
 *
 * @example
 * const options: ActivityRuntimeOptions = { model: createDemoModel({ latencyMs: [0, 0] }) };
 */
export interface ActivityRuntimeOptions {
  /** Overrides the environment's choice. */
  model?: Model;
  store?: SwarmStore;
  /** Lease of the runtime on its swarms (see `createRuntime`). */
  leaseMs?: number;
  /** Where to look for `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `XSWARM_MODEL`; default `process.env`. */
  env?: Record<string, string | undefined>;
}

/**
 * A runtime with the planner and its agents, plus the model it chose.
 *
 * @example
 * const { runtime, model, offline } = createActivityRuntime();
 * console.log(offline ? 'offline demo' : model.name);
 */
export interface ActivityRuntime {
  runtime: Runtime;
  model: Model;
  /** True when running on the scripted {@link demoModel}. */
  offline: boolean;
}

/**
 * Creates a runtime for the activity planner. The model is `options.model`, else OpenAI
 * (`XSWARM_MODEL`, default `gpt-4o-mini`) when `OPENAI_API_KEY` is set, else {@link demoModel}.
 *
 * @example
 * const { runtime } = createActivityRuntime({ env: {} }); // always the offline demo
 * await runtime.forSwarm(activityPlanner).run('Plan my Sunday');
 */
export function createActivityRuntime(options: ActivityRuntimeOptions = {}): ActivityRuntime {
  const env = options.env ?? process.env;
  const apiKey = env['OPENAI_API_KEY'];
  const model =
    options.model ??
    // `||`: an exported-but-empty variable means "not set", as in openaiModel.
    (apiKey ? openaiModel({ model: env['XSWARM_MODEL'] || 'gpt-4o-mini', apiKey, ...(env['OPENAI_BASE_URL'] ? { baseURL: env['OPENAI_BASE_URL'] } : {}) }) : demoModel);
  const runtime = createRuntime({
    swarms: [activityPlanner],
    agents: activityAgents,
    model,
    ...(options.store ? { store: options.store } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  return { runtime, model, offline: model === demoModel };
}
