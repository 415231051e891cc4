/**
 * The harness's part in a path: what a human does each time the swarm waits. It reads only the
 * swarm's state (never what it did before), so after a restart it picks up where the swarm is.
 * Also the remote agents of a path: a client answering every A2A handoff in-process.
 *
 * @module
 */
import type { SwarmClient } from '../client/client.js';
import type { RemoteAgentClient } from '../a2a/remote.js';
import type { SwarmResult } from '../store/result.js';
import type { PathRun } from './control.js';
import type { SwarmPath } from './paths.js';

/** Commands a path may give before it must have ended (a guard against a swarm that never ends). */
const MAX_COMMANDS = 200;

/**
 * Drives the swarm of `client` to its end as `path` says; resolves with its final result. Each
 * limit that paused it (`maxTurns`, a budget cap) is added to `limits`.
 */
export async function drive(client: SwarmClient, path: SwarmPath, limits: string[] = []): Promise<SwarmResult> {
  for (let i = 0; i < MAX_COMMANDS; i++) {
    const r = await client.wait();
    if (r.status !== 'paused') return r;
    const { reason } = r;
    try {
      if (reason.type === 'APPROVAL_NEEDED') {
        for (const p of reason.pendingApprovals ?? []) {
          if (path.control.onApproval === 'reject') await client.reject(p.approvalId, 'rejected by the test path');
          else await client.approve(p.approvalId);
        }
      } else if (reason.type === 'HITL' || reason.type === 'EMERGENCY') {
        if (path.control.onHumanPause === 'stop') await client.stop('stopped by the test path');
        else await client.resume('An answer from the test path', reason.pauseId === undefined ? {} : { pauseId: reason.pauseId });
      } else {
        // A limit (maxTurns, a budget) or a guardrail's pause: the path ends there.
        if (reason.limit) limits.push(reason.limit.limit);
        await client.stop('stopped by the test path');
      }
    } catch {
      // The swarm moved on meanwhile (a command it no longer takes): read its state again.
    }
  }
  throw new Error(`the swarm did not end after ${MAX_COMMANDS} commands`);
}

/** A remote-agent client answering the path's remote handoffs in-process: each completes, or fails where the path says. */
export function testRemote(run: PathRun): RemoteAgentClient {
  const byUrl = new Map(run.shape.targets.filter((t) => t.url !== undefined).map((t) => [t.url!, t.id]));
  return {
    async card(url) {
      const name = byUrl.get(url) ?? 'remote-agent';
      return { name, description: `The remote agent at ${url}, answered by the test harness` };
    },
    async send(input) {
      const fails = run.path.steps.some((s) => s.do === 'handoff' && s.target.id === input.agentId && s.child === 'fail');
      return fails ? { ok: false, content: `${input.agentId} failed (as the test path makes it)` } : { ok: true, content: `${input.agentId} answers: done.` };
    },
  };
}
