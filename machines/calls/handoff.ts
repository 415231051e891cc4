/**
 * What the three kinds of handoff share: the `handoff-result` fact that reports a finished
 * handoff to an agent (`agent.ts`), a remote agent (`remote.ts`) or a child swarm (`swarm.ts`).
 *
 * @module
 */
import { statusUpdate } from '../event-builders.js';
import type { SwarmEventBody } from '../events.js';
import type { CallResult } from './kind.js';

/** The `handoff-result` fact of a finished handoff: `from` is who answered, `to` who handed off. */
export function handoffResult(
  speaker: string,
  call: { id: string; childSwarmId?: string },
  from: string,
  result: CallResult,
  key: string,
): SwarmEventBody {
  return statusUpdate('working', {
    type: 'handoff-result',
    from,
    to: speaker,
    callId: call.id,
    ok: result.ok,
    ...(call.childSwarmId !== undefined ? { childSwarmId: call.childSwarmId } : {}),
    content: result.content,
    key,
  });
}
