/**
 * What ids of definitions look like, and the one id reserved for ad-hoc swarms.
 *
 * @module
 */

/** What an agent or swarm id may look like. */
export const DEFINITION_ID = /^[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,127}$/;

/** The definition id ad-hoc swarms run under (reserved). */
export const ADHOC_ID = 'xswarm.adhoc';
