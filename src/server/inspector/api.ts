/**
 * The inspector page's API, JSON under `/inspector/api/`, behind the token and the request
 * policy like every endpoint of `serve()` (the page's files are public; its data is not).
 *
 * | Method and path                          | Query                                         | Success                             |
 * | ---------------------------------------- | --------------------------------------------- | ----------------------------------- |
 * | `GET /inspector/api/overview`            | `?status=a,b&definitionId=X&q=text&limit=N`   | 200 `{ swarms: SwarmRow[], teams: TeamRow[] }`, newest first |
 * | `GET /inspector/api/swarms/:swarmId`     |                                               | 200 `SwarmRow`                      |
 *
 * `status` filters swarms by their top-level state (and teams by theirs), `definitionId` by
 * definition (a swarm's or a team's), `q` keeps the rows whose id, definition, status, run name or component id
 * contains the text (case-insensitive; it searches the newest 5,000 swarms), `limit` (default
 * 1,000, at most 5,000) bounds each list. Errors: 400 an unknown status, a bad limit, a
 * malformed swarm id; 404 an unknown swarm (a team's record is no swarm) or path; 405 (with
 * `Allow`) another method than GET.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { BoardCounts } from '../../team/board-types.js';
import type { TeamStatus } from '../../team/host-types.js';
import type { TeamListing } from '../../team/teams.js';
import { MAX_DERIVED_SWARM_ID_LENGTH, swarmIdProblem } from '../../define/swarm-id.js';
import { SWARM_STATUSES, type SwarmStatus } from '../../store/result.js';
import { HttpError, type HttpHandler, pathSegments, requireMethod, sendJson, type ServerContext } from '../../http/http.js';
import { type SwarmRow, SwarmRows } from './rows.js';

export type { SwarmRow } from './rows.js';

/** A team as the page's list shows it. */
export interface TeamRow {
  teamId: string;
  definitionId: string;
  status: TeamStatus;
  /** Its board's tasks by state (with `total`, `claimable` and `blocked`). */
  counts: BoardCounts;
}

/** What `GET /inspector/api/overview` answers. */
export interface InspectorOverview {
  swarms: SwarmRow[];
  teams: TeamRow[];
}

/** The prefix of the API's paths. */
export const INSPECTOR_API_PATH = '/inspector/api';
/** Default and largest `limit` of the overview. */
const DEFAULT_LIMIT = 1000;
const MAX_LIMIT = 5000;
/** Teams read at once (a team not run here is read from the store). */
const TEAM_CONCURRENCY = 8;

/** The filters of an overview, from its query. */
interface OverviewQuery {
  statuses?: string[];
  definitionId?: string;
  q?: string;
  limit: number;
}

/** Creates the handler of `/inspector/api/…` (see the module table). */
export function createInspectorApiHandler(ctx: ServerContext): HttpHandler {
  const { runtime } = ctx;
  const rows = new SwarmRows(runtime);

  async function overview(res: ServerResponse, url: URL): Promise<void> {
    const query = parseQuery(url);
    const matches = (...texts: string[]) => query.q === undefined || texts.some((t) => t.toLowerCase().includes(query.q!));
    // With a text filter, the newest MAX_LIMIT summaries are searched (summaries are cheap);
    // the costly part of a row is computed for the rows returned only.
    const summaries = await runtime.list({
      limit: query.q === undefined ? query.limit : MAX_LIMIT,
      ...(query.statuses ? { status: query.statuses as SwarmStatus[] } : {}),
      ...(query.definitionId !== undefined ? { definitionId: query.definitionId } : {}),
    });
    const kept = summaries.filter((s) => matches(s.swarmId, s.definitionId, s.status, s.label?.name ?? '', s.label?.componentId ?? '')).slice(0, query.limit);
    const [swarms, teams] = await Promise.all([rows.rows(kept), teamRows(query)]);
    const body: InspectorOverview = { swarms, teams: teams.filter((t) => matches(t.teamId, t.definitionId, t.status)) };
    sendJson(res, 200, body);
  }

  async function teamRows(query: OverviewQuery): Promise<TeamRow[]> {
    const listed = await runtime.listTeams({ limit: query.limit, ...(query.definitionId !== undefined ? { definitionId: query.definitionId } : {}) });
    const out: (TeamRow | undefined)[] = [];
    for (let i = 0; i < listed.length; i += TEAM_CONCURRENCY) {
      out.push(...(await Promise.all(listed.slice(i, i + TEAM_CONCURRENCY).map(teamRow))));
    }
    return out.filter((t): t is TeamRow => t !== undefined && (query.statuses === undefined || query.statuses.includes(t.status)));
  }

  /** A team's row from its client (the host that runs it here, or its state read from the store). */
  async function teamRow(listing: TeamListing): Promise<TeamRow | undefined> {
    try {
      const client = runtime.forTeam(listing.definitionId, listing.teamId);
      await client.ready();
      const summary = client.summary();
      return { teamId: listing.teamId, definitionId: listing.definitionId, status: summary.status, counts: summary.counts };
    } catch {
      // A team that cannot be read now (another definition took its id, its record is broken)
      // is left out of the list rather than failing it.
      return undefined;
    }
  }

  async function swarm(res: ServerResponse, swarmId: string): Promise<void> {
    const problem = swarmIdProblem(swarmId, MAX_DERIVED_SWARM_ID_LENGTH);
    if (problem) throw new HttpError(400, `Invalid swarm id: ${problem}`);
    const row = await rows.one(swarmId);
    if (!row) throw new HttpError(404, `Unknown swarm "${swarmId}"`);
    sendJson(res, 200, row);
  }

  return {
    async handle(req, res, url) {
      const parts = pathSegments(url.pathname, INSPECTOR_API_PATH);
      if (parts === false) return false;
      if (parts !== undefined && parts.length === 1 && parts[0] === 'overview') {
        requireMethod(req, res, url.pathname, ['GET']);
        await overview(res, url);
        return true;
      }
      if (parts !== undefined && parts.length === 2 && parts[0] === 'swarms') {
        requireMethod(req, res, url.pathname, ['GET']);
        await swarm(res, parts[1]!);
        return true;
      }
      throw new HttpError(404, `No endpoint at ${url.pathname}`);
    },
  };
}

/** The overview's query, validated (400 on an unknown status or a bad limit). */
function parseQuery(url: URL): OverviewQuery {
  const params = url.searchParams;
  const status = params.get('status');
  const statuses = status
    ? status
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
    : undefined;
  const unknown = statuses?.find((s) => !SWARM_STATUSES.includes(s as SwarmStatus));
  if (unknown !== undefined) throw new HttpError(400, `Unknown status "${unknown}"; one of ${SWARM_STATUSES.join(', ')}`);
  const limitParam = params.get('limit');
  const limit = limitParam === null || limitParam === '' ? DEFAULT_LIMIT : Number(limitParam);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new HttpError(400, `limit must be an integer from 1 to ${MAX_LIMIT}`);
  const definitionId = params.get('definitionId') || undefined;
  const q = params.get('q')?.trim().toLowerCase() || undefined;
  return {
    limit,
    ...(statuses && statuses.length > 0 ? { statuses } : {}),
    ...(definitionId !== undefined ? { definitionId } : {}),
    ...(q !== undefined ? { q } : {}),
  };
}
