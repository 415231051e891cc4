/**
 * The kinds of pause, listed once: the pause tool's schema, the judge and the REST API read
 * this list, and `PauseReason['type']` is derived from it.
 *
 * @module
 */

/** Every kind of pause a swarm may be in. */
export const PAUSE_TYPES = ['HITL', 'EMERGENCY', 'APPROVAL_NEEDED'] as const;

/** One kind of pause. */
export type PauseType = (typeof PAUSE_TYPES)[number];
