/**
 * Health checks of remote agents: the card is reachable and valid, and the agent answers.
 *
 * "Answers" means the agent's endpoint speaks its protocol: a JSON-RPC interface is asked for
 * a task that does not exist (`GetTask` in v1.0, `tasks/get` in v0.3) and must reply with a
 * JSON-RPC response, typically the error "task not found". That costs the agent nothing (no
 * model call, no task) yet proves more than an open port: a proxy's error page, a 401 or a
 * crashed handler all fail it. An HTTP+JSON interface is asked `GET <url>/tasks/<probe>` and
 * must reply with JSON. An agent offering only bindings the registry does not speak (gRPC) cannot
 * be checked, so it is unhealthy: counting it healthy would send it tasks nobody can deliver.
 *
 * Pings are bounded like card fetches (`src/a2a/bounded-fetch.ts`): one deadline for the exchange, the
 * answer read up to `maxCardBytes`, redirects only within the endpoint's origin.
 *
 * @module
 */
import { boundedFetch, cardBounds } from '../a2a/bounded-fetch.js';
import { type AgentEndpoint, type CardFetchOptions, type CheckedCard, fetchAgentCard, reasonOf, requestHeaders, SPOKEN_BINDINGS } from './card-check.js';

/** The task id the probe asks for; no agent has it. */
const PROBE_TASK_ID = 'xswarm-registry-health-probe';

/** The outcome of one health check: the card when it was read, the reason when unhealthy. */
export type HealthResult = { healthy: true; card: CheckedCard } | { healthy: false; card?: CheckedCard; error: string };

/**
 * Whether `endpoint` answers in its protocol (see the module doc). Resolves with undefined
 * when it does, else with the reason; never rejects.
 */
export async function pingAgent(endpoint: AgentEndpoint, options: CardFetchOptions = {}): Promise<string | undefined> {
  if (!SPOKEN_BINDINGS.includes(endpoint.binding)) {
    return `The agent offers no interface the registry speaks (${SPOKEN_BINDINGS.join(', ')}), only ${endpoint.binding} at ${endpoint.url}: it cannot be checked, so it is not healthy`;
  }
  const protocol = URL.canParse(endpoint.url) ? new URL(endpoint.url).protocol : undefined;
  if (protocol !== 'http:' && protocol !== 'https:') return `${endpoint.url} is not an http: or https: URL: the registry does not go there`;
  // Looked up per call, so a fetch installed later (a test double, a proxy agent) is used.
  const base: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const bounds = cardBounds(options, 'its answer');
  const doFetch = (url: string, init: RequestInit) => boundedFetch(base, url, { ...init, ...(options.signal ? { signal: options.signal } : {}) }, bounds);
  try {
    if (endpoint.binding === 'JSONRPC') {
      const v03 = endpoint.protocolVersion.startsWith('0.');
      const res = await doFetch(endpoint.url, {
        method: 'POST',
        headers: requestHeaders(endpoint.url, options, {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(v03 ? {} : { 'A2A-Version': '1.0' }),
        }),
        body: JSON.stringify({ jsonrpc: '2.0', id: PROBE_TASK_ID, method: v03 ? 'tasks/get' : 'GetTask', params: { id: PROBE_TASK_ID } }),
      });
      const body = await res.text();
      let reply: unknown;
      try {
        reply = JSON.parse(body);
      } catch {
        return `${endpoint.url} answered HTTP ${res.status} without JSON-RPC: ${body.slice(0, 100)}`;
      }
      const r = reply as { jsonrpc?: unknown; result?: unknown; error?: unknown };
      if (r?.jsonrpc === '2.0' && (r.result !== undefined || r.error !== undefined)) return undefined;
      return `${endpoint.url} answered HTTP ${res.status} without a JSON-RPC response: ${body.slice(0, 100)}`;
    }
    // HTTP+JSON, the other binding spoken.
    const url = `${endpoint.url.replace(/\/$/, '')}/tasks/${PROBE_TASK_ID}`;
    const res = await doFetch(url, { headers: requestHeaders(url, options, { 'A2A-Version': '1.0', accept: 'application/json' }) });
    const body = await res.text();
    try {
      JSON.parse(body);
      return res.status === 401 || res.status === 403 ? `${url} refused the registry: HTTP ${res.status}` : undefined;
    } catch {
      return `${url} answered HTTP ${res.status} without JSON: ${body.slice(0, 100)}`;
    }
  } catch (e) {
    return `${endpoint.url} did not answer: ${reasonOf(e)}`;
  }
}

/**
 * One health check of the agent whose card is at `cardUrl`: reads and validates the card, then
 * pings the interface it names. Never rejects.
 */
export async function checkAgentHealth(cardUrl: string, options: CardFetchOptions = {}): Promise<HealthResult> {
  let card: CheckedCard;
  try {
    card = await fetchAgentCard(cardUrl, options);
  } catch (e) {
    return { healthy: false, error: reasonOf(e) };
  }
  const problem = await pingAgent(card.endpoint, options);
  return problem === undefined ? { healthy: true, card } : { healthy: false, card, error: problem };
}
