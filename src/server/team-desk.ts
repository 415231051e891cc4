/**
 * The team endpoints of the inbox and the board's changes (docs/team-inbox.md), beside those of
 * `./teams.ts`, which asks this handler first:
 *
 * | Method and path                                        | Body                                   | Success                          |
 * | ------------------------------------------------------ | -------------------------------------- | -------------------------------- |
 * | `POST /teams/:definitionId/:teamId/messages`           | `{ message, to? }` (no `to`: everyone) | 201 `{ seqs }`                   |
 * | `GET /teams/:definitionId/:teamId/help`                |                                        | 200 `HelpRequest[]`              |
 * | `POST /teams/:definitionId/:teamId/help/:requestId`    | `{ answer }`                           | 200 `HelpRequest` (answered)     |
 * | `PATCH /teams/:definitionId/:teamId/tasks/:taskId`     | `{ addBlockers?, assignTo?, cancel? }` | 200 `Task`                       |
 * | `DELETE /teams/:definitionId/:teamId`                  |                                        | 200 `{ deleted }` (records)      |
 *
 * A team that never ran is a 404, as in `./teams.ts`; a recipient or worker that is not a member
 * is a 404, an unknown request or task a 404, a change that does not fit (an answered
 * request, blockers for a running task, a finished task, a team running or paused to delete) a
 * 409, a cycle a 400. A running task canceled or reassigned has its attempt stopped (see
 * `TeamHost.updateTask`).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TeamClient } from '../team/client.js';
import { asHttpError, HttpError, objectBody, optionalString, pathSegments, readJson, requireMethod, sendJson, type ServerContext } from '../http/http.js';

/** How the handler finds a team that ran (`findTeam` of `./teams.ts`). */
export type FindTeam = (definitionId: string, teamId: string) => Promise<TeamClient>;

/** Handles the routes of the module's table; false for any other path. */
export async function handleTeamDesk(ctx: ServerContext, findTeam: FindTeam, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const parts = pathSegments(url.pathname, '/teams');
  if (!parts || parts.length < 2) return false;
  if (parts.length === 2) {
    if (req.method !== 'DELETE') return false;
    try {
      const client = await findTeam(parts[0]!, parts[1]!);
      sendJson(res, 200, { deleted: await client.delete() });
      return true;
    } catch (err) {
      throw asHttpError(err);
    }
  }
  const [definitionId, teamId, action, id] = parts as [string, string, string, string | undefined];
  const body = async (shape: string) => objectBody(await readJson(req, ctx.maxBodyBytes), shape);
  try {
    if (action === 'messages' && parts.length === 3) {
      requireMethod(req, res, url.pathname, ['POST']);
      const client = await findTeam(definitionId, teamId);
      const b = await body('{ message, to? }');
      const message = optionalString(b, 'message');
      if (!message) throw new HttpError(400, '`message` (a non-empty string) is required');
      const to = optionalString(b, 'to');
      const seqs = to === undefined ? await client.broadcast(message) : [await client.write(to, message)];
      sendJson(res, 201, { seqs });
      return true;
    }
    if (action === 'help' && parts.length === 3) {
      requireMethod(req, res, url.pathname, ['GET']);
      sendJson(res, 200, await (await findTeam(definitionId, teamId)).helpRequests());
      return true;
    }
    if (action === 'help' && parts.length === 4) {
      requireMethod(req, res, url.pathname, ['POST']);
      const client = await findTeam(definitionId, teamId);
      const answer = optionalString(await body('{ answer }'), 'answer');
      if (answer === undefined) throw new HttpError(400, '`answer` (a string) is required');
      if (!(await client.helpRequests()).some((h) => h.id === id)) throw new HttpError(404, `Team "${teamId}" has no help request "${id}"`);
      sendJson(res, 200, await client.answer(id!, answer));
      return true;
    }
    if (action === 'tasks' && parts.length === 4) {
      requireMethod(req, res, url.pathname, ['PATCH']);
      const client = await findTeam(definitionId, teamId);
      const b = await body('{ addBlockers?, assignTo?, cancel? }');
      if (b.cancel !== undefined && typeof b.cancel !== 'boolean') throw new HttpError(400, '`cancel` must be a boolean');
      if (b.addBlockers !== undefined && (!Array.isArray(b.addBlockers) || b.addBlockers.some((x) => typeof x !== 'string')))
        throw new HttpError(400, '`addBlockers` must be a list of task ids');
      const assignTo = optionalString(b, 'assignTo');
      const update = {
        ...(b.addBlockers !== undefined ? { addBlockers: b.addBlockers as string[] } : {}),
        ...(assignTo !== undefined ? { assignTo } : {}),
        ...(b.cancel !== undefined ? { cancel: b.cancel as boolean } : {}),
      };
      sendJson(res, 200, await client.updateTask(id!, update));
      return true;
    }
    return false;
  } catch (err) {
    throw asHttpError(err);
  }
}
