/**
 * `resources/subscribe` and `resources/unsubscribe` for one 2025-era MCP session: a subscribed
 * swarm result resource (`swarm://<id>/<swarmId>/result`) gets a
 * `notifications/resources/updated` on the session's standalone stream (`GET /mcp`) whenever the
 * swarm's state changes (it is submitted, or a status update is stored: a turn, a handoff, a
 * pause, its end). The client reads the resource again for the new state.
 *
 * Each subscribed swarm is followed through the runtime's event stream from the moment of the
 * subscription (`events({ since: 'latest' })`), which reads the store when another process
 * drives the swarm: behind several processes sharing a store, a session hears of every swarm,
 * wherever it runs. A swarm that does not exist yet is looked for again (at once when this
 * process starts it, else with a backoff up to {@link MAX_LOOK_MS}) and notified once it starts;
 * a swarm that has ended is followed no further. The following stops on unsubscribe and when
 * the session ends. A URI that names no swarm result of this server (another scheme, an unknown
 * definition) may be subscribed to, as the spec has no error for it, and simply never changes.
 * At most `max` URIs per session (a -32602 error beyond).
 *
 * @module
 */
import { type McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { SwarmError } from '../../errors.js';
import type { Runtime } from '../../runtime/types.js';
import { delay } from '../../util/abort.js';

/** Resource subscriptions a session may hold by default. */
export const DEFAULT_SESSION_SUBSCRIPTIONS = 100;

const RESULT_URI = /^swarm:\/\/([^/]+)\/([^/]+)\/result$/;

/** The longest pause between two looks for a subscribed swarm that does not exist yet. */
export const MAX_LOOK_MS = 2_000;

/**
 * Serves resource subscriptions on a session's server (advertising `resources.subscribe`; call
 * before `connect`). Returns the function that ends them all, for when the session ends.
 */
export function serveResourceSubscriptions(server: McpServer, runtime: Runtime, definitionIds: ReadonlySet<string>, max = DEFAULT_SESSION_SUBSCRIPTIONS): () => void {
  const uris = new Set<string>();
  // swarm id → the subscribed URIs naming it (one, unless a client spells it two ways), and the
  // follower of its events.
  const bySwarm = new Map<string, { uris: Set<string>; following: AbortController }>();
  // Followers waiting for their swarm to exist, woken when this process starts one.
  const looking = new Map<string, () => void>();
  let stopListening: (() => void) | undefined;

  const notify = (swarmId: string) => {
    // A client that went away must not disturb the runtime: the send is dropped then.
    for (const uri of bySwarm.get(swarmId)?.uris ?? []) server.server.sendResourceUpdated({ uri }).catch(() => undefined);
  };

  const follow = async (definitionId: string, swarmId: string, signal: AbortSignal) => {
    let since: number | 'latest' = 'latest';
    let lookMs = 100;
    while (!signal.aborted) {
      try {
        for await (const event of runtime.forSwarm(definitionId, swarmId).events({ since, signal })) {
          since = event.seq;
          if (event.kind === 'task' || event.kind === 'status-update') notify(swarmId);
        }
        // Its final event: an ended swarm changes no more.
        return;
      } catch (e) {
        if (signal.aborted) return;
        // Not started yet: everything it will do is news, from its first event.
        if (e instanceof SwarmError && e.code === 'unknown-swarm' && since === 'latest') since = 0;
        const woken = new AbortController();
        const wake = () => woken.abort();
        looking.set(swarmId, wake);
        signal.addEventListener('abort', wake, { once: true });
        await delay(lookMs, woken.signal, { unref: true });
        signal.removeEventListener('abort', wake);
        looking.delete(swarmId);
        lookMs = Math.min(MAX_LOOK_MS, lookMs * 2);
      }
    }
  };

  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler('resources/subscribe', ({ params: { uri } }) => {
    if (uris.has(uri)) return {};
    if (uris.size >= max) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `At most ${max} resource subscriptions per session`);
    uris.add(uri);
    const named = namedBy(uri, definitionIds);
    if (named !== undefined) {
      const { definitionId, swarmId } = named;
      let entry = bySwarm.get(swarmId);
      if (!entry) {
        entry = { uris: new Set(), following: new AbortController() };
        bySwarm.set(swarmId, entry);
        void follow(definitionId, swarmId, entry.following.signal);
      }
      entry.uris.add(uri);
      // A swarm this process starts wakes its waiting follower at once.
      stopListening ??= runtime.subscribe((event) => {
        if (event.kind === 'task') looking.get(event.swarmId)?.();
      });
    }
    return {};
  });
  server.server.setRequestHandler('resources/unsubscribe', ({ params: { uri } }) => {
    uris.delete(uri);
    const swarmId = namedBy(uri, definitionIds)?.swarmId;
    const entry = swarmId === undefined ? undefined : bySwarm.get(swarmId);
    if (entry?.uris.delete(uri) && entry.uris.size === 0) {
      entry.following.abort();
      bySwarm.delete(swarmId!);
    }
    if (bySwarm.size === 0) {
      stopListening?.();
      stopListening = undefined;
    }
    return {};
  });

  return () => {
    uris.clear();
    for (const entry of bySwarm.values()) entry.following.abort();
    bySwarm.clear();
    stopListening?.();
    stopListening = undefined;
  };
}

/** The definition and swarm a result resource URI of one of `definitionIds` names, else undefined. */
function namedBy(uri: string, definitionIds: ReadonlySet<string>): { definitionId: string; swarmId: string } | undefined {
  const m = RESULT_URI.exec(uri);
  if (!m) return undefined;
  try {
    const definitionId = decodeURIComponent(m[1]!);
    return definitionIds.has(definitionId) ? { definitionId, swarmId: decodeURIComponent(m[2]!) } : undefined;
  } catch {
    return undefined;
  }
}
