/**
 * HTTP plumbing shared by every endpoint of `serve()`: body limits, JSON, errors, auth.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorText } from '../../machines/error-text.js';
import { SwarmError, type SwarmErrorCode } from '../errors.js';
import type { Runtime } from '../runtime/types.js';
import { TeamError, type TeamErrorCode } from '../errors.js';

/** Default largest request body: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** An error with an HTTP status; handlers throw it and the server answers with it. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What every handler gets. */
export interface ServerContext {
  runtime: Runtime;
  /** When set, every endpoint except agent cards requires `Authorization: Bearer <token>`. */
  token?: string;
  maxBodyBytes: number;
  /** The server's base URL (known once listening), e.g. `http://127.0.0.1:4000`. */
  baseUrl(): string;
}

/**
 * One protocol's endpoints. `handle` answers the request and returns true, or returns false
 * when the path is not its own.
 */
export interface HttpHandler {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
  /** WebSocket upgrades on its paths; returns false when the path is not its own. */
  upgrade?(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): boolean;
  close?(): Promise<void>;
}

/**
 * Reads a request body, refusing more than `limit` bytes (413) without buffering the excess.
 * A refused body is left unread, not drained: the server answers 413 with `Connection: close`
 * and closes the connection, so a client cannot make it read a body of any size.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new HttpError(413, `Request body larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  // Stopping early must not destroy the request: that would tear down the socket before the
  // 413 is written. Unread, the rest stays in the kernel until the server closes the socket.
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `Request body larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Reads a JSON body: 413 when too large, 400 when not JSON. An empty body reads as `{}`. */
export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const raw = (await readBody(req, limit)).toString('utf8');
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw new HttpError(400, `Malformed JSON body: ${errorText(e)}`);
  }
}

/** Sends a JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Whether a request carries the bearer token (always true without a token). The scheme is
 * case-insensitive (RFC 9110 §11.1); the token is compared in constant time, as SHA-256
 * digests of equal length, so neither its content nor its length leaks through timing.
 */
export function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return true;
  const presented = /^bearer +(.*)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(token));
}

/** The WebSocket subprotocol of `serve()`'s sockets: what the server answers an upgrade with. */
export const WS_PROTOCOL = 'xswarm';

/**
 * The prefix of the subprotocol that carries the bearer token on a WebSocket upgrade:
 * `xswarm.bearer.<base64url(token)>`. A browser cannot set headers on a WebSocket, but it sends
 * its subprotocol list (`new WebSocket(url, ['xswarm', 'xswarm.bearer.' + b64url])`).
 */
export const WS_BEARER_PREFIX = 'xswarm.bearer.';

/** The subprotocols a WebSocket upgrade offers (`Sec-WebSocket-Protocol`, comma-separated). */
export function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  if (header === undefined) return [];
  return header
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/**
 * Whether a WebSocket upgrade carries the bearer token: in the `Authorization` header, as every
 * request may, or as the subprotocol `xswarm.bearer.<base64url(token)>` (how a browser page
 * passes it). Compared in constant time like {@link authorized}.
 */
export function upgradeAuthorized(req: IncomingMessage, token: string | undefined): boolean {
  if (authorized(req, token)) return true;
  const offered = offeredProtocols(req).find((p) => p.startsWith(WS_BEARER_PREFIX));
  if (offered === undefined) return false;
  const presented = Buffer.from(offered.slice(WS_BEARER_PREFIX.length), 'base64url').toString('utf8');
  return timingSafeEqual(digest(presented), digest(token!));
}

/**
 * The subprotocol a WebSocket server answers with (`ws`'s `handleProtocols`): `xswarm` when
 * the client offers it, else none. Never the bearer one: echoing it would send the token back.
 */
