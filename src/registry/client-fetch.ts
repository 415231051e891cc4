/**
 * The fetch the registry gives its default A2A client for one agent. The client (the SDK's,
 * `src/a2a/client.ts`) reads the agent's card again before each call and then calls whichever
 * interface that card names, so without this the registry's bounds would hold at registration
 * and in health checks only: a card that turned endless, huge or slow after registration
 * would be read without limit, and one that turned to another host would be called there.
 *
 * - The card URL's own requests are card fetches: bounded in time and bytes, redirects only
 *   within the card's origin ({@link boundedFetch}).
 * - Every other request must go where the card may send the registry (`./endpoint-policy.ts`),
 *   checked before anything is sent; redirects only within its origin ({@link guardedFetch}).
 *   These carry the calls themselves (long streams, long answers), so no deadline or byte
 *   limit applies to them: the call's own signal bounds them.
 *
 * @module
 */
import { boundedFetch, guardedFetch, urlOf } from './bounded-fetch.js';
import { boundsOf, type CardFetchOptions } from './card-check.js';
import { endpointProblem } from './endpoint-policy.js';

/**
 * A fetch for calls to the agent whose card is at `cardUrl`, over `options.fetch` (default:
 * the global fetch), bounded by `options` (see the module doc). `options.signal` (the
 * registry's close) aborts its card fetches.
 */
export function agentClientFetch(cardUrl: string, options: CardFetchOptions): typeof fetch {
  // Looked up per call, so a fetch installed later (a test double, a proxy agent) is used.
  const base: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const card = withoutFragment(cardUrl);
  const bounds = boundsOf(options, `the agent card at ${cardUrl}`);
  return async (input, init = {}) => {
    // The SDK passes URLs and strings; a Request is taken apart so the checks below hold for it.
    if (input instanceof Request) {
      const body = input.body ? await input.arrayBuffer() : undefined;
      init = { method: input.method, headers: input.headers, signal: input.signal, ...(body ? { body } : {}), ...init };
    }
    const url = urlOf(input);
    if (withoutFragment(url) === card) {
      const signals = [init.signal, options.signal].filter((s): s is AbortSignal => !!s);
      return boundedFetch(base, url, { ...init, ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}) }, bounds);
    }
    const problem = endpointProblem(cardUrl, url, options.allowedHosts);
    if (problem) throw new Error(`the registry does not send requests there: ${problem}`);
    return guardedFetch(base, url, init);
  };
}

/** `url` normalized (as the SDK's `new URL(path, base)` would spell it), without its fragment. */
function withoutFragment(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  parsed.hash = '';
  return parsed.href;
}
