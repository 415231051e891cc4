/**
 * Starting a new swarm: its id and input are checked, its definition resolved for that input
 * (remote agents' cards fetched first), its host launched; it has started once its first step
 * is recorded.
 *
 * @module
 */
import type { StartOptions } from '../client.js';
import type { Catalog } from '../definitions/catalog.js';
import { resolveFromInput } from '../definitions/define.js';
import { SwarmError } from '../errors.js';
import type { RemoteAgents } from '../handoffs/remote-agent.js';
import type { Resolver } from '../handoffs/resolve.js';
import { assertSwarmId } from '../swarm-id.js';
import { validate } from '../tool.js';
import type { LiveSwarms } from './live.js';

/** What starting a swarm needs. */
export interface LaunchDeps {
  live: LiveSwarms;
  catalog: Catalog;
  resolver: Resolver;
  remote: RemoteAgents;
}

/**
 * Starts a swarm; an id that is not a valid swarm id of at most `maxIdLength` characters is
 * refused before anything else happens (child swarms come with longer, derived ids). Throws a
 * `SwarmError` when it cannot start or its first step could not be recorded.
 */
export async function launchSwarm(
  deps: LaunchDeps,
  definitionId: string,
  swarmId: string,
  input: unknown,
  options: StartOptions,
  maxIdLength: number,
): Promise<void> {
  const { live } = deps;
  assertSwarmId(swarmId, maxIdLength);
  live.assertOpen();
  const def = deps.catalog.swarm(definitionId);
  if (!def) throw new SwarmError(`Unknown swarm definition "${definitionId}"`, 'unknown-definition');
  const parsed = validate(def.input, input);
  if (!parsed.ok) throw new SwarmError(`Invalid input for swarm "${definitionId}": ${parsed.error}`, 'invalid-input');
  if (live.hosts.has(swarmId) || live.starting.has(swarmId)) throw inUse(swarmId);
  live.starting.add(swarmId);
  try {
    if (await live.store.load(swarmId)) throw inUse(swarmId);
    const value = parsed.value;
    const handoffs = resolveFromInput(options.overrides?.handoffs ?? def.handoffs, value);
    await deps.remote.fetchCards(handoffs);
    const config = deps.resolver.resolve(def, value, { ...options, handoffs });
    const host = live.launch(
      live.createHost(swarmId, def.id, {
        input: {
          swarmId,
          ...(options.contextId ? { contextId: options.contextId } : {}),
          definitionId: def.id,
          input: value,
          userMessage: typeof value === 'string' ? value : JSON.stringify(value),
          config,
        },
      }),
    );
    await host.gate().catch(() => undefined);
    if (host.error) throw new SwarmError(`Swarm "${swarmId}" could not be recorded: ${host.error.message}`, 'store');
  } finally {
    live.starting.delete(swarmId);
  }
}

function inUse(swarmId: string): SwarmError {
  return new SwarmError(`Swarm id "${swarmId}" is already in use`, 'id-in-use');
}
