/**
 * The REST endpoints of `serve()`: start swarms, read their results, command them, and follow
 * their events as Server-Sent Events.
 *
 * | Method and path                              | Body                     | Success                              |
 * | -------------------------------------------- | ------------------------ | ------------------------------------ |
 * | `GET /swarms`                                |                          | 200 `SwarmCard[]`                    |
 * | `GET /swarms/:definitionId`                  | `?status=a,b&limit=n&usage=1` | 200 `SwarmSummary[]`, newest first |
 * | `POST /swarms/:definitionId`                 | `{ input, swarmId? }`    | 201 `{ swarmId }` + `Location`       |
 * | `GET /swarms/:definitionId/:swarmId`         | `?usage=1`               | 200 `SwarmResult`                    |
 * | `POST /swarms/:definitionId/:swarmId/pause`  | `{ reason?, type? }`     | 200 `{ ok: true, result }`           |
 * | `POST /swarms/:definitionId/:swarmId/resume` | `{ message? \| answer?, pauseId? }` | 200 `{ ok: true, result }` |
 * | `POST /swarms/:definitionId/:swarmId/stop`   | `{ reason? }`            | 200 `{ ok: true, result }`           |
 * | `POST /swarms/:definitionId/:swarmId/extend` | `{ maxTurns?, budget? }` | 200 `{ ok: true, result }`           |
 * | `POST /swarms/:definitionId/:swarmId/approve` | `{ approvalId, always? }` | 200 `{ ok: true, result }`          |
 * | `POST /swarms/:definitionId/:swarmId/reject` | `{ approvalId, reason }` | 200 `{ ok: true, result }`           |
 * | `GET /swarms/:definitionId/:swarmId/events`  | `?since=n`, Last-Event-ID | 200 `text/event-stream`             |
 * | `POST /swarms/:definitionId/:swarmId/fork`   | `{ atSeq \| atTurn, newId?, instructions?, dryRun? }` | 201 `{ swarmId, plan }` (see `fork-route.ts`) |
 *
 * Errors are JSON `{ error }`: 400 malformed JSON, a body that is not an object, a field of the
 * wrong type, invalid input (the runtime's message; a resume's answer that does not match its
 * pause's response schema), an invalid swarm id (in the body or the
 * path), a bad cursor or one beyond the end of a swarm that has ended; 404 unknown definition,
 * unknown swarm, a swarm of another definition, an unknown sub-path; 405 (with `Allow`) a
 * method the path does not take (checked before anything else, so it does not depend on
 * whether the swarm exists); 409 swarm id in use, or a command that does not fit the swarm's
 * state (the runtime's message: a resume of a swarm that is not paused, or naming a stale `pauseId`); 413 body over the limit; 503 the runtime is closed.
 *
 * @module
 */
import { setMaxListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyCommand, commandShape, isSwarmCommand, type SwarmCommandName } from './swarm-commands.js';
import { forkRequest } from './fork-route.js';
import { assertCursor } from '../events/cursor.js';
import { isFinalEvent } from '../events/helpers.js';
import { SWARM_STATUSES, type SwarmStatus } from '../store/result.js';
import type { SwarmSummary } from '../store/types.js';
import { summaryOf } from '../store/summary.js';
import { MAX_DERIVED_SWARM_ID_LENGTH, swarmIdProblem } from '../define/swarm-id.js';
import {
  asHttpError,
  HttpError,
  type HttpHandler,
  objectBody,
  optionalString,
  pathSegments,
  readJson,
  requireMethod,
  sendJson,
  type ServerContext,
} from '../http/http.js';
import { DEFAULT_KEEPALIVE_MS, sseCursor, streamSse } from '../http/sse.js';

/** Options of {@link createRestHandler}. */
export interface RestOptions {
  /** Interval of the SSE keep-alive comments (`serve(runtime, { keepAliveMs })`), default 15 000 ms. */
  keepAliveMs?: number;
}

