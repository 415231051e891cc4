/**
 * The `ticketing` swarm: books tickets for one activity. It takes structured input
 * (`{ activity, day, people }`), so a parent's handoff tool takes exactly those arguments, and
 * returns a typed {@link TicketConfirmation}. Used as a child by the activity-booking planner
 * and found through the swarm registry by the task planner.
 *
 * @module
 */
import { z } from 'zod';
import { defineSwarm, tool, type ModelRequest, type ModelResponse } from '../../src/index.js';
import { dayIn } from '../activity-planner/agents.js';
import { calls, hash, lastResult, parseJson } from '../shared/demo.js';

/**
 * What ticketing needs to book.
 *
 * @example
 * TicketRequest.parse({ activity: 'Kayaking on the lake', day: 'Saturday', people: 2 });
 */
export const TicketRequest = z.object({
  activity: z.string().min(1).describe('The activity to book, e.g. "Kayaking on the lake"'),
  day: z.string().min(1).describe('A weekday, e.g. "Saturday"'),
  people: z.number().int().min(1).max(20).describe('How many tickets'),
});

/**
 * A ticket request's type.
 *
 * @example
 * const r: TicketRequest = { activity: 'Science museum', day: 'Sunday', people: 3 };
 */
export type TicketRequest = z.output<typeof TicketRequest>;

/**
 * What ticketing returns.
 *
 * @example
 * TicketConfirmation.parse({ confirmation: 'TKT-3F9A2C', total: 50 });
 */
export const TicketConfirmation = z.object({
  confirmation: z.string().describe('The booking reference'),
  total: z.number().describe('Total price in EUR'),
});

/**
 * A confirmation's type.
 *
 * @example
 * const c: TicketConfirmation = { confirmation: 'TKT-3F9A2C', total: 50 };
 */
export type TicketConfirmation = z.output<typeof TicketConfirmation>;

/** Fake unit prices in EUR, by a keyword of the activity; anything else costs {@link DEFAULT_PRICE}. */
const PRICES: readonly [RegExp, number, string][] = [
  [/museum|gallery|exhibition/i, 14, 'City Science Museum'],
  [/kayak|canoe|paddle/i, 25, 'Lakeside Boat House'],
  [/climb|boulder/i, 18, 'Vertical Climbing Hall'],
  [/cinema|film|movie/i, 12, 'Odeon Riverside'],
  [/tour|walk/i, 15, 'Old Town Guides'],
  [/bike|cycl/i, 20, 'Riverside Bike Rental'],
  [/concert|gig|show/i, 45, 'Concert Hall'],
];
const DEFAULT_PRICE = 22;

/**
 * `book_tickets({activity, day, people})`: books with a fake provider. Deterministic: the same
 * booking gets the same reference, so reruns and tests see the same world.
 *
 * @example
 * await bookTickets.execute({ activity: 'Kayaking on the lake', day: 'Saturday', people: 2 }, ctx)
 * // { confirmation: 'TKT-…', venue: 'Lakeside Boat House', unitPrice: 25, total: 50, … }
 */
export const bookTickets = tool({
  name: 'book_tickets',
  description: 'Books tickets for an activity on a day with the provider that runs it. Returns the booking reference and price.',
  parameters: TicketRequest,
  execute: ({ activity, day, people }) => {
    const d = dayIn(day, day);
    const [, unitPrice, venue] = PRICES.find(([re]) => re.test(activity)) ?? [/./, DEFAULT_PRICE, 'City Activities Ltd'];
    const confirmation = `TKT-${hash(`${activity}|${d}|${people}`).toString(36).toUpperCase().padStart(6, '0').slice(0, 6)}`;
    return { confirmation, activity, day: d, people, venue, unitPrice, total: unitPrice * people, currency: 'EUR' };
  },
});

/**
 * The ticketing swarm. Customizable, so a planner that finds it through the swarm registry may
 * add instructions (e.g. "aisle seats").
 *
 * @example
 * const client = runtime.forSwarm(ticketing); // SwarmClient<TicketRequest, TicketConfirmation>
 * await client.run({ activity: 'Kayaking on the lake', day: 'Saturday', people: 2 });
 */
export const ticketing = defineSwarm({
  id: 'ticketing',
  name: 'Ticketing',
  description: 'Books tickets for activities, tours, museums, concerts and events: give the activity, the day and how many people.',
  input: TicketRequest,
  result: TicketConfirmation,
  instructions: ({ input }) =>
    [
      `Book ${input.people} ticket(s) for "${input.activity}" on ${input.day}.`,
      'Call book_tickets once with exactly these details, then call complete with its confirmation reference and total price.',
      'If booking fails, call fail with the reason.',
    ].join('\n'),
  tools: [bookTickets],
  maxTurns: 4,
  customizable: true,
});

/**
 * The demo script of the ticketing orchestrator: book once, then complete with what the
 * provider said.
 *
 * @example
 * const response = ticketingScript(req); // a book_tickets call first; once it answered, complete with the booking
 */
export function ticketingScript(req: ModelRequest): ModelResponse {
  const raw = lastResult(req.messages, bookTickets.name);
  const booked = parseJson<{ confirmation: string; total: number }>(raw);
  if (booked) return calls(req, [['complete', { result: { confirmation: booked.confirmation, total: booked.total } }]]);
  // A result that is not JSON is the runtime's error text: retrying the same booking won't help.
  if (raw !== undefined) return calls(req, [['fail', { reason: `Booking failed: ${raw}` }]]);
  // The instructions carry the request; read it back as a model would.
  const system = req.messages[0]?.content ?? '';
  const m = /Book (\d+) ticket\(s\) for "(.+)" on (\w+)\./.exec(system);
  if (!m) return calls(req, [['fail', { reason: 'I could not tell what to book.' }]]);
  return calls(req, [[bookTickets.name, { activity: m[2], day: m[3], people: Number(m[1]) }]]);
}
