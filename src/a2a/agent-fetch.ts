/**
 * The fetch of the A2A client (`./client.ts`) for one remote agent, found by its card URL. The
 * client reads the agent's card before a run and again before each call (through the SDK), then
 * calls whichever interface that card names; whoever serves the card is not trusted with our
 * memory, our time or where our requests (and their headers) go:
 *
 * - The card URL's own requests are card fetches: bounded in time, headers and body together,
 *   and in bytes, redirects only within the card's origin ({@link boundedFetch}). Only
 *   `http:` and `https:` card URLs are read.
 * - Every other request must go where the card may send us (`./endpoint-policy.ts`), checked
 *   before anything is sent; redirects only within its origin ({@link guardedFetch}). These
 *   carry the calls themselves (long streams, long answers), so no deadline or byte limit
 *   applies to them: the call's own signal bounds them.
 *
 * The client also refuses a card whose interfaces break the rule as soon as it reads it, with
 * a reason naming each; the check here stands behind that one, for any request the SDK makes.
 *
 * @module
 */
import { withTraceHeaders } from '../util/trace-headers.js';
import { boundedFetch, cardBounds, DEFAULT_CARD_TIMEOUT_MS, DEFAULT_MAX_CARD_BYTES, guardedFetch, urlOf } from './bounded-fetch.js';
import { type AllowedHosts, checkAllowedHosts, endpointProblem } from './endpoint-policy.js';

/** The options that bound what a card may make the client do (those of `A2ARemoteOptions`). */
export interface CardLimitOptions {
  timeoutMs?: number;
  maxCardBytes?: number;
  allowedHosts?: AllowedHosts;
}

/** {@link CardLimitOptions} checked, with their defaults. */
export interface CardLimits {
  timeoutMs: number;
  maxCardBytes: number;
  allowedHosts: AllowedHosts;
}

/**
 * The limits `options` give, each default when absent (5000 ms, 1 MiB, no other host). Throws a
 * `TypeError` prefixed with `where` for a `timeoutMs` that is not a positive number of ms, a
 * `maxCardBytes` that is not a positive integer, or an `allowedHosts` entry of no accepted form:
 * when the client is made, not at the first handoff.
 */
export function cardLimits(options: CardLimitOptions, where: string): CardLimits {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CARD_TIMEOUT_MS;
  // A timer of 0, a negative, NaN or more than 2^31-1 ms fires at once: every card would fail.
  if (!(timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) throw new TypeError(`${where}: timeoutMs must be a positive number of ms, not ${String(timeoutMs)}`);
  const maxCardBytes = options.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES;
  if (!Number.isSafeInteger(maxCardBytes) || maxCardBytes <= 0) {
    throw new TypeError(`${where}: maxCardBytes must be a positive integer, not ${String(maxCardBytes)}`);
  }
  const allowedHosts = [...(options.allowedHosts ?? [])];
  checkAllowedHosts(allowedHosts, `${where}: allowedHosts`);
  return { timeoutMs, maxCardBytes, allowedHosts };
}

/**
 * A fetch for the agent whose card is at `cardUrl`, over `base`, bounded by `limits` (see the
 * module doc).
 */
export function agentFetch(cardUrl: string, base: typeof fetch, limits: CardLimits): typeof fetch {
  const card = withoutFragment(cardUrl);
  const bounds = cardBounds(limits, `the agent card at ${cardUrl}`);
  return async (input, init = {}) => {
    // The SDK passes URLs and strings; a Request is taken apart so the checks below hold for it.
    if (input instanceof Request) {
      const body = input.body ? await input.arrayBuffer() : undefined;
      init = { method: input.method, headers: input.headers, signal: input.signal, ...(body ? { body } : {}), ...init };
    }
    const url = urlOf(input);
    if (withoutFragment(url) === card) {
      // The card URL comes from our own definition, not from a peer; still, a custom fetch may
      // read file: URLs, and nothing but http(s) is a card here.
      const protocol = URL.canParse(url) ? new URL(url).protocol : undefined;
      if (protocol !== 'http:' && protocol !== 'https:') throw new Error('only http: and https: card URLs are read');
      return boundedFetch(base, url, init, bounds);
    }
    const problem = endpointProblem(cardUrl, url, limits.allowedHosts);
    if (problem) throw new Error(`no request goes there: ${problem}`);
    // The call's trace context goes with it (when the runtime traces): the peer's spans join the trace.
    return guardedFetch(base, url, withTraceHeaders(init));
  };
}

/** `url` normalized (as the SDK's `new URL(path, base)` would spell it), without its fragment. */
function withoutFragment(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  parsed.hash = '';
  return parsed.href;
}