/** Default and largest page of `GET /swarms/:definitionId`. */
const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1000;

/** The routes, by path shape; each lists the methods it takes (for 405 and `Allow`). */
type Route =
  | { kind: 'definitions' }
  | { kind: 'definition'; definitionId: string }
  | { kind: 'swarm'; definitionId: string; swarmId: string }
  | { kind: 'events'; definitionId: string; swarmId: string }
  | { kind: 'command'; definitionId: string; swarmId: string; command: SwarmCommandName }
  | { kind: 'fork'; definitionId: string; swarmId: string };

const METHODS: Record<Route['kind'], readonly string[]> = {
  definitions: ['GET'],
  definition: ['GET', 'POST'],
  swarm: ['GET'],
  events: ['GET'],
  command: ['POST'],
  fork: ['POST'],
};

/** Creates the REST + SSE handler for the paths under `/swarms` (see the module table). */
export function createRestHandler(ctx: ServerContext, options: RestOptions = {}): HttpHandler {
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS;
  /** Aborted by `close()`: it ends every open SSE stream, so the server can shut down promptly. */
  const closing = new AbortController();
  // One listener per open stream: any number is expected, not a leak.
  setMaxListeners(0, closing.signal);
  const { runtime } = ctx;

  /**
   * The swarm's summary, or a 404 when the swarm does not exist under this definition: its
   * record without the snapshot (a swarm's conversations are not read to answer that).
   */
  async function findSwarm(definitionId: string, swarmId: string): Promise<SwarmSummary> {
    const record = await summaryOf(runtime.store, swarmId);
    // A swarm of another definition is "not found" here: the URL names a resource that does not exist.
    if (!record || record.definitionId !== definitionId) {
      throw new HttpError(404, `Unknown swarm "${swarmId}" of swarm definition "${definitionId}"`);
    }
    return record;
  }

  function requireDefinition(definitionId: string): void {
    if (!runtime.definition(definitionId)) throw new HttpError(404, `Unknown swarm definition "${definitionId}"`);
  }

  async function run(req: IncomingMessage, res: ServerResponse, definitionId: string): Promise<void> {
    requireDefinition(definitionId);
    const body = objectBody(await readJson(req, ctx.maxBodyBytes), '{ input, swarmId? }');
    const swarmId = optionalString(body, 'swarmId');
    const client = swarmId === undefined ? runtime.forSwarm(definitionId) : runtime.forSwarm(definitionId, swarmId);
    try {
      await client.run(body.input);
    } catch (err) {
      throw asHttpError(err);
    }
    res.setHeader('location', `/swarms/${encodeURIComponent(definitionId)}/${encodeURIComponent(client.swarmId)}`);
    sendJson(res, 201, { swarmId: client.swarmId });
  }

  async function list(res: ServerResponse, definitionId: string, url: URL): Promise<void> {
    requireDefinition(definitionId);
    const status = url.searchParams.get('status');
    const statuses = status ? status.split(',').map((s) => s.trim()) : undefined;
    const unknown = statuses?.find((s) => !SWARM_STATUSES.includes(s as SwarmStatus));
    if (unknown !== undefined) throw new HttpError(400, `Unknown status "${unknown}"; one of ${SWARM_STATUSES.join(', ')}`);
    const limitParam = url.searchParams.get('limit');
    const limit = limitParam === null ? DEFAULT_LIST_LIMIT : Number(limitParam);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      throw new HttpError(400, `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`);
    }
    const summaries = await runtime.list({ definitionId, limit, ...(statuses ? { status: statuses as SwarmStatus[] } : {}) }, { usage: usageParam(url) });
    sendJson(res, 200, summaries);
  }

  async function command(req: IncomingMessage, res: ServerResponse, route: Extract<Route, { kind: 'command' }>): Promise<void> {
    await findSwarm(route.definitionId, route.swarmId);
    const body = objectBody(await readJson(req, ctx.maxBodyBytes), commandShape(route.command));
    const client = runtime.forSwarm(route.definitionId, route.swarmId);
    try {
      await applyCommand(client, route.command, body, 'HTTP');
    } catch (err) {
      throw asHttpError(err);
    }
    sendJson(res, 200, { ok: true, result: await client.getResult() });
  }

  async function events(req: IncomingMessage, res: ServerResponse, route: Extract<Route, { kind: 'events' }>, url: URL): Promise<void> {
    // Everything that can fail with a status code is checked before the 200 goes out.
    const since = sseCursor(req, url);
    const record = await findSwarm(route.definitionId, route.swarmId);
    try {
      assertCursor(record, since);
    } catch (err) {
      throw asHttpError(err);
    }
    const client = runtime.forSwarm(route.definitionId, route.swarmId);
    await streamSse(res, (signal) => client.events({ since, signal }), { keepAliveMs, signal: closing.signal, endAfter: isFinalEvent });
  }

  return {
    async handle(req, res, url) {
      const route = routeOf(url.pathname);
      if (route === false) return false;
      if (route === undefined) throw new HttpError(404, `No endpoint at ${url.pathname}`);
      requireMethod(req, res, url.pathname, METHODS[route.kind]);
      // A malformed id names no swarm that could exist: say so (400) rather than "unknown" (404).
      if ('swarmId' in route) {
        const problem = swarmIdProblem(route.swarmId, MAX_DERIVED_SWARM_ID_LENGTH);
        if (problem) throw new HttpError(400, `Invalid swarm id: ${problem}`);
      }
      switch (route.kind) {
        case 'definitions':
          sendJson(res, 200, runtime.definitions());
          break;
        case 'definition':
          await (req.method === 'POST' ? run(req, res, route.definitionId) : list(res, route.definitionId, url));
          break;
        case 'swarm': {
          await findSwarm(route.definitionId, route.swarmId);
          try {
            sendJson(res, 200, await runtime.forSwarm(route.definitionId, route.swarmId).getResult({ usage: usageParam(url) }));
          } catch (err) {
            throw asHttpError(err);
          }
          break;
        }
        case 'command':
          await command(req, res, route);
          break;
        case 'events':
          await events(req, res, route, url);
          break;
        case 'fork':
          await findSwarm(route.definitionId, route.swarmId);
          await forkRequest(ctx, req, res, route.definitionId, route.swarmId);
          break;
      }
      return true;
    },
    async close() {
      closing.abort();
    },
  };
}

