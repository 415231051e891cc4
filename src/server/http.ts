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
};

/** Maps a runtime `SwarmError` to an HttpError with its message; anything else stays a 500. */
export function asHttpError(err: unknown): unknown {
  if (err instanceof HttpError || !(err instanceof SwarmError)) return err;
  return new HttpError(STATUS_OF[err.code], err.message);
}
