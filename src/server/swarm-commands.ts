/**
 * The commands a client gives one swarm — pause, resume, stop, extend, approve, reject — with
 * the body each takes, checked one way for every surface that carries them: a REST `POST
 * /swarms/:definitionId/:swarmId/<command>` and a `command` frame on the swarm's WebSocket
 * (`events-socket.ts`). A body field of the wrong type is an `HttpError` 400 naming it; what the
 * runtime refuses (a resume of a swarm that is not paused, a stale pause id, an answer that fails
 * its schema, an approval id not pending) is its `SwarmError`, mapped by `asHttpError`.
 *
 * @module
 */
import { PAUSE_TYPES, type PauseType } from '../../machines/pause.js';
import type { SwarmClient } from '../client/client.js';
import type { Budget } from '../define/budget.js';
import { HttpError, optionalString } from '../http/http.js';
import { answerApproval, approvalShape } from './approval-commands.js';

/** Every command a swarm takes from a client. */
export const SWARM_COMMANDS = ['pause', 'resume', 'stop', 'extend', 'approve', 'reject'] as const;

/** One command a swarm takes from a client. */
export type SwarmCommandName = (typeof SWARM_COMMANDS)[number];

/** Whether `value` names a command. */
export function isSwarmCommand(value: unknown): value is SwarmCommandName {
  return (SWARM_COMMANDS as readonly unknown[]).includes(value);
}

/** The body `command` takes, for a 400's message. */
export function commandShape(command: SwarmCommandName): string {
  return approvalShape(command) ?? (command === 'resume' ? '{ message? | answer?, pauseId? }' : command === 'extend' ? '{ maxTurns?, budget? }' : '{ reason? }');
}

/**
 * Gives the swarm `command` with `body`'s fields. `via` names the surface in the default
 * reasons of a pause or a stop ("Paused over HTTP").
 */
export async function applyCommand(client: SwarmClient, command: SwarmCommandName, body: Record<string, unknown>, via: string): Promise<void> {
  switch (command) {
    case 'pause': {
      const type = optionalString(body, 'type') ?? 'HITL';
      if (!PAUSE_TYPES.includes(type as PauseType)) throw new HttpError(400, `\`type\` must be one of ${PAUSE_TYPES.join(', ')}`);
      return client.pause({ type: type as PauseType, message: optionalString(body, 'reason') ?? `Paused over ${via}` });
    }
    case 'resume': {
      // `answer`: any JSON value, for a pause with a response schema (checked by the runtime: 400 with why).
      if ('answer' in body && 'message' in body) throw new HttpError(400, 'Send either `message` or `answer`, not both');
      const pauseId = optionalString(body, 'pauseId');
      return client.resume('answer' in body ? body.answer : optionalString(body, 'message'), pauseId === undefined ? {} : { pauseId });
    }
    case 'approve':
    case 'reject':
      return answerApproval(client, command, body);
    case 'extend':
      // The runtime checks the values (400 with its message): maxTurns a whole number above the
      // turns made, each budget cap a number ≥ 0 that is not lowered.
      return client.extend({ maxTurns: body.maxTurns as number, ...('budget' in body ? { budget: body.budget as Budget } : {}) });
    case 'stop':
      return client.stop(optionalString(body, 'reason') ?? `Stopped over ${via}`);
  }
}
