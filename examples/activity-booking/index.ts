/**
 * Activity booking: swarms of swarms. The booking planner hands off to the activity planner
 * (itself a swarm with three agents) and then to the `ticketing` swarm (structured input,
 * typed result), and completes with a typed {@link ActivityBooking}: the plan plus the booking.
 * Each child runs with a session of its own; only the request and the result cross over.
 *
 * @example
 * const { runtime } = createBookingRuntime({ env: {} });
 * const client = runtime.forSwarm(activityBooking, 'trip');
 * await client.run('Plan my Saturday and book something for the two of us');
 * const r = await client.wait(); // { status: 'completed', result: { plan: {...}, booking: { confirmation: 'TKT-…', total: 50, … } } }
 * // The children ran as swarms 'trip:t1:0' (activity-planner) and 'trip:t2:0' (ticketing).
 *
 * @module
 */
import { z } from 'zod';
import { createRuntime, defineSwarm, handoff } from '../../src/index.js';
import { activityAgents, activityPlanner, ActivityRecommendation } from '../activity-planner/index.js';
import { chooseModel, type ExampleRuntime, type ExampleRuntimeOptions } from '../shared/demo.js';
import { ACTIVITY_BOOKING_ID, createBookingDemoModel } from './model.js';
import { TicketConfirmation, TicketRequest, ticketing } from './ticketing.js';

export { bookTickets, TicketConfirmation, TicketRequest, ticketing, ticketingScript } from './ticketing.js';
export { bookableActivity, createBookingDemoModel, peopleIn } from './model.js';

/**
 * The booking planner's result: the activity planner's plan as it returned it, and what was booked.
 *
 * @example
 * ActivityBooking.parse({
 *   plan: { day: 'Saturday', activities: ['Kayaking on the lake'], reasoning: 'Sunny.', warnings: [] },
 *   booking: { activity: 'Kayaking on the lake', day: 'Saturday', people: 2, confirmation: 'TKT-1', total: 50 },
 * });
 */
export const ActivityBooking = z.object({
  plan: ActivityRecommendation,
  booking: TicketRequest.extend(TicketConfirmation.shape),
});

/**
 * The booking planner's result type.
 *
 * @example
 * const total = (r: ActivityBooking) => r.booking.total;
 */
export type ActivityBooking = z.output<typeof ActivityBooking>;

/**
 * The booking planner: input is the user's request in plain text.
 *
 * @example
 * const client = runtime.forSwarm(activityBooking); // SwarmClient<string, ActivityBooking>
 */
export const activityBooking = defineSwarm({
  id: ACTIVITY_BOOKING_ID,
  name: 'Activity Booking',
  description: 'Plans a day out with the activity planner, then books tickets for one of its activities.',
  input: z.string().min(1),
  result: ActivityBooking,
  instructions: ({ input }) =>
    [
      `You plan and book a day out for a user who asked: "${input}".`,
      '1. Hand off to activity-planner with the request, naming the day ("weekend" or no day means Saturday).',
      '2. From its plan, pick the first activity people buy tickets for (a museum, a boat, a climbing hall, a cinema, a tour)',
      "   and hand off to ticketing with that activity, the plan's day and the number of people (2 unless the user said otherwise).",
      '3. Call complete with the plan exactly as activity-planner returned it, and the booking: activity, day, people, confirmation, total.',
      'If planning or booking fails, call fail with the reason.',
    ].join('\n'),
  handoffs: [
    handoff.toSwarm(activityPlanner).withDescription('Plans a day: asks weather, calendar and pollen agents and recommends three activities (typed plan).'),
    handoff.toSwarm(ticketing),
  ],
  maxTurns: 6,
});

/**
 * Creates a runtime with the booking planner, the activity planner and its agents, and
 * ticketing. The model is `options.model`, else OpenAI when `OPENAI_API_KEY` is set, else
 * {@link createBookingDemoModel}.
 *
 * @example
 * const { runtime, offline } = createBookingRuntime({ env: {}, demo: { latencyMs: [0, 0] } });
 */
export function createBookingRuntime(options: ExampleRuntimeOptions = {}): ExampleRuntime {
  const { model, offline } = chooseModel(options, () => createBookingDemoModel(options.demo));
  const runtime = createRuntime({
    swarms: [activityBooking, activityPlanner, ticketing],
    agents: activityAgents,
    model,
    ...(options.store ? { store: options.store } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  return { runtime, model, offline };
}
