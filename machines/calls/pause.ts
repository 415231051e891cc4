/**
 * The model's `pause` built-in: no actor runs it; the swarm pauses once the round's other calls
 * are in, and the human's answer on resume becomes its result. The pause itself is the event.
 *
 * @module
 */
import type { PauseReason } from '../events.js';
import type { CallKind, CallResult } from './kind.js';

/** A `pause` call as the judge planned it. */
export interface PlannedPauseCall {
  id: string;
  name: string;
  kind: 'pause';
  reason: PauseReason;
}

/** The model asked for a human: no child runs it; the human's answer becomes its result. */
export interface PauseRoundCall {
  kind: 'pause';
  id: string;
  name: string;
  pauseReason: PauseReason;
  result?: CallResult;
}

/** The pause call kind. */
export const pauseCall = {
  handoff: false,
  open: ({ id, name, reason }) => ({ id, name, kind: 'pause', pauseReason: reason }),
  announce() {},
} satisfies CallKind<PlannedPauseCall, PauseRoundCall>;
