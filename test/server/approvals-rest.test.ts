/**
 * Approvals over REST (`POST /swarms/:def/:id/approve` and `…/reject`): the paused result lists
 * the pending approvals; approve and reject answer them (200 with the result); a bad body is a
 * 400, an id not pending a 409 with nothing changed. The SSE stream carries the facts.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { queueModel } from '../support/script.js';
import { request, servedPerTest } from '../support/server-clients.js';
import { until } from '../support/wait.js';
import { deploy, deployScript } from '../support/approval-swarms.js';

const served = servedPerTest();

describe('approvals over REST', () => {
  it('lists pending approvals, answers them with approve and reject, refuses what is not pending', async () => {
    const model = queueModel({ deploy: deployScript() });
    served.runtime = createRuntime({ swarms: [deploy], model });
    served.server = await serve(served.runtime);
    const url = served.server.url;
    expect((await request(url, 'POST', '/swarms/deploy', { input: 'go', swarmId: 'd1' })).status).toBe(201);
    const paused = await until(
      'the pause',
      async () => (await request(url, 'GET', '/swarms/deploy/d1')).body,
      (b) => b.status === 'paused',
    );
    expect(paused.reason).toMatchObject({
      type: 'APPROVAL_NEEDED',
      pendingApprovals: [
        { tool: 'ship', callId: 's1' },
        { tool: 'ship', callId: 's2' },
      ],
    });
    const [a, b] = paused.reason.pendingApprovals as { approvalId: string }[];

    const bad = await Promise.all([
      request(url, 'POST', '/swarms/deploy/d1/approve', {}),
      request(url, 'POST', '/swarms/deploy/d1/approve', { approvalId: a!.approvalId, always: 'yes' }),
      request(url, 'POST', '/swarms/deploy/d1/reject', { approvalId: a!.approvalId }),
    ]);
    expect(bad.map((r) => r.status)).toEqual([400, 400, 400]);
    expect(bad[0]!.body.error).toContain('`approvalId` is required');
    const forged = await request(url, 'POST', '/swarms/deploy/d1/approve', { approvalId: 'apr_forgedforgedforgedforg' });
    expect(forged.status).toBe(409);
    expect(forged.body.error).toContain('is not pending on swarm "d1"');
    const resumed = await request(url, 'POST', '/swarms/deploy/d1/resume', { message: 'go' });
    expect(resumed.status).toBe(409);

    const approved = await request(url, 'POST', '/swarms/deploy/d1/approve', { approvalId: a!.approvalId });
    expect(approved.status).toBe(200);
    expect(approved.body.result).toMatchObject({ status: 'paused', reason: { pendingApprovals: [{ approvalId: b!.approvalId }] } });
    const rejected = await request(url, 'POST', '/swarms/deploy/d1/reject', { approvalId: b!.approvalId, reason: 'not b' });
    expect(rejected.status).toBe(200);
    const done = await until(
      'the end',
      async () => (await request(url, 'GET', '/swarms/deploy/d1')).body,
      (r) => r.status === 'completed',
    );
    expect(done.result).toBe('shipped a | The call was rejected by a human: not b');
    // Stale now: answered already.
    expect((await request(url, 'POST', '/swarms/deploy/d1/approve', { approvalId: a!.approvalId })).status).toBe(409);
  });
});
