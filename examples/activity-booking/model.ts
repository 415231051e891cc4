/**
 * The activity-booking demo model: the booking planner's script, the ticketing swarm's script,
 * and the activity planner's own demo model for the activity planner and its three agents.
 *
 * @module
 */
import { handoffToolName, type Model, type ModelRequest, type ModelResponse } from '../../src/index.js';
import { activityAgents, activityPlanner, createDemoModel, type ActivityRecommendation } from '../activity-planner/index.js';
import { dayIn } from '../activity-planner/agents.js';
import { calls, createScriptedDemo, exchanges, inputOf, parseJson, type DemoModelOptions } from '../shared/demo.js';
import { ticketing, ticketingScript, type TicketConfirmation } from './ticketing.js';

/**
 * The booking planner's swarm id (declared here, not in index.ts, so the script can name it
 * without importing index.ts, which imports this module).
 *
 * @example
 * runtime.forSwarm(ACTIVITY_BOOKING_ID, 'trip')
 */
export const ACTIVITY_BOOKING_ID = 'activity-booking';

const NUMBER_WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8 };

/**
 * How many people a request is for ("for 3 people", "the four of us"), default 2.
 *
 * @example
 * peopleIn('Plan Saturday for the three of us') // 3
 */
export function peopleIn(text: string): number {
  const m = /\b(\d+|one|two|three|four|five|six|seven|eight)\s+(?:of us|people|persons|adults|friends|tickets|guests)\b/i.exec(text);
  if (!m) return 2;
  return NUMBER_WORDS[m[1]!.toLowerCase()] ?? Number(m[1]);
}

/**
 * Activities one buys tickets for, most bookable first: a model picks a museum or a boat trip
 * over a walk in the park.
 */
const BOOKABLE = [/museum|gallery/i, /kayak|canoe|boat/i, /climb/i, /cinema|film/i, /tour/i, /bike/i];

/**
 * The first activity of a plan that can be booked (else the first activity).
 *
 * @example
 * bookableActivity(['Picnic in the park', 'Kayaking on the lake']) // 'Kayaking on the lake'
 */
export function bookableActivity(activities: readonly string[]): string {
  for (const re of BOOKABLE) {
    const hit = activities.find((a) => re.test(a));
    if (hit) return hit;
  }
  return activities[0]!;
}

/** The booking planner: plan (child swarm), then book (child swarm), then complete. */
function bookingScript(req: ModelRequest): ModelResponse {
  const request = inputOf(req.messages);
  const day = dayIn(request);
  const done = exchanges(req.messages);
  const planCall = done.find((e) => e.name === handoffToolName(activityPlanner.id));
  const bookCall = done.find((e) => e.name === handoffToolName(ticketing.id));
  if (!planCall) {
    return calls(req, [[handoffToolName(activityPlanner.id), { request: `Plan activities for ${day}. The user asked: "${request}"` }]]);
  }
  // A child swarm's result is its typed result as JSON; anything else is its failure text.
  const plan = parseJson<ActivityRecommendation>(planCall.result);
  if (!plan) return calls(req, [['fail', { reason: `Planning failed: ${planCall.result}` }]]);
  if (!bookCall) {
    const ticket = { activity: bookableActivity(plan.activities), day: plan.day, people: peopleIn(request) };
    return calls(req, [[handoffToolName(ticketing.id), ticket]]);
  }
  const booked = parseJson<TicketConfirmation>(bookCall.result);
  if (!booked) return calls(req, [['fail', { reason: `Booking failed: ${bookCall.result}` }]]);
  return calls(req, [['complete', { result: { plan, booking: { ...bookCall.args, ...booked } } }]]);
}

/**
 * Creates the demo model of the activity-booking example. The activity planner and its agents
 * answer with the activity planner's own demo model, unchanged: the child swarm behaves
 * exactly as when it runs on its own.
 *
 * @example
 * const model = createBookingDemoModel({ latencyMs: [0, 0], chunkDelayMs: 0 });
 */
export function createBookingDemoModel(options: DemoModelOptions = {}): Model {
  const planner = createDemoModel(options);
  return createScriptedDemo(
    'activity-booking demo',
    {
      [ACTIVITY_BOOKING_ID]: bookingScript,
      [ticketing.id]: ticketingScript,
      [activityPlanner.id]: planner,
      ...Object.fromEntries(activityAgents.map((a) => [a.id, planner])),
    },
    options,
  );
}
