/**
 * A call rejected before running (malformed arguments, an unknown tool, a handoff the swarm may
 * not make): no actor runs it; its result is the error text the model reads, announced at once
 * as `internal:tool-complete`.
 *
 * @module
 */
import type { CallKind, CallResult } from './kind.js';

/** A rejected call as the judge planned it: the error text for the model. */
export interface PlannedInvalidCall {
  id: string;
  name: string;
  kind: 'invalid';
  error: string;
}

/** A call rejected before running: its result is the error text the model reads. */
export interface InvalidRoundCall {
  kind: 'invalid';
  id: string;
  name: string;
  result: CallResult;
}

/** The rejected call kind. */
export const invalidCall = {
  handoff: false,
  open: ({ id, name, error }) => ({ id, name, kind: 'invalid', result: { ok: false, content: error } }),
  announce(speaker, call, events) {
    events.push({ kind: 'internal:tool-complete', agent: speaker, toolName: call.name, callId: call.id, ok: false, content: call.result.content, key: '' });
  },
} satisfies CallKind<PlannedInvalidCall, InvalidRoundCall>;