export function chooseProtocol(protocols: Set<string>): string | false {
  return protocols.has(WS_PROTOCOL) ? WS_PROTOCOL : false;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The HTTP status of each kind of runtime error. */
const STATUS_OF: Record<SwarmErrorCode, number> = {
  'unknown-definition': 404,
  'unknown-swarm': 404,
  'invalid-input': 400,
  'invalid-id': 400,
  'invalid-cursor': 400,
  'id-in-use': 409,
  // A command that does not fit the swarm's state, or a swarm another runtime drives.
  'wrong-state': 409,
  'not-live': 409,
  closed: 503,
  store: 500,
  // Stored data that cannot be read: the server's fault, named in the message.
  corrupt: 500,
  'incompatible-version': 500,
  // NATS is down: nothing was applied, the client may retry.
  unavailable: 503,
  // Draining (SIGTERM): this server takes no new work; another one on the same store does.
  draining: 503,
};

/**
 * The HTTP status of each kind of team error (team endpoints): a request the board or the
 * limits refuse is the client's (400 when it can never pass: an invalid task, a cycle, an
 * unknown dependency; 409 when it conflicts with what exists now: a limit such as
 * `maxTasksPerBoard` or `maxTeams`, a duplicate task, a command that does not fit the team's
 * state, a team another runtime drives); unknown things are 404; a stored team that cannot be
 * read is the server's fault (500); a registry agent that cannot be reached is a 502/503.
 */
const TEAM_STATUS_OF: Record<TeamErrorCode, number> = {
  'invalid-limit': 400,
  limit: 409,
  cycle: 400,
  'unknown-dependency': 400,
  'not-claimable': 409,
  'not-owner': 409,
  'stale-attempt': 409,
  'wrong-state': 409,
  'invalid-snapshot': 500,
  'invalid-message': 400,
  'not-a-member': 404,
  'duplicate-member': 409,
  'invalid-card': 400,
  'card-unreachable': 502,
  'duplicate-agent': 409,
  'unknown-agent': 404,
  'no-agent': 503,
  'agent-failed': 502,
  'duplicate-task': 409,
  'unknown-task': 404,
  'invalid-task': 400,
  'registry-closed': 503,
  'registry-in-use': 409,
  'unknown-team': 404,
  'team-in-use': 409,
  'wrong-team-state': 409,
};

/**
 * Maps a runtime `SwarmError` or a `TeamError` to an HttpError with its message (the one error
 * mapping of every endpoint); anything else stays a 500.
 */
export function asHttpError(err: unknown): unknown {
  if (err instanceof SwarmError) return new HttpError(STATUS_OF[err.code], err.message);
  if (err instanceof TeamError) return new HttpError(TEAM_STATUS_OF[err.code], err.message);
  return err;
}

/**
 * The decoded segments of a path under `prefix` (`/swarms`, `/teams`): false when the path is
 * not under it (another handler's), undefined when a segment is empty (no route has one).
 */
export function pathSegments(pathname: string, prefix: string): string[] | false | undefined {
  if (pathname !== prefix && !pathname.startsWith(`${prefix}/`)) return false;
  const raw = pathname.slice(prefix.length).replace(/^\/|\/$/g, '');
  const parts = raw === '' ? [] : raw.split('/').map(decodeSegment);
  return parts.some((p) => p === '') ? undefined : parts;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `Malformed URL segment "${segment}"`);
  }
}

/**
 * Refuses a method the route does not take: 405 with `Allow`, checked before anything else so
 * the answer does not depend on whether the resource exists.
 */
export function requireMethod(req: IncomingMessage, res: ServerResponse, pathname: string, allowed: readonly string[]): void {
  if (allowed.includes(req.method ?? '')) return;
  res.setHeader('allow', allowed.join(', '));
  throw new HttpError(405, `${req.method} is not allowed on ${pathname}; use ${allowed.join(' or ')}`);
}

/** A JSON body that must be an object (`{}` for an empty body); `shape` names it in the 400. */
export function objectBody(body: unknown, shape: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, `The body must be a JSON object ${shape}`);
  return body as Record<string, unknown>;
}

/** An optional string field of a body (null reads as absent); any other type is a 400. */
export function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new HttpError(400, `\`${key}\` must be a string`);
  return value;
}
