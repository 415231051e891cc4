/**
 * Where an agent card may send whoever follows it: the agent registry (`src/registry/`), and
 * the A2A client of remote handoffs (`./client.ts`). A card names its own service URLs (A2A
 * `supportedInterfaces`, v0.3 `url` and `additionalInterfaces`), and health checks and calls go
 * there; left unchecked, whoever serves a card chooses where requests go, with their headers
 * (an `authorization` meant for the agent), `file:` URLs included. The rule:
 *
 * 1. only `http:` and `https:` URLs, always;
 * 2. on the card's own origin: the scheme, host and port of the card URL. The loopback names
 *    (`localhost`, `127.0.0.0/8`, `[::1]`) count as one host there, same scheme and port still
 *    required: a local agent often names itself `localhost` while registered as `127.0.0.1`;
 * 3. or on a host the operator allows ({@link AllowedHosts}: the `allowedHosts` option of the
 *    registry and of the A2A client).
 *
 * @module
 */

/**
 * Hosts a card may point health checks and calls at besides its own origin (default: none). Each entry is
 * `host` (any port, http or https), `host:port` (that port only; the default port of the
 * scheme when a URL has none), an IPv6 address in brackets (`[::1]`, `[::1]:8080`), or `*`
 * for any host (the scheme rule still holds). Host names compare case-insensitively and
 * exactly: `example.com` does not allow `api.example.com`.
 */
export type AllowedHosts = readonly string[];

interface HostEntry {
  /** Undefined for `*`. */
  hostname?: string;
  /** Undefined: any port. */
  port?: string;
}

const ENTRY = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~%-]+)(?::(\d{1,5}))?$/;

/** Checks `allowedHosts` (see {@link AllowedHosts}); throws a `TypeError` naming the first entry that is none of the accepted forms. */
export function checkAllowedHosts(entries: AllowedHosts, where = 'allowedHosts'): void {
  parseAllowedHosts(entries, where);
}

function parseAllowedHosts(entries: AllowedHosts, where = 'allowedHosts'): HostEntry[] {
  return entries.map((entry) => {
    if (entry === '*') return {};
    const match = ENTRY.exec(entry);
    const hostname = match ? hostnameOf(match[1]!) : undefined;
    if (!match || hostname === undefined) throw new TypeError(`${where} entry ${JSON.stringify(entry)} is not a host, host:port or "*"`);
    return match[2] === undefined ? { hostname } : { hostname, port: String(Number(match[2])) };
  });
}

/** The host as URLs spell it (lowercase, IPv4 normalized, IPv6 in brackets), or undefined. */
function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Why no request may go to `url`, named by the card at `cardUrl` (see the module doc), or
 * undefined when it may. The reason starts with the URL.
 */
export function endpointProblem(cardUrl: string, url: string, allowedHosts: AllowedHosts = []): string | undefined {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return `${url} is not a URL`;
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return `${url} is not an http: or https: URL`;
  const card = new URL(cardUrl);
  if (sameOrigin(card, target)) return undefined;
  const port = portOf(target);
  const allowed = parseAllowedHosts(allowedHosts).some((e) => e.hostname === undefined || (e.hostname === target.hostname && (e.port === undefined || e.port === port)));
  return allowed ? undefined : `${url} is on another origin than the card (${card.origin}) and not in allowedHosts`;
}

/**
 * Whether `url`'s host (and port) is one of `allowedHosts` (see {@link AllowedHosts}); the
 * scheme is not looked at. The push-notification policy of the server shares it.
 */
export function hostAllowed(url: URL, allowedHosts: AllowedHosts): boolean {
  const port = portOf(url);
  return parseAllowedHosts(allowedHosts).some((e) => e.hostname === undefined || (e.hostname === url.hostname && (e.port === undefined || e.port === port)));
}

/**
 * The refusals of a card's interfaces that break the rule, one per interface (duplicates
 * once), each `its <binding> interface <reason>`; empty when every one may be contacted. The
 * caller passes the interfaces it may contact: those of bindings nobody speaks are never
 * contacted, and a card may well list them elsewhere.
 */
export function refusedInterfaces(cardUrl: string, interfaces: readonly { url: string; binding: string }[], allowedHosts: AllowedHosts = []): string[] {
  const refused = new Set<string>();
  for (const i of interfaces) {
    const problem = endpointProblem(cardUrl, i.url, allowedHosts);
    if (problem) refused.add(`its ${i.binding} interface ${problem}`);
  }
  return [...refused];
}

function sameOrigin(a: URL, b: URL): boolean {
  if (a.origin === b.origin) return true;
  return a.protocol === b.protocol && portOf(a) === portOf(b) && isLoopback(a.hostname) && isLoopback(b.hostname);
}

function portOf(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}
