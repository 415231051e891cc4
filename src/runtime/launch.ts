/**
 * Starting a new swarm: its id and input are checked, its definition resolved for that input
 * (remote agents' cards fetched first), its host launched; it has started once its first step
 * is recorded.
 *
 * @module
 */
import type { StartOptions } from '../client/client.js';
import type { Catalog } from '../catalog/catalog.js';
import type { RemoteCards } from '../catalog/remote-cards.js';
import { hostedTarget, type Resolver } from '../catalog/resolve.js';
import { ADHOC_ID } from '../define/ids.js';
import { resolveFromInput } from '../define/swarm.js';
import { assertSwarmId, MAX_DERIVED_SWARM_ID_LENGTH, MAX_SWARM_ID_LENGTH } from '../define/swarm-id.js';
import { validate } from '../define/tool.js';
import type { OtherRuntimes } from '../distribution/calls.js';
import type { CallerTrace } from '../../machines/swarm.js';
import { SwarmError } from '../errors.js';
import { summaryOf } from '../store/summary.js';
import { ownerLost } from './host.js';
import type { LiveSwarms } from './live.js';

/** What starting a swarm needs. */
export interface LauncherDeps {
  live: LiveSwarms;
  catalog: Catalog;
  resolver: Resolver;
  /** The cards of remote agents, fetched before a run resolves its handoffs. */
  cards: RemoteCards;
  /** The runtimes hosting the definitions this one does not have (with a transport). */
  others?: Pick<OtherRuntimes, 'host' | 'assertAvailable'> | undefined;
  /**
   * Told that a swarm is being started here, in its caller's async context: a traced runtime
   * takes the span active there (the caller's own, an A2A request's) as the swarm's parent, and
   * returns that parent's W3C context, kept with the swarm so that an adopter continues its trace.
   */
  starting?: ((swarmId: string) => CallerTrace | undefined) | undefined;
}

/** Starts the swarms of one runtime. */
export class Launcher {
  constructor(private readonly deps: LauncherDeps) {}

  /** Starts a swarm under an id its caller chose (at most {@link MAX_SWARM_ID_LENGTH} characters). */
  start(definitionId: string, swarmId: string, input: unknown, options: StartOptions = {}): Promise<void> {
    return this.launch(definitionId, swarmId, input, options, MAX_SWARM_ID_LENGTH);
  }

  /**
   * Starts a swarm under a derived id: a child swarm's, a hosted call's or a team attempt's,
   * which are longer (at most {@link MAX_DERIVED_SWARM_ID_LENGTH} characters).
   */
  startDerived(definitionId: string, swarmId: string, input: unknown, options: StartOptions = {}): Promise<void> {
    return this.launch(definitionId, swarmId, input, options, MAX_DERIVED_SWARM_ID_LENGTH);
  }

  /**
   * Starts a swarm; an id that is not a valid swarm id of at most `maxIdLength` characters is
   * refused before anything else happens. Throws a `SwarmError` when it cannot start or its
   * first step could not be recorded.
   */
  private async launch(definitionId: string, swarmId: string, input: unknown, options: StartOptions, maxIdLength: number): Promise<void> {
    const { deps } = this;
    const { live } = deps;
    assertSwarmId(swarmId, maxIdLength);
    live.assertOpen();
    const trace = deps.starting?.(swarmId);
    // With NATS down its first step could not be recorded: say so now, nothing was started.
    await deps.others?.assertAvailable();
    const def = deps.catalog.swarm(definitionId);
    if (!def && deps.others && definitionId !== ADHOC_ID) {
      // Hosted by other runtimes: one of them starts it (and checks its input); it has started
      // once its first step is recorded there.
      const { customization, contextId, inputParts } = options;
      await deps.others.host({
        swarmId,
        definitionId,
        input,
        ...(customization ? { customization } : {}),
        ...(contextId ? { contextId } : {}),
        ...(inputParts ? { inputParts } : {}),
      });
      return;
    }
    if (!def) throw new SwarmError(`Unknown swarm definition "${definitionId}"`, 'unknown-definition');
    const parsed = validate(def.input, input);
    if (!parsed.ok) throw new SwarmError(`Invalid input for swarm "${definitionId}": ${parsed.error}`, 'invalid-input');
    if (live.hosts.has(swarmId) || live.starting.has(swarmId) || live.passivated.has(swarmId)) throw inUse(swarmId);
    live.starting.add(swarmId);
    try {
      // A store that refuses the first record of a swarm that exists needs no read first (a
      // broker round trip on a network store, on the path of every handoff): the first commit
      // is the check. Nothing of the swarm runs before it is durable, and a refused host stops
      // without writing anything.
      if (!live.store.refusesExisting && (await summaryOf(live.store, swarmId))) throw inUse(swarmId);
      const value = parsed.value;
      const handoffs = resolveFromInput(options.overrides?.handoffs ?? def.handoffs, value);
      await deps.cards.fetch(handoffs);
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
            ...(options.inputParts ? { inputParts: options.inputParts } : {}),
            config,
            ...(trace ? { trace } : {}),
          },
        }),
      );
      await host.durable().catch(() => undefined);
      // Refused as a revision or lease conflict (by a store that checks at the first commit):
      // the id is taken in the store.
      if (host.error && ownerLost(host.error)) throw inUse(swarmId);
      if (host.error) throw new SwarmError(`Swarm "${swarmId}" could not be recorded: ${host.error.message}`, 'store');
    } finally {
      live.starting.delete(swarmId);
    }
  }
}

function inUse(swarmId: string): SwarmError {
  return new SwarmError(`Swarm id "${swarmId}" is already in use`, 'id-in-use');
}
