/**
 * Tool approval gates (issue 30, item 5): a tool with `needsApproval` pauses its swarm with
 * `APPROVAL_NEEDED` before the call runs, one pending approval per call; `approve` runs it,
 * `reject` gives the model the reason; `always` approves the tool for the rest of the run; ids
 * not pending now (forged, stale, of another swarm or run) are refused with nothing changed;
 * approvals survive a restart; an agent's surface on its swarm; replays make no calls.
 */
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { DefinitionError, defineAgent, defineSwarm, handoff, type PendingApproval, type SwarmResult, SwarmError, tool } from '../../src/index.js';
import { call, calls, collect, lastToolResult, queueModel } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-approvals-');
const runtime = file.runtime;

/** A refund tool gated above 100, recording each run; and a lookup tool nobody gates. */
function tools() {
  const ran: string[] = [];
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order',
    parameters: z.object({ order: z.string(), amount: z.number() }),
    execute: ({ order, amount }) => (ran.push(`refund ${order}`), `refunded ${amount} on ${order}`),
    needsApproval: ({ amount }) => amount > 100,
  });
  const wipe = tool({
    name: 'wipe',
    description: 'Wipes a disk',
    parameters: z.object({ disk: z.string() }),
    execute: ({ disk }) => (ran.push(`wipe ${disk}`), `wiped ${disk}`),
    needsApproval: true,
  });
  const lookup = tool({
    name: 'lookup',
    description: 'Looks an order up',
    parameters: z.object({ order: z.string() }),
    execute: ({ order }) => (ran.push(`lookup ${order}`), `order ${order}: 250 EUR`),
  });
  return { ran, refund, wipe, lookup };
}

const support = (t: ReturnType<typeof tools>, extra: Partial<Parameters<typeof defineSwarm>[0]> = {}) =>
  defineSwarm({ id: 'support', instructions: 'Help.', tools: [t.refund, t.wipe, t.lookup], maxTurns: 6, ...extra });

/** The pending approvals of a paused result. */
function pendingOf(r: SwarmResult): PendingApproval[] {
  if (r.status !== 'paused') throw new Error(`expected a pause, got ${r.status}`);
  return r.reason.pendingApprovals ?? [];
}

async function refusal(p: Promise<unknown>): Promise<SwarmError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(SwarmError);
  return e as SwarmError;
}

