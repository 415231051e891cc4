/**
 * Reading and validating an A2A agent card for the registry.
 *
 * The card is fetched raw (with `A2A-Version: 1.0`, as our A2A client asks) and checked
 * against the fields the spec requires, v1.0 and v0.3 alike. The SDK's card resolver cannot
 * do this: it decodes into ts-proto objects that fill every missing field with a default, so
 * a card without skills or version would pass unnoticed and never be selected.
 *
 * The fetch is bounded (`src/a2a/bounded-fetch.ts`, shared with the A2A client): one deadline
 * for headers and body, a byte limit on the body, redirects only within the card's origin. A
 * card whose interfaces point where the registry may not go (`src/a2a/endpoint-policy.ts`) is
 * refused like an invalid one.
 *
 * @module
 */
import { z } from 'zod';
import type { A2ARemoteOptions } from '../a2a/client.js';
import { errorText } from '../../machines/error-text.js';
import { TeamError } from '../errors.js';
import { boundedFetch, cardBounds, FetchLimitError } from '../a2a/bounded-fetch.js';
import { type AllowedHosts, refusedInterfaces } from '../a2a/endpoint-policy.js';

/** A skill as the registry matches it (the card's own fields). */
export interface RegistrySkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
}

/** Where and how an agent answers: the interface the registry pings. */
export interface AgentEndpoint {
  url: string;
  /** `JSONRPC`, `HTTP+JSON`, `GRPC` or a URI, as the card says. */
  binding: string;
  /** The protocol version of that interface (`1.0`, `0.3`, …). */
  protocolVersion: string;
}

/** What the registry keeps of a valid card. Plain JSON. */
export interface CheckedCard {
  name: string;
  description: string;
  version: string;
  skills: RegistrySkill[];
  endpoint: AgentEndpoint;
}

/** Where a card's interfaces may point (see `AgentRegistryOptions.allowedHosts`). */
export interface CardPolicyOptions {
  /** Hosts besides the card's own origin (default none: see `src/a2a/endpoint-policy.ts`). */
  allowedHosts?: AllowedHosts;
}

/**
 * How the registry reaches agents: the same `fetch` and `headers` options as our A2A client,
 * the bounds of each request, and where a card's interfaces may point.
 */
export interface CardFetchOptions extends CardPolicyOptions {
  fetch?: typeof fetch;
  headers?: A2ARemoteOptions['headers'];
  /** Aborts the request too (the registry's close()). */
  signal?: AbortSignal;
  /** The deadline of one request, headers and body together (default 5000 ms). */
  timeoutMs?: number;
  /** The largest card (or health-check answer) read, in bytes (default 1 MiB); a larger one is refused without reading further. */
  maxCardBytes?: number;
}

/** The bindings the registry speaks: it can health-check them, and our A2A client can call them. */
export const SPOKEN_BINDINGS: readonly string[] = ['JSONRPC', 'HTTP+JSON'];

const text = z.string().min(1, 'must not be empty');

const SKILL = z.object({ id: text, name: text, description: z.string(), tags: z.array(z.string()) });

const INTERFACE = z.object({ url: z.url(), protocolBinding: text, protocolVersion: text });

/** The required fields of a v1.0 card, plus the v0.3 ones that replace `supportedInterfaces`. */
const CARD = z.object({
  name: text,
  description: z.string(),
  version: text,
  capabilities: z.object({}).loose(),
  defaultInputModes: z.array(z.string()),
  defaultOutputModes: z.array(z.string()),
  skills: z.array(SKILL),
  supportedInterfaces: z.array(INTERFACE).optional(),
  // v0.3: the main interface is top-level.
  url: z.url().optional(),
  preferredTransport: z.string().optional(),
  protocolVersion: z.string().optional(),
  // v0.3: further interfaces. Not required, but our client may call them, so they are checked
  // against where the registry may go.
  additionalInterfaces: z.array(z.object({ url: z.string(), transport: z.string() }).loose()).optional(),
});

/** Whether a card (read as JSON) lists no interface: neither v1.0 `supportedInterfaces` nor v0.3 `url`. */
function lacksInterface(json: unknown): boolean {
  if (typeof json !== 'object' || json === null) return false; // reported as a whole already
  const card = json as { supportedInterfaces?: unknown; url?: unknown };
  return !(Array.isArray(card.supportedInterfaces) && card.supportedInterfaces.length > 0) && card.url === undefined;
}

/**
 * Validates a card's JSON. Throws a `TeamError('invalid-card')` that names the card's URL and
 * every field that is missing or wrong, e.g. `"version" is missing; "skills[0].tags": expected array`;
 * or, for a card whose interfaces point where the registry may not send requests (not http(s),
 * or off the card's origin and not in `options.allowedHosts`: see `src/a2a/endpoint-policy.ts`), one
 * that says it is refused and names each such interface. Only interfaces of the bindings the
 * registry speaks ({@link SPOKEN_BINDINGS}) are checked: no other is ever contacted.
 */
