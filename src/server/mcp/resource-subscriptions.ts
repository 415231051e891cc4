/**
 * `resources/subscribe` and `resources/unsubscribe` for one 2025-era MCP session: a subscribed
 * swarm result resource (`swarm://<id>/<swarmId>/result`) gets a
 * `notifications/resources/updated` on the session's standalone stream (`GET /mcp`) whenever the
 * swarm's state changes (it is submitted, or a status update is stored: a turn, a handoff, a
 * pause, its end). The client reads the resource again for the new state.
 *
 * The session listens to the runtime (`runtime.subscribe`) only while it has a subscription to
 * a swarm, and stops on the last unsubscribe and when the session ends. A URI that names no
 * swarm result of this server (another scheme, an unknown definition) may be subscribed to, as
 * the spec has no error for it, and simply never changes; a swarm that does not exist yet is
 * notified once it starts. At most `max` URIs per session (a -32602 error beyond).
 *
 * The events are those of the swarms this process drives: behind several processes a session
 * hears of the swarms its own process runs (see docs/mcp.md, "Sessions").
 *
 * @module
 */
import { type McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { SwarmEvent } from '../../../machines/events.js';
import type { Runtime } from '../../runtime/types.js';

/** Resource subscriptions a session may hold by default. */
export const DEFAULT_SESSION_SUBSCRIPTIONS = 100;

const RESULT_URI = /^swarm:\/\/([^/]+)\/([^/]+)\/result$/;

/**
 * Serves resource subscriptions on a session's server (advertising `resources.subscribe`; call
 * before `connect`). Returns the function that ends them all, for when the session ends.
 */
export function serveResourceSubscriptions(server: McpServer, runtime: Runtime, definitionIds: ReadonlySet<string>, max = DEFAULT_SESSION_SUBSCRIPTIONS): () => void {
  const uris = new Set<string>();
  // swarm id → the subscribed URIs naming it (one, unless a client spells it two ways).
  const bySwarm = new Map<string, Set<string>>();
  let stopListening: (() => void) | undefined;

  const onEvent = (event: SwarmEvent): void => {
    if (event.kind !== 'task' && event.kind !== 'status-update') return;
    const watched = bySwarm.get(event.swarmId);
    if (!watched) return;
    // A client that went away must not disturb the runtime: the send is dropped then.
    for (const uri of watched) server.server.sendResourceUpdated({ uri }).catch(() => undefined);
  };

  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler('resources/subscribe', ({ params: { uri } }) => {
    if (uris.has(uri)) return {};
    if (uris.size >= max) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `At most ${max} resource subscriptions per session`);
    uris.add(uri);
    const swarmId = swarmIdOf(uri, definitionIds);
    if (swarmId !== undefined) {
      let set = bySwarm.get(swarmId);
      if (!set) bySwarm.set(swarmId, (set = new Set()));
      set.add(uri);
      stopListening ??= runtime.subscribe(onEvent);
    }
    return {};
  });
  server.server.setRequestHandler('resources/unsubscribe', ({ params: { uri } }) => {
    uris.delete(uri);
    const swarmId = swarmIdOf(uri, definitionIds);
    const set = swarmId === undefined ? undefined : bySwarm.get(swarmId);
    if (set?.delete(uri) && set.size === 0) bySwarm.delete(swarmId!);
    if (bySwarm.size === 0) {
      stopListening?.();
      stopListening = undefined;
    }
    return {};
  });

  return () => {
    uris.clear();
    bySwarm.clear();
    stopListening?.();
    stopListening = undefined;
  };
}

/** The swarm id a result resource URI of one of `definitionIds` names, else undefined. */
function swarmIdOf(uri: string, definitionIds: ReadonlySet<string>): string | undefined {
  const m = RESULT_URI.exec(uri);
  if (!m) return undefined;
  try {
    return definitionIds.has(decodeURIComponent(m[1]!)) ? decodeURIComponent(m[2]!) : undefined;
  } catch {
    return undefined;
  }
}
