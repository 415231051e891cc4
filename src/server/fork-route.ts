/**
 * `POST /swarms/:definitionId/:swarmId/fork` of the REST server: a new swarm from a recorded
 * step of that swarm (`runtime.fork`), or with `dryRun: true` only its plan (`runtime.forkPlan`).
 *
 * | Body                                                               | Success                                   |
 * | ------------------------------------------------------------------ | ----------------------------------------- |
 * | `{ atSeq \| atTurn, newId?, instructions?, dryRun? }`              | 201 `{ swarmId, plan }` + `Location`; with `dryRun` 200 `{ plan }` |
 *
 * 400 a body that is not exactly that (both or neither of `atSeq` and `atTurn`, a number that is
 * not a whole one from 1, an unknown field, an invalid `newId`); 404 unknown swarm; 409 a fork
 * the runtime refuses, as `{ error, reason }` (`ForkError`: inside a step, the middle of a
 * parallel join, a child swarm still running, an unknown seq or turn…), or `newId` in use.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { ForkError, type ForkOptions } from '../runtime/fork-plan.js';
import { asHttpError, HttpError, readJson, sendJson, type ServerContext } from '../http/http.js';

/** The body of a fork request. */
const forkBody = z
  .strictObject({
    atSeq: z.number().int().min(1).optional(),
    atTurn: z.number().int().min(1).optional(),
    newId: z.string().optional(),
    instructions: z.string().optional(),
    dryRun: z.boolean().optional(),
  })
  .refine((b) => (b.atSeq === undefined) !== (b.atTurn === undefined), { message: 'give exactly one of atSeq and atTurn' });

/** Answers a fork request for the swarm `swarmId` of `definitionId` (found by the caller). */
export async function forkRequest(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, definitionId: string, swarmId: string): Promise<void> {
  const parsed = forkBody.safeParse(await readJson(req, ctx.maxBodyBytes));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
    throw new HttpError(400, `Invalid fork request (${problems}); the body is { atSeq | atTurn, newId?, instructions?, dryRun? }`);
  }
  const { dryRun, atSeq, atTurn, newId, instructions } = parsed.data;
  const options = {
    ...(atSeq !== undefined ? { atSeq } : { atTurn }),
    ...(newId !== undefined ? { newId } : {}),
    ...(instructions !== undefined ? { instructions } : {}),
  } as ForkOptions;
  try {
    if (dryRun) return sendJson(res, 200, { plan: await ctx.runtime.forkPlan(swarmId, options) });
    const plan = await ctx.runtime.fork(swarmId, options);
    res.setHeader('location', `/swarms/${encodeURIComponent(definitionId)}/${encodeURIComponent(plan.swarmId)}`);
    sendJson(res, 201, { swarmId: plan.swarmId, plan });
  } catch (err) {
    if (err instanceof ForkError) return sendJson(res, 409, { error: err.message, reason: err.reason });
    throw asHttpError(err);
  }
}
