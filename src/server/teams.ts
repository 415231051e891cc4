/**
 * The team endpoints of `serve()`: the runtime's teams (`runtime.forTeam`) over REST, their
 * events as Server-Sent Events, mirroring the swarm endpoints (`./rest.ts`) and sharing their
 * plumbing (routes, 405 + `Allow`, JSON bodies, the error mapping, the SSE stream).
 *
 * | Method and path                                   | Body                                      | Success                                     |
 * | ------------------------------------------------- | ----------------------------------------- | ------------------------------------------- |
 * | `GET /teams`                                      |                                           | 200 `TeamCard[]`                            |
 * | `GET /teams/:definitionId`                        |                                           | 200 `TeamCard`                              |
 * | `GET /teams/:definitionId/:teamId`                |                                           | 200 `TeamSummary`                           |
 * | `POST /teams/:definitionId/:teamId/run`           | `{ tasks: TaskSpec[] }`                   | 201 (run started) or 200 (added) `{ teamId, status, tasks }` + `Location` |
 * | `GET /teams/:definitionId/:teamId/board`          |                                           | 200 `{ tasks, counts, blocked }`            |
 * | `GET /teams/:definitionId/:teamId/inbox`          | `?since=n`                                | 200 `{ leader, members, messages, cursor }` |
 * | `GET /teams/:definitionId/:teamId/usage`          |                                           | 200 `UsageTotals` of every task attempt     |
 * | `POST /teams/:definitionId/:teamId/pause`         | `{ reason? }`                             | 200 `{ ok: true, summary }`                 |
 * | `POST /teams/:definitionId/:teamId/resume`        | `{ message?, decision?: 'retry'\|'skip' }` | 200 `{ ok: true, summary }`                 |
 * | `POST /teams/:definitionId/:teamId/stop`          | `{ reason? }`                             | 200 `{ ok: true, summary }`                 |
 * | `GET /teams/:definitionId/:teamId/events`         | `?since=n`, Last-Event-ID                 | 200 `text/event-stream`                     |
 *
 * A team exists once it has run: every path under a team that never ran (`idle`) is a 404, as
 * is an unknown team definition; `run` is what creates it. The inbox is the leader's view (the
 * messages workers sent it, after `since`), read-only. The event stream carries the team's
 * events exactly as `TeamClient.events({ since })` yields them (A2A `status-update`s, `seq`
 * numbered) and ends when they do: after the run's `team-ended` (a stream opened on a finished
 * team replays and ends; on a paused one it waits).
 *
 * Errors are JSON `{ error }` with the status `asHttpError` gives a `TeamError` (`./http.ts`):
 * 400 an invalid task, a run with no task, an unknown dependency, a cycle (the message names
 * it), a malformed team id or body; 404 an unknown definition or team; 405 with `Allow`; 409 a
 * limit (`maxTasksPerBoard`, `maxTeams`), a duplicate task id, a command that does not fit the
 * team's state, a team another runtime drives; 413 a body over the limit.
 *
 * @module
 */
import { setMaxListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Runtime } from '../runtime/types.js';
import type { Task, TaskSpec } from '../define/team.js';
import type { TeamClient } from '../team/client.js';
import type { TeamDefinition } from '../define/team.js';
import type { TeamLimits } from '../define/team-limits.js';
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
import { DEFAULT_KEEPALIVE_MS, parseCursor, sseCursor, streamSse } from '../http/sse.js';
import { handleTeamDesk } from './team-desk.js';

/** Options of {@link createTeamHandler}. */
export interface TeamHandlerOptions {
  /** Interval of the SSE keep-alive comments, default 15 000 ms. */
  keepAliveMs?: number;
}

/** A team definition as served: what it is, without its code (worker swarms by id). */
export interface TeamCard {
  id: string;
  description: string;
  workers: { type: string; specialty: string; count: number; swarm: string }[];
  limits: TeamLimits;
}

const COMMANDS = ['pause', 'resume', 'stop'] as const;
type Command = (typeof COMMANDS)[number];
const VIEWS = ['board', 'inbox', 'usage', 'events'] as const;
type View = (typeof VIEWS)[number];

