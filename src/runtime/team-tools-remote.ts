/**
 * The team tools of a worker swarm this runtime hosts for a team driven by another runtime (a
 * worker process over NATS): a call goes to the runtime holding the team's record (its lease's
 * owner), which runs it on its team (`answerTeamToolCall`). The team is found from the swarm's
 * id: an attempt's swarm is `${teamId}:${taskId}:${attempt}` (its child swarms `${that}:…`), and
 * the team's record is the one of those prefixes the store holds as a team.
 *
 * @module
 */
import { TEAM_RECORD_PREFIX } from '../define/ids.js';
import type { OtherRuntimes } from '../distribution/calls.js';
import { SwarmError } from '../errors.js';
import { summaryOf } from '../store/summary.js';
import type { SwarmStore } from '../store/types.js';
import type { TeamToolCall, TeamToolRemote } from '../team/team-tools.js';

/** How long the driving runtime holds a help request's call before it answers "pending" (below the request timeout). */
const HELP_WAIT_MS = 3_000;

/** What the remote needs of its runtime. */
export interface TeamToolRemoteDeps {
  store: SwarmStore;
  others: OtherRuntimes;
  /** This runtime's owner id: a team it holds itself is driven here (found locally). */
  owner: string;
}

/** The {@link TeamToolRemote} of a runtime over NATS. */
export function teamToolRemote(deps: TeamToolRemoteDeps): TeamToolRemote {
  /** The owner of the live lease on the team whose attempt `swarmId` is, if another runtime holds one. */
  const driverOf = async (swarmId: string): Promise<string | undefined> => {
    // Shortest prefix first: the team id comes before the first `:` unless it holds one itself.
    for (let i = swarmId.indexOf(':'); i > 0; i = swarmId.indexOf(':', i + 1)) {
      const summary = await summaryOf(deps.store, swarmId.slice(0, i));
      if (!summary?.definitionId.startsWith(TEAM_RECORD_PREFIX)) continue;
      const lease = summary.lease;
      return lease && lease.until > Date.now() && lease.owner !== deps.owner ? lease.owner : undefined;
    }
    return undefined;
  };
  return {
    async call(call: TeamToolCall, signal: AbortSignal) {
      for (;;) {
        signal.throwIfAborted();
        const owner = await driverOf(call.swarmId);
        if (owner === undefined) return undefined;
        let done: { value: unknown } | undefined;
        try {
          done = await deps.others.teamCall(owner, { ...call, waitMs: HELP_WAIT_MS });
        } catch (error) {
          // Its driver gone or unreachable now: looked for again (another runtime may adopt the team).
          if (error instanceof SwarmError && (error.code === 'not-live' || error.code === 'unavailable')) return undefined;
          throw error;
        }
        // A help request still waiting: asked again (the same key waits for the same request).
        if (call.op === 'help' && (done?.value as { pending?: unknown } | undefined)?.pending === true) continue;
        return done;
      }
    },
  };
}