describe('tool approval gates', () => {
  it("a tool-call guardrail's pause that held a gated call asks for its approval once resumed; nothing runs before", async () => {
    const t = tools();
    const model = queueModel({ support: [call('refund', { order: 'A1', amount: 250 }, 'c1'), (req) => ({ text: `done: ${lastToolResult(req)}` })] });
    const review = { name: 'review-refunds', onReject: 'pause' as const, check: (c: { name: string }) => c.name !== 'refund' || 'a human reviews refunds' };
    const rt = runtime({ swarms: [support(t, { guardrails: { toolCall: [review] } })], model });
    const client = rt.forSwarm('support', 'g1');
    await client.run('Refund A1');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'GUARDRAIL' } });
    await client.resume('Reviewed.');
    // Released by the guardrail's pause, the call still needs its approval.
    const asked = await client.wait();
    expect(asked).toMatchObject({ status: 'paused', reason: { type: 'APPROVAL_NEEDED' } });
    expect(t.ran).toEqual([]);
    await client.approve(pendingOf(asked)[0]!.approvalId);
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done: refunded 250 on A1' });
    expect(t.ran).toEqual(['refund A1']);
    expect(await collect(rt.replay('g1'))).toEqual(await collect(client.events()));
  });

  it('pauses before a gated call runs; approve runs it and the swarm goes on by itself; replay makes no calls', async () => {
    const t = tools();
    const model = queueModel({ support: [call('refund', { order: 'A1', amount: 250 }, 'c1'), (req) => ({ text: `done: ${lastToolResult(req)}` })] });
    const rt = runtime({ swarms: [support(t)], model });
    const client = rt.forSwarm('support', 's1');
    await client.run('Refund A1');
    const paused = await client.wait();
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'APPROVAL_NEEDED', pauseId: 'approval:t1:1' } });
    const [pending] = pendingOf(paused);
    expect(pending).toEqual({
      approvalId: expect.stringMatching(/^apr_[\w-]{22}$/),
      tool: 'refund',
      arguments: '{"order":"A1","amount":250}',
      callId: 'c1',
      agent: 'support',
    });
    expect(paused.status === 'paused' && paused.reason.pendingApprovalId).toBe(pending!.approvalId);
    expect(t.ran).toEqual([]);

    await client.approve(pending!.approvalId);
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done: refunded 250 on A1' });
    expect(t.ran).toEqual(['refund A1']);

    const events = await collect(client.events());
    expect(events).toContainEqual(
      expect.objectContaining({ metadata: { type: 'approval', approvalId: pending!.approvalId, decision: 'approved', at: expect.any(Number) } }),
    );
    const requestsBefore = model.requests.length;
    expect(await collect(rt.replay('s1'))).toEqual(events);
    expect(model.requests.length).toBe(requestsBefore);
    expect(t.ran).toEqual(['refund A1']);
  });

  it('reject: the call never runs and the model reads the reason as its error result', async () => {
    const t = tools();
    const model = queueModel({ support: [call('wipe', { disk: 'sda' }, 'c1'), (req) => ({ text: `ok: ${lastToolResult(req)}` })] });
    const rt = runtime({ swarms: [support(t)], model });
    const client = rt.forSwarm('support', 's2');
    await client.run('Wipe sda');
    const [pending] = pendingOf(await client.wait());
    await client.reject(pending!.approvalId, 'not on a Friday');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'ok: The call was rejected by a human: not on a Friday' });
    expect(t.ran).toEqual([]);
    expect(await collect(rt.replay('s2'))).toEqual(await collect(client.events()));
  });

  it('a needsApproval function decides per call: small refunds run at once', async () => {
    const t = tools();
    const model = queueModel({ support: [call('refund', { order: 'A2', amount: 20 }), { text: 'done' }] });
    const rt = runtime({ swarms: [support(t)], model });
    const client = rt.forSwarm('support', 's3');
    await client.run('Refund A2');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
    expect(t.ran).toEqual(['refund A2']);
  });

  it('always: the tool needs no approval for the rest of the run', async () => {
    const t = tools();
    const model = queueModel({
      support: [call('wipe', { disk: 'sda' }), call('wipe', { disk: 'sdb' }), { text: 'done' }],
    });
    const rt = runtime({ swarms: [support(t)], model });
    const client = rt.forSwarm('support', 's4');
    await client.run('Wipe both');
    const [pending] = pendingOf(await client.wait());
    await client.approve(pending!.approvalId, { always: true });
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
    expect(t.ran).toEqual(['wipe sda', 'wipe sdb']);
    const events = await collect(client.events());
    expect(events.filter((e) => e.kind === 'status-update' && e.metadata.type === 'paused')).toHaveLength(1);
    expect(await collect(rt.replay('s4'))).toEqual(events);
  });

  it('parallel gated calls pause once with one approval each; an ungated call of the round runs meanwhile', async () => {
    const t = tools();
    const model = queueModel({
      support: [
        calls(['wipe', { disk: 'sda' }, 'w1'], ['lookup', { order: 'A3' }, 'l1'], ['refund', { order: 'A3', amount: 500 }, 'r1']),
        (req) => ({
          text: req.messages
            .filter((m) => m.role === 'tool')
            .map((m) => m.content)
            .join(' | '),
        }),
      ],
    });
    const rt = runtime({ swarms: [support(t)], model });
    const client = rt.forSwarm('support', 's5');
    await client.run('Do it all');
    const pending = pendingOf(await client.wait());
    expect(pending.map((p) => [p.tool, p.callId])).toEqual([
      ['wipe', 'w1'],
      ['refund', 'r1'],
    ]);
    expect(new Set(pending.map((p) => p.approvalId)).size).toBe(2);
    await expect.poll(() => t.ran).toEqual(['lookup A3']);

    await client.approve(pending[1]!.approvalId);
    const still = await client.getResult();
    expect(pendingOf(still).map((p) => p.callId)).toEqual(['w1']);
    expect(still).toMatchObject({ reason: { pauseId: 'approval:t1:1', pendingApprovalId: pending[0]!.approvalId } });
    await client.reject(pending[0]!.approvalId, 'no');
    expect(await client.wait()).toEqual({
      status: 'completed',
      result: 'The call was rejected by a human: no | order A3: 250 EUR | refunded 500 on A3',
    });
    expect(t.ran.sort()).toEqual(['lookup A3', 'refund A3']);
    expect(await collect(rt.replay('s5'))).toEqual(await collect(client.events()));
  });

  it('fails closed: forged, stale, foreign and malformed ids are refused with nothing changed, and so is a resume', async () => {
    const t = tools();
    const model = queueModel({
      support: [call('wipe', { disk: 'sda' }), { text: 'done' }],
      other: [call('wipe', { disk: 'sdz' }), { text: 'done' }],
    });
    const other = defineSwarm({ id: 'other', instructions: 'Other.', tools: [t.wipe] });
    const rt = runtime({ swarms: [support(t), other], model });
    const client = rt.forSwarm('support', 's6');
    const foreign = rt.forSwarm('other', 'o1');
    await client.run('Wipe');
    await foreign.run('Wipe');
    const [mine] = pendingOf(await client.wait());
    const [theirs] = pendingOf(await foreign.wait());
    const count = async () => (await readAll(client)).length;
    const snapshot = await count();

    // Forged (a guess), foreign (another swarm's), malformed: refused, nothing recorded.
    expect(await refusal(client.approve('apr_AAAAAAAAAAAAAAAAAAAAAA'))).toMatchObject({
      code: 'wrong-state',
      message: expect.stringContaining('is not pending on swarm "s6"'),
    });
    expect(await refusal(client.approve(theirs!.approvalId))).toMatchObject({ code: 'wrong-state' });
    expect(await refusal(client.reject(theirs!.approvalId, 'no'))).toMatchObject({ code: 'wrong-state' });
    expect(await refusal(client.approve(''))).toMatchObject({ code: 'invalid-input' });
    expect(await refusal(client.reject(mine!.approvalId, ' '))).toMatchObject({ code: 'invalid-input' });
    // A resume does not answer approvals.
    expect(await refusal(client.resume('go'))).toMatchObject({ code: 'wrong-state', message: expect.stringContaining('waits for approvals') });
    expect(await count()).toBe(snapshot);
    expect(t.ran).toEqual([]);

    await client.approve(mine!.approvalId);
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
    // Stale: answered already.
    expect(await refusal(client.approve(mine!.approvalId))).toMatchObject({ code: 'wrong-state' });
    expect(t.ran).toEqual(['wipe sda']);
    expect(await foreign.getResult()).toMatchObject({ status: 'paused' });
  });

  it('survives a restart: the pending approval is stored and answered in the next runtime; a forged id is refused there too', async () => {
    const t = tools();
    const script = () => queueModel({ support: [call('wipe', { disk: 'sda' }, 'c1'), (req) => ({ text: `done: ${lastToolResult(req)}` })] });
    const a = runtime({ swarms: [support(t)], model: script(), store: file.open() });
    await a.forSwarm('support', 'r1').run('Wipe');
    const [pending] = pendingOf(await a.forSwarm('support', 'r1').wait());
    await a.close();

    // The next runtime's model answers only what is left: the call was made before the restart.
    const model = queueModel({ support: [(req) => ({ text: `done: ${lastToolResult(req)}` })] });
    const b = runtime({ swarms: [support(t)], model, store: file.open() });
    await b.start();
    const client = b.forSwarm('support', 'r1');
    expect(pendingOf(await client.getResult())).toEqual([pending]);
    expect(await refusal(client.approve('apr_forgedforgedforgedforg'))).toMatchObject({ code: 'wrong-state' });
    await client.approve(pending!.approvalId);
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done: wiped sda' });
    expect(t.ran).toEqual(['wipe sda']);
    expect(await collect(b.replay('r1'))).toEqual(await collect(client.events()));
  });

  it("an agent's gated call surfaces on its swarm: answered there, the agent goes on", async () => {
    const t = tools();
    const clerk = defineAgent({ id: 'clerk', instructions: 'Do refunds.', tools: [t.refund, t.lookup] });
    const desk = defineSwarm({ id: 'desk', instructions: 'Delegate.', handoffs: [handoff.toAgent(clerk)] });
    const model = queueModel({
      desk: [call('handoff_to_clerk', { request: 'refund A4' }, 'h1'), (req) => ({ text: `desk: ${lastToolResult(req)}` })],
      clerk: [calls(['lookup', { order: 'A4' }, 'k1'], ['refund', { order: 'A4', amount: 900 }, 'k2']), (req) => ({ text: `clerk: ${lastToolResult(req)}` })],
    });
    const rt = runtime({ swarms: [desk], agents: [clerk], model });
    const client = rt.forSwarm('desk', 'd1');
    await client.run('Refund A4');
    const paused = await client.wait();
    const [pending] = pendingOf(paused);
    expect(pending).toMatchObject({ tool: 'refund', callId: 'k2', agent: 'clerk', arguments: '{"order":"A4","amount":900}' });
    await expect.poll(() => t.ran).toEqual(['lookup A4']);
    await client.approve(pending!.approvalId);
    expect(await client.wait()).toEqual({ status: 'completed', result: 'desk: clerk: refunded 900 on A4' });
    expect(t.ran).toEqual(['lookup A4', 'refund A4']);
    expect(await collect(rt.replay('d1'))).toEqual(await collect(client.events()));
  });

  it("always settles every pending call of the tool, the orchestrator's and an agent's", async () => {
    const t = tools();
    const clerk = defineAgent({ id: 'clerk', instructions: 'Do refunds.', tools: [t.refund] });
    const desk = defineSwarm({ id: 'desk', instructions: 'Delegate.', tools: [t.refund], handoffs: [handoff.toAgent(clerk)] });
    const model = queueModel({
      desk: [calls(['handoff_to_clerk', { request: 'refund K5' }, 'h1'], ['refund', { order: 'D5', amount: 500 }, 'd1']), (req) => ({ text: lastToolResult(req) })],
      clerk: [call('refund', { order: 'K5', amount: 900 }, 'k1'), (req) => ({ text: `clerk: ${lastToolResult(req)}` })],
    });
    const rt = runtime({ swarms: [desk], agents: [clerk], model });
    const client = rt.forSwarm('desk', 'd2');
    await client.run('Refund both');
    const both = await vi.waitFor(async () => {
      const p = pendingOf(await client.getResult());
      expect(p).toHaveLength(2);
      return p;
    });
    expect(both.map((p) => p.agent)).toEqual(['desk', 'clerk']);
    await client.approve(both[0]!.approvalId, { always: true });
    expect(await client.wait()).toMatchObject({ status: 'completed' });
    expect(t.ran.sort()).toEqual(['refund D5', 'refund K5']);
    expect(await collect(rt.replay('d2'))).toEqual(await collect(client.events()));
  });

  it("an approved call's timeoutMs counts from its approval, not from the response that asked for it", async () => {
    const slowish = tool({
      name: 'slowish',
      description: 'Takes 50 ms',
      parameters: z.object({}),
      execute: () => new Promise((resolve) => setTimeout(() => resolve('in time'), 50)),
      timeoutMs: 300,
      needsApproval: true,
    });
    const model = queueModel({ timed: [call('slowish', {}, 'c1'), (req) => ({ text: lastToolResult(req) })] });
    const rt = runtime({ swarms: [defineSwarm({ id: 'timed', instructions: 'Go.', tools: [slowish] })], model });
    const client = rt.forSwarm('timed', 't1');
    await client.run('Go');
    const [pending] = pendingOf(await client.wait());
    // Longer than the tool's timeoutMs passes before the human answers.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await client.approve(pending!.approvalId);
    expect(await client.wait()).toEqual({ status: 'completed', result: 'in time' });
  });

  it('refuses a needsApproval that is neither a boolean nor a function', () => {
    expect(() => tool({ name: 'x', description: 'x', parameters: z.object({}), execute: () => 1, needsApproval: 'yes' as never })).toThrow(DefinitionError);
  });
});

/** Every event of a swarm so far (without waiting for its end). */
async function readAll(client: { events(o?: { since?: number; signal?: AbortSignal }): AsyncIterable<unknown> }): Promise<unknown[]> {
  const out: unknown[] = [];
  const ac = new AbortController();
  const it = client.events({ since: 0, signal: ac.signal })[Symbol.asyncIterator]();
  for (;;) {
    const next = await Promise.race([it.next(), new Promise<'idle'>((r) => setTimeout(() => r('idle'), 100))]);
    if (next === 'idle' || next.done) break;
    out.push(next.value);
  }
  ac.abort();
  await it.return?.();
  return out;
}
