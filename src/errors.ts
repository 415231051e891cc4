/**
 * Error classes of the public API, so callers can tell mistakes apart without parsing text.
 *
 * @module
 */

/**
 * A definition mistake found when the runtime is created or a run is resolved: duplicate ids,
 * a handoff to an unknown agent, an invalid tool name.
 *
 * @example
 * try { createRuntime({ swarms: [a, a], model }); } catch (e) { if (e instanceof DefinitionError) … }
 */
export class DefinitionError extends Error {
  override readonly name = 'DefinitionError';
}

/**
 * A swarm could not be started or commanded: unknown definition, invalid input, id in use,
 * a command that does not fit the swarm's state.
 *
 * @example
 * await client.resume('ok').catch((e) => e instanceof SwarmError && console.error(e.message));
 */
export class SwarmError extends Error {
  override readonly name = 'SwarmError';
}