/**
 * The `usage` query flag (`GET` of a swarm or a list): `1`/`true` add each swarm's usage, as
 * `getResult({ usage: true })` and `runtime.list(…, { usage: true })` do; absent, `0` or `false`
 * do not; anything else is a 400 rather than a silent no.
 */
function usageParam(url: URL): boolean {
  const value = url.searchParams.get('usage');
  if (value === null || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new HttpError(400, `usage must be 1, true, 0 or false, not "${value}"`);
}

/**
 * The route of a path: false when the path is not under `/swarms` (another handler's),
 * undefined when it is but matches no route (404). Segments are URL-decoded.
 */
function routeOf(pathname: string): Route | false | undefined {
  const parts = pathSegments(pathname, '/swarms');
  if (!parts) return parts;
  const [definitionId, swarmId, action] = parts;
  if (parts.length === 0) return { kind: 'definitions' };
  if (parts.length === 1) return { kind: 'definition', definitionId: definitionId! };
  if (parts.length === 2) return { kind: 'swarm', definitionId: definitionId!, swarmId: swarmId! };
  if (parts.length === 3 && action === 'events') return { kind: 'events', definitionId: definitionId!, swarmId: swarmId! };
  if (parts.length === 3 && action === 'fork') return { kind: 'fork', definitionId: definitionId!, swarmId: swarmId! };
  if (parts.length === 3 && isSwarmCommand(action)) {
    return { kind: 'command', definitionId: definitionId!, swarmId: swarmId!, command: action };
  }
  return undefined;
}
