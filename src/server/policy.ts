/**
 * The cross-origin policy of `serve()`: one check, applied to every endpoint (REST, SSE, A2A,
 * MCP, WebSocket upgrades; `/health` alone is exempt, it reads and changes nothing).
 *
 * Why: without a token, anything that can make a browser send a request to the server could
 * drive its swarms. A web page can send "simple" cross-site requests (a form POST, a
 * `text/plain` fetch) without a CORS preflight, open a cross-site WebSocket, and reach a
 * loopback server through a domain it re-points at 127.0.0.1 (DNS rebinding). So:
 *
 * - **Host.** On a loopback bind, the `Host` header must name a loopback host (`localhost`,
 *   `127.0.0.1`, `[::1]`, any port) or one of `allowedHosts`; a rebound domain is refused. On
 *   another bind the public name is unknown, so any `Host` passes unless `allowedHosts` is
 *   given (then those and the loopback names); the token is what protects such a server.
 * - **Origin.** A request with an `Origin` must come from the server's own origin (the
 *   `Origin`'s host and port equal the `Host` header, which passed the check above) or one of
 *   `allowedOrigins`; `Origin: null` (sandboxed frames, file pages) is foreign. Requests
 *   without an `Origin` (curl, SDK clients, servers) are not from a browser page and pass.
 * - **Media type.** A request that carries a body or declares a `Content-Type` must declare
 *   `application/json` (parameters such as `charset` allowed), else 415: every body the
 *   server takes is JSON, and a page can send no JSON cross-site without a preflight.
 *
 * Refusals are 403 (Host, Origin) and 415 (media type), decided from the headers alone before
 * anything is read or started.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../http/http.js';

/** Host names that always mean this machine. */
const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Options of {@link requestPolicy}: what `serve()` was bound to and what its user allows. */
export interface PolicyOptions {
  /** The address the server listens on; decides whether `Host` is checked by default. */
  bindHost: string;
  /** Further accepted `Host` names (a port in an entry is ignored). */
  allowedHosts?: readonly string[];
  /** Further accepted `Origin`s, e.g. `http://localhost:5173`. */
  allowedOrigins?: readonly string[];
}

/**
 * The policy's two checks: `check` for every request and WebSocket upgrade (Host, Origin),
 * `checkBody` for requests that may carry a body (media type).
 */
export interface RequestPolicy {
  check(req: IncomingMessage): void;
  checkBody(req: IncomingMessage): void;
}

/** Whether an address is a loopback one, so only this machine can connect to it. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || /^::ffff:127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Builds the policy of one server (see the module notes for the rules); throws on an
 * `allowedOrigins` entry that is not an origin.
 */
export function requestPolicy(options: PolicyOptions): RequestPolicy {
  // The bound address itself is this server's name too (e.g. a LAN address given to --host).
  const own = options.bindHost.includes(':') && !options.bindHost.startsWith('[') ? `[${options.bindHost}]` : options.bindHost;
  const hosts =
    options.allowedHosts || isLoopbackHost(options.bindHost)
      ? new Set([...LOOPBACK_NAMES, ...[own, ...(options.allowedHosts ?? [])].map((h) => nameOf(h) ?? h.toLowerCase())])
      : undefined;
  const origins = new Set(
    (options.allowedOrigins ?? []).map((o) => {
      // A malformed entry would silently match nothing: say so when the server starts.
      const origin = originOf(o);
      if (origin === undefined) throw new Error(`allowedOrigins: "${o}" is not an origin such as http://localhost:5173`);
      return origin;
    }),
  );

  return {
    check(req) {
      const host = req.headers.host;
      const hostParsed = host === undefined ? undefined : hostUrl(host);
      // A request without Host (HTTP/1.0) cannot come from a browser, so not from a rebound page.
      if (host !== undefined && hosts && !hosts.has(hostParsed?.hostname ?? '')) {
        throw new HttpError(403, `Forbidden Host header "${host}": not a name of this server (serve option allowedHosts)`);
      }
      const origin = req.headers.origin;
      if (origin === undefined) return;
      const parsed = originOf(origin);
      const sameOrigin = parsed !== undefined && hostParsed !== undefined && new URL(parsed).host === hostParsed.host;
      if (!sameOrigin && !(parsed !== undefined && origins.has(parsed))) {
        throw new HttpError(403, `Forbidden Origin "${origin}": not this server's origin (serve option allowedOrigins)`);
      }
    },
    checkBody(req) {
      const type = req.headers['content-type'];
      const length = req.headers['content-length'];
      const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
      if (type === undefined && !hasBody) return;
      if ((type ?? '').split(';')[0]!.trim().toLowerCase() !== 'application/json') {
        throw new HttpError(415, `Unsupported Media Type: the body must be application/json${type ? `, not ${type}` : ''}`);
      }
    },
  };
}

/** A Host header (or allow-list entry) as a URL: host name lower-cased, default port dropped. */
function hostUrl(header: string): URL | undefined {
  try {
    const url = new URL(`http://${header}`);
    // Anything beyond host[:port] (a path, credentials) makes it no Host value at all.
    return url.username || url.password || url.pathname !== '/' || url.search || url.hash ? undefined : url;
  } catch {
    return undefined;
  }
}

/** The host name of a Host header, without the port (`[::1]` keeps its brackets). */
function nameOf(header: string): string | undefined {
  return hostUrl(header)?.hostname;
}

/** The serialized origin of an `Origin` value or allow-list entry; undefined if it is none (`null`). */
function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}
