/**
 * Starting a new swarm: its id and input are checked, its definition resolved for that input
 * (remote agents' cards fetched first), its host launched; it has started once its first step
 * is recorded.
 *
 * @module
 */
import type { StartOptions } from '../client/client.js';
import type { Catalog } from '../catalog/catalog.js';
import { resolveFromInput } from '../define/swarm.js';
import { ADHOC_ID } from '../define/ids.js';
import { SwarmError } from '../errors.js';
import type { RemoteAgents } from '../runners/remote-agent.js';
import { hostedTarget, type Resolver } from '../catalog/resolve.js';
import type { Hosting } from './hosting.js';
import { summaryOf } from '../store/summary.js';
import { assertSwarmId } from '../define/swarm-id.js';
import { validate } from '../define/tool.js';
import type { LiveSwarms } from './live.js';

/** What starting a swarm needs. */
export interface LaunchDeps {
  live: LiveSwarms;
  catalog: Catalog;
  resolver: Resolver;
  remote: RemoteAgents;
  /** Runtimes hosting the definitions this one does not have (with a transport). */
  hosting?: Pick<Hosting, 'host' | 'assertAvailable'> | undefined;
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
  // With NATS down its first step could not be recorded: say so now, nothing was started.
  await deps.hosting?.assertAvailable();
  const def = deps.catalog.swarm(definitionId);
  if (!def && deps.hosting && definitionId !== ADHOC_ID) {
    // Hosted by other runtimes: one of them starts it (and checks its input); it has started
    // once its first step is recorded there.
    const { customization, contextId } = options;
    await deps.hosting.host({ swarmId, definitionId, input, ...(customization ? { customization } : {}), ...(contextId ? { contextId } : {}) });
    return;
  }
  if (!def) throw new SwarmError(`Unknown swarm definition "${definitionId}"`, 'unknown-definition');
  const parsed = validate(def.input, input);
  if (!parsed.ok) throw new SwarmError(`Invalid input for swarm "${definitionId}": ${parsed.error}`, 'invalid-input');
  if (live.hosts.has(swarmId) || live.starting.has(swarmId)) throw inUse(swarmId);
  live.starting.add(swarmId);
  try {
    if (await summaryOf(live.store, swarmId)) throw inUse(swarmId);
    const value = parsed.value;
    const handoffs = resolveFromInput(options.overrides?.handoffs ?? def.handoffs, value);
    await deps.remote.fetchCards(handoffs);
    await deps.catalog.elsewhere?.fetch(handoffs.flatMap((h) => hostedTarget(deps.catalog, h) ?? []));
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
