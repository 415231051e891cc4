/**
 * The activity planner's three specialists and their tools. The tools return deterministic
 * fake data (no network) so the demo, the tests and a real model all see the same world.
 *
 * @module
 */
import { z } from 'zod';
import { defineAgent, tool } from '../../src/index.js';

/** Weekdays, used to normalize whatever day a model asks about. */
export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

/**
 * The weekday named in a text (`weekend` counts as Saturday), else `fallback`.
 *
 * @example
 * dayIn('Anything fun on sunday?') // 'Sunday'
 */
export function dayIn(text: string, fallback = 'Saturday'): string {
  const found = WEEKDAYS.find((d) => new RegExp(`\\b${d}\\b`, 'i').test(text));
  return found ?? (/\bweekend\b/i.test(text) ? 'Saturday' : fallback);
}

/** A small stable hash so every day (even an unusual spelling) gets the same fake data. */
function pick<T>(day: string, options: readonly T[]): T {
  let h = 7;
  for (const ch of dayIn(day, day).toLowerCase()) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return options[h % options.length]!;
}

// Saturday and Sunday are hand-picked so the demo shows both a sunny and a rainy plan.
const FORECASTS: Record<string, Forecast> = {
  Saturday: { sky: 'sunny', lowC: 13, highC: 24, rainChancePct: 10, windKph: 12 },
  Sunday: { sky: 'light rain', lowC: 11, highC: 16, rainChancePct: 70, windKph: 25 },
};

/**
 * What `get_forecast` returns.
 *
 * @example
 * const f: Forecast = { sky: 'sunny', lowC: 13, highC: 24, rainChancePct: 10, windKph: 12 };
 */
export interface Forecast {
  sky: string;
  lowC: number;
  highC: number;
  rainChancePct: number;
  windKph: number;
}

/**
 * `get_forecast({day})`: a fake, deterministic forecast.
 *
 * @example
 * await getForecast.execute({ day: 'Saturday' }, ctx) // { day: 'Saturday', sky: 'sunny', … }
 */
export const getForecast = tool({
  name: 'get_forecast',
  description: 'Weather forecast for a day of the coming week: sky, temperatures, chance of rain, wind.',
  parameters: z.object({ day: z.string().describe('A weekday, e.g. "Saturday"') }),
  execute: ({ day }) => {
    const d = dayIn(day, day);
    const forecast =
      FORECASTS[d] ??
      pick(d, [
        { sky: 'partly cloudy', lowC: 12, highC: 20, rainChancePct: 20, windKph: 15 },
        { sky: 'overcast', lowC: 10, highC: 17, rainChancePct: 40, windKph: 18 },
        { sky: 'thunderstorms', lowC: 14, highC: 22, rainChancePct: 80, windKph: 30 },
      ]);
    return { day: d, ...forecast };
  },
});

/**
 * `check_calendar({day})`: the user's fake busy slots and free window.
 *
 * @example
 * await checkCalendar.execute({ day: 'Saturday' }, ctx) // { day: 'Saturday', busy: [{ time: '09:00-10:30', … }], … }
 */
export const checkCalendar = tool({
  name: 'check_calendar',
  description: "The user's calendar for a day: busy slots and the longest free window.",
  parameters: z.object({ day: z.string().describe('A weekday, e.g. "Saturday"') }),
  execute: ({ day }) => {
    const d = dayIn(day, day);
    if (d === 'Saturday') return { day: d, busy: [{ time: '09:00-10:30', title: 'Dentist appointment' }], free: '10:30-19:00' };
    if (d === 'Sunday') return { day: d, busy: [{ time: '12:00-14:00', title: 'Family lunch' }], free: '14:00-20:00' };
    return { day: d, busy: [{ time: '09:00-17:00', title: 'Work' }], free: '17:30-21:00' };
  },
});

/**
 * `pollen_levels({day, area?})`: fake pollen counts per kind.
 *
 * @example
 * await pollenLevels.execute({ day: 'Saturday' }, ctx) // { day: 'Saturday', area: 'city centre', grass: 'high', … }
 */
export const pollenLevels = tool({
  name: 'pollen_levels',
  description: 'Pollen levels (grass, tree, weed: low/moderate/high) for a day and optional area.',
  parameters: z.object({ day: z.string(), area: z.string().optional().describe('Default: city centre') }),
  execute: ({ day, area }) => {
    const d = dayIn(day, day);
    const levels =
      d === 'Saturday'
        ? { grass: 'high', tree: 'moderate', weed: 'low' }
        : pick(d, [
            { grass: 'low', tree: 'low', weed: 'low' },
            { grass: 'moderate', tree: 'high', weed: 'low' },
          ]);
    return { day: d, area: area ?? 'city centre', ...levels };
  },
});

/**
 * Knows the weather.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * createRuntime({ agents: [weatherAgent], swarms: [], model });
 */
export const weatherAgent = defineAgent({
  id: 'weather-agent',
  name: 'Weather Agent',
  description: 'Provides the weather forecast for a day (sky, temperatures, rain, wind).',
  instructions:
    'You are a weather expert. Call get_forecast for the day asked about, then answer in one or two sentences with the sky, temperature range, chance of rain and wind.',
  tools: [getForecast],
});

/**
 * Knows the user's calendar.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * createRuntime({ agents: [calendarAgent], swarms: [], model });
 */
export const calendarAgent = defineAgent({
  id: 'calendar-agent',
  name: 'Calendar Agent',
  description: "Checks the user's calendar: busy slots and free time on a day.",
  instructions: "You manage the user's calendar. Call check_calendar for the day asked about, then answer with the busy slots (time and title) and the free window.",
  tools: [checkCalendar],
});

/**
 * Knows pollen levels, for users with allergies.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * createRuntime({ agents: [allergenAgent], swarms: [], model });
 */
export const allergenAgent = defineAgent({
  id: 'allergen-agent',
  name: 'Allergen Agent',
  description: 'Reports pollen levels (grass, tree, weed) for a day, for allergy sufferers.',
  instructions: 'You are an allergy advisor. Call pollen_levels for the day asked about, then answer with each pollen level and whether it is a concern.',
  tools: [pollenLevels],
});