type Route =
  | { kind: 'definitions' }
  | { kind: 'definition'; definitionId: string }
  | { kind: 'team'; definitionId: string; teamId: string }
  | { kind: 'run'; definitionId: string; teamId: string }
  | { kind: 'view'; definitionId: string; teamId: string; view: View }
  | { kind: 'command'; definitionId: string; teamId: string; command: Command };

const METHODS: Record<Route['kind'], readonly string[]> = {
  definitions: ['GET'],
  definition: ['GET'],
  // DELETE is served by ./team-desk.ts (cleanup).
  team: ['GET', 'DELETE'],
  run: ['POST'],
  view: ['GET'],
  command: ['POST'],
};

/** The card of a team definition. */
export function teamCard(def: TeamDefinition): TeamCard {
  return {
    id: def.id,
    description: def.description,
    workers: def.workers.map((w) => ({ type: w.type, specialty: w.specialty, count: w.count, swarm: typeof w.swarm === 'string' ? w.swarm : w.swarm.id })),
    limits: def.limits,
  };
}

/** The runtime's team definition with this id, or a 404. */
function requireTeamDefinition(runtime: Runtime, definitionId: string): TeamDefinition {
  const def = runtime.teamDefinitions().find((d) => d.id === definitionId);
  if (!def) throw new HttpError(404, `Unknown team definition "${definitionId}"`);
  return def;
}

/**
 * The client of team `teamId` of a team definition, its stored state read (what another
 * runtime wrote too): 404 for an unknown definition, or for a team that never ran (`allowIdle`
 * for `run`, which creates it); 400 for a malformed team id. Shared by the REST routes and the
 * WebSocket stream. Looking a team up keeps nothing in the runtime for a team that never ran.
 */
export async function findTeam(runtime: Runtime, definitionId: string, teamId: string, allowIdle = false): Promise<TeamClient> {
  const def = requireTeamDefinition(runtime, definitionId);
  try {
    const client = runtime.forTeam(def, teamId);
    await client.ready();
    if (!allowIdle && client.status === 'idle') throw new HttpError(404, `Unknown team "${teamId}" of team definition "${definitionId}": it has not run`);
    return client;
  } catch (err) {
    throw asHttpError(err);
  }
}