export function validateAgentCard(cardUrl: string, json: unknown, options: CardPolicyOptions = {}): CheckedCard {
  const parsed = CARD.safeParse(json);
  const problems = (parsed.success ? [] : parsed.error.issues).map((issue) => {
    const path = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
    const where = path ? `"${path}"` : 'the card';
    if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${where} is missing`;
    return `${where}: ${issue.message.replace(/^Invalid input: /, '')}`;
  });
  if (lacksInterface(json)) problems.push('"supportedInterfaces" is missing (and there is no v0.3 "url")');
  if (!parsed.success || problems.length > 0) {
    throw new TeamError(`The agent card at ${cardUrl} is invalid: ${problems.join('; ')}`, 'invalid-card');
  }
  const card = parsed.data;
  const interfaces = interfacesOf(card);
  // Every interface the registry or its client may contact, whichever the client picks; those of
  // other bindings (gRPC) are never contacted, and a card may well list them on other hosts.
  const refused = refusedInterfaces(
    cardUrl,
    interfaces.filter((x) => SPOKEN_BINDINGS.includes(x.binding)),
    options.allowedHosts,
  );
  if (refused.length > 0) throw new TeamError(`The agent card at ${cardUrl} is refused: ${refused.join('; ')}`, 'invalid-card');
  return {
    name: card.name,
    description: card.description,
    version: card.version,
    skills: card.skills.map((s) => ({ id: s.id, name: s.name, description: s.description, tags: [...s.tags] })),
    endpoint: endpointOf(interfaces),
  };
}

/** Every interface a card lists: v1.0 `supportedInterfaces`, then v0.3 `url` and `additionalInterfaces`. */
function interfacesOf(card: z.output<typeof CARD>): AgentEndpoint[] {
  const listed: AgentEndpoint[] = (card.supportedInterfaces ?? []).map((i) => ({ url: i.url, binding: i.protocolBinding, protocolVersion: i.protocolVersion }));
  const v03 = card.protocolVersion || '0.3';
  if (card.url) listed.push({ url: card.url, binding: card.preferredTransport || 'JSONRPC', protocolVersion: v03 });
  for (const i of card.additionalInterfaces ?? []) listed.push({ url: i.url, binding: i.transport, protocolVersion: v03 });
  return listed;
}

/**
 * The interface to ping: JSON-RPC first (v1.0 before v0.3, the order our client prefers), then
 * HTTP+JSON, then whatever is listed first (a binding the registry does not speak, which makes
 * the agent unhealthy: see `pingAgent`).
 */
function endpointOf(listed: readonly AgentEndpoint[]): AgentEndpoint {
  const rank = (e: AgentEndpoint) => (e.binding === 'JSONRPC' ? (e.protocolVersion.startsWith('0.') ? 1 : 0) : e.binding === 'HTTP+JSON' ? 2 : 3);
  return [...listed].sort((a, b) => rank(a) - rank(b))[0]!;
}

/** Our headers for `url` (the caller's, then ours where the caller set none). */
export function requestHeaders(url: string, options: CardFetchOptions, own: Record<string, string>): Headers {
  const extra = typeof options.headers === 'function' ? options.headers(url) : options.headers;
  const headers = new Headers(extra ?? {});
  for (const [k, v] of Object.entries(own)) if (!headers.has(k)) headers.set(k, v);
  return headers;
}

/**
 * Fetches the card at `cardUrl` and validates it ({@link validateAgentCard}, with
 * `options.allowedHosts`). The exchange is bounded: `options.timeoutMs` for headers and body
 * together, `options.maxCardBytes` for the body, redirects followed only within the card's
 * origin (at most 5). Throws `TeamError('card-unreachable')` when the card cannot be read
 * (network, HTTP status, not JSON, not an http(s) URL, the deadline, a redirect elsewhere) and
 * `TeamError('invalid-card')` when it is too large, lacks required fields, or points where the
 * registry may not go.
 */
export async function fetchAgentCard(cardUrl: string, options: CardFetchOptions = {}): Promise<CheckedCard> {
  // Looked up per call, so a fetch installed later (a test double, a proxy agent) is used.
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  let json: unknown;
  try {
    const protocol = URL.canParse(cardUrl) ? new URL(cardUrl).protocol : undefined;
    if (protocol !== 'http:' && protocol !== 'https:') throw new Error('only http: and https: card URLs are read');
    const res = await boundedFetch(
      doFetch,
      cardUrl,
      { headers: requestHeaders(cardUrl, options, { 'A2A-Version': '1.0', accept: 'application/json' }), ...(options.signal ? { signal: options.signal } : {}) },
      cardBounds(options, `The agent card at ${cardUrl}`),
    );
    if (!res.ok) {
      void res.body?.cancel().catch(() => undefined);
      throw new Error(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
    }
    const body = await res.text();
    try {
      json = JSON.parse(body);
    } catch {
      throw new Error(`not JSON: ${body.slice(0, 100)}`);
    }
  } catch (e) {
    if (e instanceof FetchLimitError && e.limit === 'size') throw new TeamError(e.message, 'invalid-card');
    throw new TeamError(`The agent card at ${cardUrl} could not be read: ${reasonOf(e)}`, 'card-unreachable');
  }
  return validateAgentCard(cardUrl, json, options);
}

/** A readable reason: fetch failures carry the interesting part in `cause`. */
export function reasonOf(e: unknown): string {
  if (!(e instanceof Error)) return errorText(e);
  const cause = (e as Error & { cause?: unknown }).cause;
  const detail = cause instanceof Error ? cause.message : typeof cause === 'object' && cause && 'code' in cause ? String(cause.code) : '';
  return detail && !e.message.includes(detail) ? `${e.message} (${detail})` : e.message;
}
