/**
 * Swarms to try the command line's pause, resume and stop on (`xswarm run`, `list`, `pause`,
 * `resume`, `stop`), offline:
 * - `day-trip` asks its human which day to book (a `pause` with a question), then books the
 *   trip for the day the answer names;
 * - `countdown` counts down one tick a second (30 by default; the input sets how many), long
 *   enough to pause it, resume it and stop it while it runs.
 *
 * The model is scripted on purpose, also when `OPENAI_API_KEY` is set: the point is the
 * commands. It decides from the conversation alone, so a swarm continues in whichever process
 * takes it over (a later `xswarm resume`).
 *
 * @example
 * // npm run xswarm -- run examples/control.ts day-trip "the coast"
 * // npm run xswarm -- run examples/control.ts countdown 30 --id count-1   (Ctrl-C pauses it)
 * // npm run xswarm -- list
 * // npm run xswarm -- resume count-1 --module examples/control.ts
 * // npm run xswarm -- stop count-1 "enough" --module examples/control.ts
 *
 * @module
 */
import { z } from 'zod';
import { defineSwarm, scriptedModel, tool, type ModelRequest, type ModelResponse } from '../src/index.js';
import { calls, exchanges, hash, inputOf, sleep } from './shared/demo.js';

/** What `day-trip` asks its human. */
export const DAY_QUESTION = 'Which day should I book the trip for: Saturday or Sunday?';

/** How long `countdown` thinks before each tick, in milliseconds. */
export const TICK_MS = 1_000;

/**
 * `book_trip({destination, day})`: books a day trip (fake, deterministic reference).
 *
 * @example
 * await bookTrip.execute({ destination: 'the coast', day: 'Sunday' }, ctx) // { reference: 'TRIP-…', destination: 'the coast', day: 'Sunday' }
 */
export const bookTrip = tool({
  name: 'book_trip',
  description: 'Books a day trip to a destination on a day; returns the booking reference.',
  parameters: z.object({ destination: z.string().min(1), day: z.string().min(1) }),
  execute: ({ destination, day }) => ({
    reference: `TRIP-${hash(`${destination}|${day}`).toString(36).toUpperCase().slice(0, 6)}`,
    destination,
    day,
  }),
});

/**
 * `tick({remaining})`: one step of the countdown.
 *
 * @example
 * await tick.execute({ remaining: 3 }, ctx) // '3…'
 */
export const tick = tool({
  name: 'tick',
  description: 'Says one number of the countdown.',
  parameters: z.object({ remaining: z.number().int().min(0) }),
  execute: ({ remaining }) => `${remaining}…`,
});

/**
 * Asks which day, then books the trip. Input: the destination.
 *
 * @example
 * // npm run xswarm -- run examples/control.ts day-trip "the coast"
 */
export const dayTrip = defineSwarm({
  id: 'day-trip',
  name: 'Day trip',
  description: 'Books a day trip after asking the traveller which day suits them.',
  input: z.string().min(1).describe('Where to go'),
  instructions: ({ input }) =>
    `Book a day trip to ${input}. First call pause to ask the traveller: "${DAY_QUESTION}". ` +
    'Then call book_trip with the day they answered, and complete with the booking.',
  tools: [bookTrip],
  maxTurns: 6,
});

/**
 * Counts down one tick a second. Input: how many ticks (1 to 200; 30 when none is given).
 *
 * @example
 * // npm run xswarm -- run examples/control.ts countdown 30
 */
export const countdown = defineSwarm({
  id: 'countdown',
  name: 'Countdown',
  description: 'Counts down, one tick a second: a swarm that runs long enough to pause, resume and stop.',
  input: z.number().int().min(1).max(200).default(30).describe('How many ticks'),
  instructions: ({ input }) => `Count down from ${input}: call tick once per number, from ${input} down to 1, then complete with "Lift-off".`,
  tools: [tick],
  maxTurns: 205,
});

/** The swarms `xswarm run … examples/control.ts <definition>` runs. */
export const swarms = [dayTrip, countdown];

/** `day-trip`: ask, then book the day answered, then complete with the booking. */
function dayTripScript(req: ModelRequest): ModelResponse {
  const done = exchanges(req.messages);
  const asked = done.find((e) => e.name === 'pause');
  const booked = done.find((e) => e.name === 'book_trip');
  if (!asked) return calls(req, [['pause', { reason: DAY_QUESTION }]]);
  // The answer is the pause's tool result: the resume message, verbatim.
  const day = asked.result?.trim() || 'Saturday';
  if (!booked) return calls(req, [['book_trip', { destination: inputOf(req.messages), day }]]);
  const booking = JSON.parse(booked.result ?? '{}') as { reference?: string };
  return calls(req, [['complete', { result: `Booked a day trip to ${inputOf(req.messages)} on ${day} (${booking.reference})` }]]);
}

/** `countdown`: a tick per call, after {@link TICK_MS} of thinking that a pause or stop cuts short. */
async function countdownScript(req: ModelRequest): Promise<ModelResponse> {
  await sleep(TICK_MS, req.signal);
  // The input, a number, is the conversation's first user message.
  const from = Number(inputOf(req.messages));
  const ticked = exchanges(req.messages).filter((e) => e.name === 'tick' && e.result !== undefined).length;
  const remaining = from - ticked;
  if (remaining > 0) return calls(req, [['tick', { remaining }]]);
  return calls(req, [['complete', { result: `Lift-off after ${ticked} ticks` }]]);
}

/** The model of both swarms, by speaker. */
export const model = scriptedModel(async (req) => {
  if (req.agentId === dayTrip.id) return dayTripScript(req);
  if (req.agentId === countdown.id) return countdownScript(req);
  throw new Error(`examples/control.ts: no script for "${req.agentId}"`);
}, 'control demo (scripted)');
