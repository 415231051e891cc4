// @ts-check
/**
 * How figures read on the page: token counts, durations, times, event summaries. Pure.
 *
 * @module
 */

/** @import { SwarmEvent } from './types.js' */

/**
 * 1234 → "1.2k", 1234567 → "1.2M".
 * @param {number | null | undefined} n
 */
export function count(n) {
  if (n === null || n === undefined) return '—';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/**
 * A duration: "0.4 ms", "12 ms", "1.5 s", "2m 03s".
 * @param {number} ms
 */
export function duration(ms) {
  if (ms < 1) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m ${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}s`;
}

/** Made once: `toLocaleTimeString` builds a formatter on every call (slow over 100,000 rows). */
const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const DATE = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: '2-digit', day: '2-digit' });
const DAY_MS = 86_400_000;

/**
 * A time of day (local), with the date when it is not today.
 * @param {number | null | undefined} t ms since the epoch
 * @param {number} [now]
 */
export function when(t, now = Date.now()) {
  if (t === null || t === undefined) return '—';
  const offset = new Date(t).getTimezoneOffset() * 60_000;
  const sameDay = Math.floor((t - offset) / DAY_MS) === Math.floor((now - offset) / DAY_MS);
  return sameDay ? TIME.format(t) : `${DATE.format(t)} ${TIME.format(t)}`;
}

/**
 * One line saying what an event is, for the timeline.
 * @param {SwarmEvent} e
 * @returns {{ kind: string, text: string }}
 */
export function describe(e) {
  switch (e.kind) {
    case 'task':
      return { kind: 'task', text: `submitted (${e.metadata.definitionId})` };
    case 'status-update': {
      const f = e.metadata;
      switch (f.type) {
        case 'started':
          return { kind: f.type, text: f.definitionId };
        case 'agent-handoff':
          return { kind: f.type, text: `${f.from} → ${f.to}: ${clip(f.request)}` };
        case 'swarm-handoff':
          return { kind: f.type, text: `${f.from} → ${f.to} (${f.childSwarmId})` };
        case 'handoff-result':
          return { kind: f.type, text: `${f.from} → ${f.to}${f.ok ? '' : ' (failed)'}: ${clip(f.content)}` };
        case 'child-swarm':
          return { kind: f.type, text: `${f.childSwarmId} ${f.lifecycle}${f.reason ? `: ${clip(f.reason)}` : ''}` };
        case 'tool-call':
          return { kind: f.type, text: `${f.agent} calls ${f.toolName}` };
        case 'turn-completed':
          return { kind: f.type, text: `turn ${f.turn}/${f.maxTurns}` };
        case 'paused':
          return { kind: f.type, text: clip(f.reason.message) };
        case 'resumed':
          return { kind: f.type, text: f.message ? clip(f.message) : '' };
        case 'extended':
          return { kind: f.type, text: `maxTurns ${f.previousMaxTurns} → ${f.maxTurns}` };
        case 'migrated':
          return { kind: f.type, text: `${f.definitionId} version ${f.from} → ${f.to}` };
        case 'completed':
          return { kind: f.type, text: clip(typeof f.result === 'string' ? f.result : (JSON.stringify(f.result) ?? '')) };
        case 'failed':
        case 'stopped':
          return { kind: f.type, text: clip(f.reason) };
        default:
          return { kind: 'status', text: e.status.state };
      }
    }
    case 'artifact-update':
      return { kind: 'artifact', text: e.artifact.name ?? e.artifact.artifactId };
    case 'internal:llm-call': {
      const said = e.response.text ? clip(e.response.text) : (e.response.toolCalls ?? []).map((c) => c.name).join(', ');
      const tokens = e.usage ? ` · ${e.usage.inputTokens + e.usage.outputTokens} tok` : '';
      return { kind: 'llm-call', text: `${e.agent} t${e.turn}: ${said} · ${duration(e.durationMs)}${tokens}` };
    }
    case 'internal:tool-start':
      return { kind: 'tool-start', text: `${e.agent} · ${e.toolName}(${clip(e.arguments, 60)})` };
    case 'internal:tool-complete':
      return { kind: 'tool-complete', text: `${e.toolName}${e.ok ? '' : ' (failed)'}: ${clip(e.content)}` };
    case 'internal:checkpoint':
      return { kind: 'checkpoint', text: e.step };
    default:
      return { kind: String(/** @type {{ kind?: unknown }} */ (e).kind ?? '?'), text: '' };
  }
}

/**
 * @param {string} text
 * @param {number} [max]
 */
export function clip(text, max = 120) {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