/** Creates the REST + SSE handler for the paths under `/teams` (see the module table). */
export function createTeamHandler(ctx: ServerContext, options: TeamHandlerOptions = {}): HttpHandler {
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS;
  /** Aborted by `close()`: it ends every open SSE stream, so the server can shut down promptly. */
  const closing = new AbortController();
  // One listener per open stream: any number is expected, not a leak.
  setMaxListeners(0, closing.signal);
  const { runtime } = ctx;

  async function run(req: IncomingMessage, res: ServerResponse, route: Extract<Route, { kind: 'run' }>): Promise<void> {
    // The body is checked before the team is looked up: a refused request touches no team.
    const body = objectBody(await readJson(req, ctx.maxBodyBytes), '{ tasks }');
    if (!Array.isArray(body.tasks)) throw new HttpError(400, '`tasks` must be an array of tasks { id, subject, description?, metadata?, dependencies? }');
    const client = await findTeam(runtime, route.definitionId, route.teamId, true);
    const joining = client.status === 'running' || client.status === 'paused';
    let tasks: Task[];
    try {
      // The board checks every task (all or nothing) and names what is wrong.
      tasks = await client.run(body.tasks as TaskSpec[]);
    } catch (err) {
      throw asHttpError(err);
    }
    res.setHeader('location', `/teams/${encodeURIComponent(route.definitionId)}/${encodeURIComponent(route.teamId)}`);
    sendJson(res, joining ? 200 : 201, { teamId: client.teamId, status: client.status, tasks });
  }

  async function command(req: IncomingMessage, res: ServerResponse, route: Extract<Route, { kind: 'command' }>): Promise<void> {
    const client = await findTeam(runtime, route.definitionId, route.teamId);
    const body = objectBody(await readJson(req, ctx.maxBodyBytes), route.command === 'resume' ? "{ message?, decision?: 'retry' | 'skip' }" : '{ reason? }');
    try {
      if (route.command === 'pause') {
        await client.pause(optionalString(body, 'reason') ?? 'Paused over HTTP');
      } else if (route.command === 'resume') {
        const message = optionalString(body, 'message');
        const decision = optionalString(body, 'decision');
        if (decision !== undefined && decision !== 'retry' && decision !== 'skip') throw new HttpError(400, "`decision` must be 'retry' or 'skip'");
        await client.resume({ ...(message !== undefined ? { message } : {}), ...(decision !== undefined ? { decision } : {}) });
      } else {
        await client.stop(optionalString(body, 'reason') ?? 'Stopped over HTTP');
      }
    } catch (err) {
      throw asHttpError(err);
    }
    sendJson(res, 200, { ok: true, summary: client.summary() });
  }

  async function view(req: IncomingMessage, res: ServerResponse, route: Extract<Route, { kind: 'view' }>, url: URL): Promise<void> {
    // The cursor is checked before the team is looked up, as the swarm stream does.
    const since = route.view === 'events' ? sseCursor(req, url) : undefined;
    const client = await findTeam(runtime, route.definitionId, route.teamId);
    if (route.view === 'board') {
      const { tasks, counts, blocked } = client.board();
      return sendJson(res, 200, { tasks, counts, blocked });
    }
    if (route.view === 'usage') return sendJson(res, 200, await client.usage());
    if (route.view === 'inbox') {
      const param = url.searchParams.get('since');
      const inbox = client.inbox();
      const read = inbox.read(inbox.leader, { since: param === null || param === '' ? 0 : parseCursor(param, 'since') });
      return sendJson(res, 200, { leader: inbox.leader, members: inbox.members(), ...read });
    }
    await streamSse(res, (signal) => client.events({ since, signal }), { keepAliveMs, signal: closing.signal });
  }

  return {
    async handle(req, res, url) {
      // The inbox's and the board's changes (messages, help, tasks): ./team-desk.ts.
      if (await handleTeamDesk(ctx, (definitionId, teamId) => findTeam(runtime, definitionId, teamId), req, res, url)) return true;
      const route = routeOf(url.pathname);
      if (route === false) return false;
      if (route === undefined) throw new HttpError(404, `No endpoint at ${url.pathname}`);
      requireMethod(req, res, url.pathname, METHODS[route.kind]);
      switch (route.kind) {
        case 'definitions':
          sendJson(res, 200, runtime.teamDefinitions().map(teamCard));
          break;
        case 'definition':
          sendJson(res, 200, teamCard(requireTeamDefinition(runtime, route.definitionId)));
          break;
        case 'team':
          sendJson(res, 200, (await findTeam(runtime, route.definitionId, route.teamId)).summary());
          break;
        case 'run':
          await run(req, res, route);
          break;
        case 'command':
          await command(req, res, route);
          break;
        case 'view':
          await view(req, res, route, url);
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
 * The route of a path: false when the path is not under `/teams` (another handler's),
 * undefined when it is but matches no route (404). Segments are URL-decoded.
 */
function routeOf(pathname: string): Route | false | undefined {
  const parts = pathSegments(pathname, '/teams');
  if (!parts) return parts;
  const [definitionId, teamId, action] = parts;
  if (parts.length === 0) return { kind: 'definitions' };
  if (parts.length === 1) return { kind: 'definition', definitionId: definitionId! };
  if (parts.length === 2) return { kind: 'team', definitionId: definitionId!, teamId: teamId! };
  if (parts.length !== 3) return undefined;
  const ids = { definitionId: definitionId!, teamId: teamId! };
  if (action === 'run') return { kind: 'run', ...ids };
  if ((VIEWS as readonly string[]).includes(action!)) return { kind: 'view', ...ids, view: action as View };
  if ((COMMANDS as readonly string[]).includes(action!)) return { kind: 'command', ...ids, command: action as Command };
  return undefined;
}
