/**
 * Approvals of child swarms surface on the root (issue 30, item 5): a running root's result
 * lists what its child swarms wait for, each naming its swarm; `approve` / `reject` on the
 * root's client answers them, in one runtime and when the child is held by another runtime
 * (the commands go over the transport, as over NATS).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRuntime,
  defineSwarm,
  handoff,
  LocalBus,
  localTransport,
  memoryStore,
  type PendingApproval,
  type Runtime,
  type SwarmResult,
  SwarmError,
} from '../../src/index.js';
import { call, collect, lastToolResult, queueModel } from '../support/script.js';
import { until } from '../support/wait.js';
import { refundSwarm } from '../support/approval-swarms.js';

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});

const lead = defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toSwarm('refunds')] });

const childScript = () => ({
  refunds: [call('refund', { order: 'B7' }, 'r1'), (req: Parameters<typeof lastToolResult>[0]) => ({ text: `child: ${lastToolResult(req)}` })],
});
const leadScript = () => ({
  lead: [call('handoff_to_refunds', { request: 'refund B7' }, 'h1'), (req: Parameters<typeof lastToolResult>[0]) => ({ text: `lead: ${lastToolResult(req)}` })],
});

const surfaced = (r: SwarmResult): PendingApproval[] => (r.status === 'running' ? (r.pendingApprovals ?? []) : []);

describe('approvals of child swarms', () => {
  it('surface on the root, in one runtime: approved through the root, the child and the root go on', async () => {
    const { ran, child } = refundSwarm();
    const rt = createRuntime({ swarms: [lead, child], model: queueModel({ ...leadScript(), ...childScript() }) });
    runtimes.push(rt);
    const root = rt.forSwarm('lead', 'L1');
    await root.run('Refund B7');
    const [pending] = await until(
      'the child approval at the root',
      async () => surfaced(await root.getResult()),
      (p) => p.length > 0,
    );
    expect(pending).toMatchObject({ tool: 'refund', callId: 'r1', agent: 'refunds', swarmId: 'L1:t1:0', approvalId: expect.stringMatching(/^apr_/) });
    // A forged id is refused at the root as at the child, nothing changed.
    await expect(root.approve('apr_forgedforgedforgedforg')).rejects.toBeInstanceOf(SwarmError);
    expect(ran).toEqual([]);
    await root.approve(pending!.approvalId);
    expect(await root.wait()).toEqual({ status: 'completed', result: 'lead: child: refunded B7' });
    expect(ran).toEqual(['B7']);
    // The root's stream relayed the child's pause as input-required, with the approvals as data.
    const events = await collect(root.events());
    const relayed = events.find((e) => e.kind === 'status-update' && e.metadata.type === 'child-swarm' && e.metadata.lifecycle === 'paused');
    expect(relayed).toMatchObject({
      status: { state: 'input-required', message: { parts: [{ kind: 'text' }, { kind: 'data', data: { pendingApprovals: [pending] } }] } },
    });
    // Both replay with no call: the root from its journal, the child from its own.
    expect(await collect(rt.replay('L1'))).toEqual(events);
    expect(await collect(rt.replay('L1:t1:0'))).toEqual(await collect(rt.forSwarm('refunds', 'L1:t1:0').events()));
    expect(ran).toEqual(['B7']);
  });

  it('surface on the root when the child runs on another runtime: rejected through the root over the transport', async () => {
    const bus = new LocalBus();
    const store = memoryStore();
    const hosting = { deadlineMs: 400, heartbeatMs: 50, heartbeatTimeoutMs: 300 };
    const { ran, child } = refundSwarm();
    const worker = createRuntime({ swarms: [child], model: queueModel(childScript()), store, transport: localTransport(bus), hosting });
    runtimes.push(worker);
    await worker.start();
    const home = createRuntime({ swarms: [lead], model: queueModel(leadScript()), store, transport: localTransport(bus), hosting });
    runtimes.push(home);
    await home.start();
    const root = home.forSwarm(lead, 'L2');
    await root.run('Refund B7');
    const [pending] = await until(
      'the child approval at the root',
      async () => surfaced(await root.getResult()),
      (p) => p.length > 0,
    );
    expect(pending).toMatchObject({ tool: 'refund', swarmId: 'L2:t1:0' });
    await root.reject(pending!.approvalId, 'needs a receipt');
    expect(await root.wait()).toEqual({ status: 'completed', result: 'lead: child: The call was rejected by a human: needs a receipt' });
    expect(ran).toEqual([]);
  });
});
