/**
 * Reading and validating an A2A agent card for the registry.
 *
 * The card is fetched raw (with `A2A-Version: 1.0`, as our A2A client asks) and checked
 * against the fields the spec requires, v1.0 and v0.3 alike. The SDK's card resolver cannot
 * do this: it decodes into ts-proto objects that fill every missing field with a default, so
 * a card without skills or version would pass unnoticed and never be selected.
 *
 * @module
 */
import { z } from 'zod';
import type { A2ARemoteOptions } from '../a2a/client.js';
import { errorText } from '../../machines/error-text.js';
import { TeamError } from '../errors.js';

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

/** How the registry reaches agents: the same `fetch` and `headers` options as our A2A client. */
export interface CardFetchOptions {
  fetch?: typeof fetch;
  headers?: A2ARemoteOptions['headers'];
  signal?: AbortSignal;
}

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
});

/** Whether a card (read as JSON) lists no interface: neither v1.0 `supportedInterfaces` nor v0.3 `url`. */
function lacksInterface(json: unknown): boolean {
  if (typeof json !== 'object' || json === null) return false; // reported as a whole already
  const card = json as { supportedInterfaces?: unknown; url?: unknown };
  return !(Array.isArray(card.supportedInterfaces) && card.supportedInterfaces.length > 0) && card.url === undefined;
}

/**
 * Validates a card's JSON. Throws a `TeamError('invalid-card')` that names the card's URL and
 * every field that is missing or wrong, e.g. `"version" is missing; "skills[0].tags": expected array`.
 */
export function validateAgentCard(cardUrl: string, json: unknown): CheckedCard {
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
  return {
    name: card.name,
    description: card.description,
    version: card.version,
    skills: card.skills.map((s) => ({ id: s.id, name: s.name, description: s.description, tags: [...s.tags] })),
    endpoint: endpointOf(card),
  };
}

/**
 * The interface to ping: JSON-RPC first (v1.0 before v0.3, the order our client prefers), then
 * HTTP+JSON, then whatever is listed first.
 */
function endpointOf(card: z.output<typeof CARD>): AgentEndpoint {
  const listed: AgentEndpoint[] = (card.supportedInterfaces ?? []).map((i) => ({ url: i.url, binding: i.protocolBinding, protocolVersion: i.protocolVersion }));
  if (card.url) listed.push({ url: card.url, binding: card.preferredTransport || 'JSONRPC', protocolVersion: card.protocolVersion || '0.3' });
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
 * Fetches the card at `cardUrl` and validates it. Throws `TeamError('card-unreachable')` when
 * it cannot be read (network, HTTP status, not JSON) and `TeamError('invalid-card')` when it
 * lacks required fields.
 */
export async function fetchAgentCard(cardUrl: string, options: CardFetchOptions = {}): Promise<CheckedCard> {
  const doFetch = options.fetch ?? fetch;
  let json: unknown;
  try {
    const res = await doFetch(cardUrl, {
      headers: requestHeaders(cardUrl, options, { 'A2A-Version': '1.0', accept: 'application/json' }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
    const body = await res.text();
    try {
      json = JSON.parse(body);
    } catch {
      throw new Error(`not JSON: ${body.slice(0, 100)}`);
    }
  } catch (e) {
    throw new TeamError(`The agent card at ${cardUrl} could not be read: ${reasonOf(e)}`, 'card-unreachable');
  }
  return validateAgentCard(cardUrl, json);
}

/** A readable reason: fetch failures carry the interesting part in `cause`. */
export function reasonOf(e: unknown): string {
  if (!(e instanceof Error)) return errorText(e);
  const cause = (e as Error & { cause?: unknown }).cause;
  const detail = cause instanceof Error ? cause.message : typeof cause === 'object' && cause && 'code' in cause ? String(cause.code) : '';
  return detail && !e.message.includes(detail) ? `${e.message} (${detail})` : e.message;
}
