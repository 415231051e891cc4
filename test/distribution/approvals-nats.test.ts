/**
 * A child swarm's approval, answered through its root across processes' worth of runtimes on a
 * real `nats-server -js` (127.0.0.1, one per test): the child runs on a worker runtime, the root
 * on another; the root's result lists the child's approval, and `approve` on the root's client
 * travels over NATS to the child's holder. Runs skipped when nats-server is not installed.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, type PendingApproval, SwarmError } from '../../src/index.js';
import { natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { call, lastToolResult, queueModel } from '../support/script.js';
import { until } from '../support/wait.js';
import { refundSwarm } from '../support/approval-swarms.js';

const nats = natsFaultFixtures('xswarm-approvals-nats-');
const HOSTING = { deadlineMs: 2_000, heartbeatMs: 250, heartbeatTimeoutMs: 2_000 };

describe.skipIf(natsServerMissing)('approvals over NATS', () => {
  it("a child swarm's approval surfaces on the root and is answered there, over NATS", async () => {
    const { ran, child: refunds } = refundSwarm();
    const lead = defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toSwarm('refunds')] });
    const answer = (prefix: string) => (req: Parameters<typeof lastToolResult>[0]) => ({ text: `${prefix}: ${lastToolResult(req)}` });
    const worker = createRuntime({
      swarms: [refunds],
      model: queueModel({ refunds: [call('refund', { order: 'N1' }, 'r1'), answer('child')] }),
      nats: { servers: nats.server.url },
      hosting: HOSTING,
    });
    nats.runtimes.push(worker);
    await worker.start();
    const home = createRuntime({
      swarms: [lead],
      model: queueModel({ lead: [call('handoff_to_refunds', { request: 'refund N1' }, 'h1'), answer('lead')] }),
      nats: { servers: nats.server.url },
      hosting: HOSTING,
    });
    nats.runtimes.push(home);
    await home.start();

    const root = home.forSwarm(lead, 'n1');
    await root.run('Refund N1');
    const [pending] = await until(
      'the child approval at the root',
      async () => {
        const r = await root.getResult();
        return r.status === 'running' ? (r.pendingApprovals ?? []) : ([] as PendingApproval[]);
      },
      (p) => p.length > 0,
      { timeout: 15_000 },
    );
    expect(pending).toMatchObject({ tool: 'refund', swarmId: 'n1:t1:0' });
    await expect(root.approve('apr_forgedforgedforgedforg')).rejects.toBeInstanceOf(SwarmError);
    await root.approve(pending!.approvalId);
    expect(await root.wait()).toEqual({ status: 'completed', result: 'lead: child: refunded N1' });
    expect(ran).toEqual(['N1']);
  }, 30_000);
});
