/**
 * Commands on a swarm's WebSocket (`/events?swarmId=…`): a subscriber answers the pauses it sees
 * where it sees them — a typed answer to a pause with a response schema, approvals of gated
 * calls, a raised limit — with the bodies REST takes, each answered by a `command-result` frame;
 * a malformed frame, a wrong-shape answer or a stale id is refused with REST's status and
 * nothing changes.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, type SwarmEvent } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { answerModel, dinner, notes } from '../support/answer-swarms.js';
import { queueModel } from '../support/script.js';
import { deploy, deployScript } from '../support/approval-swarms.js';
import { type Frame, isEvent, servedPerTest, Subscriber } from '../support/server-clients.js';

const served = servedPerTest();

type Control = Exclude<Frame, SwarmEvent>;
const results = (frames: readonly Frame[]) => frames.filter((f): f is Control => !isEvent(f) && f.type === 'command-result');
const ofKind = (frames: readonly Frame[], type: string) => frames.filter((f) => isEvent(f) && f.kind === 'status-update' && f.metadata.type === type);

/** Sends a command frame and waits for its result. */
async function command(sub: Subscriber, frame: Record<string, unknown>): Promise<Control> {
  const before = results(sub.frames).length;
  sub.ws.send(JSON.stringify({ type: 'command', ...frame }));
  await sub.waitFor((f) => results(f).length > before);
  return results(sub.frames).at(-1)!;
}

describe('commands on a swarm’s WebSocket', () => {
  it('answers a typed pause: malformed frames, a wrong shape and a stale pause id are refused; the right answer resumes', async () => {
    const { model } = answerModel();
    served.runtime = createRuntime({ swarms: [dinner, notes], model });
    served.server = await serve(served.runtime);
    const client = served.runtime.forSwarm(dinner, 'd1');
    await client.run('dinner');
    const paused = await client.wait();
    expect(paused).toMatchObject({ status: 'paused', reason: { pauseId: 'ask1', responseSchema: expect.any(Object) } });
    const sub = await Subscriber.open(`${served.server.url.replace('http', 'ws')}/events?swarmId=d1`);
    await sub.waitFor((f) => ofKind(f, 'paused').length === 1);

    sub.ws.send('not json');
    await sub.waitFor((f) => results(f).length === 1);
    expect(results(sub.frames)[0]).toMatchObject({ ok: false, status: 400, error: expect.stringContaining('JSON') });
    expect(await command(sub, { command: 'teleport', id: 'x' })).toMatchObject({ id: 'x', ok: false, status: 400, error: expect.stringContaining('Unknown command') });
    expect(await command(sub, { command: 'resume', id: 1, answer: { guests: 'many' }, pauseId: 'ask1' })).toMatchObject({ id: 1, ok: false, status: 400 });
    expect(await command(sub, { command: 'resume', id: 2, answer: { guests: 4 }, pauseId: 'stale' })).toMatchObject({ id: 2, ok: false, status: 409 });
    // Nothing changed: still paused at the same pause, no event since.
    expect(await client.getResult()).toEqual(paused);
    expect(ofKind(sub.frames, 'resumed')).toHaveLength(0);

    const ok = await command(sub, { command: 'resume', id: 3, answer: { guests: 4, vegan: true }, pauseId: 'ask1' });
    expect(ok).toMatchObject({ id: 3, ok: true, result: { status: expect.stringMatching(/running|completed/) } });
    expect(await client.wait()).toEqual({ status: 'completed', result: 'dinner for {"guests":4,"vegan":true}' });
    expect(await sub.closed).toMatchObject({ code: 1000 });
  });

  it('approves and rejects gated calls, and extends a limit pause', async () => {
    const { model: notesModel } = answerModel();
    const model = queueModel({ deploy: deployScript() });
    served.runtime = createRuntime({
      swarms: [deploy, notes],
      model: { name: 'both', call: (req) => (req.agentId === 'deploy' ? model.call(req) : notesModel.call(req)) },
    });
    served.server = await serve(served.runtime);
    const ws = served.server.url.replace('http', 'ws');

    const client = served.runtime.forSwarm(deploy, 'p1');
    await client.run('ship both');
    const paused = await client.wait();
    const pending = paused.status === 'paused' ? (paused.reason.pendingApprovals ?? []) : [];
    expect(pending.map((p) => p.tool)).toEqual(['ship', 'ship']);
    const sub = await Subscriber.open(`${ws}/events?swarmId=p1`);
    expect(await command(sub, { command: 'approve', approvalId: 'apr_forged' })).toMatchObject({ ok: false, status: 409 });
    expect(await command(sub, { command: 'reject', approvalId: pending[1]!.approvalId })).toMatchObject({
      ok: false,
      status: 400,
      error: expect.stringContaining('reason'),
    });
    expect(await command(sub, { command: 'approve', approvalId: pending[0]!.approvalId })).toMatchObject({ ok: true, result: { status: 'paused' } });
    expect(await command(sub, { command: 'reject', approvalId: pending[1]!.approvalId, reason: 'not b' })).toMatchObject({ ok: true });
    expect(await client.wait()).toEqual({ status: 'completed', result: 'shipped a | The call was rejected by a human: not b' });

    const limited = served.runtime.forSwarm(notes, 'n1');
    await limited.run('notes');
    expect(await limited.wait()).toMatchObject({ status: 'paused', reason: { type: 'LIMIT' } });
    const sub2 = await Subscriber.open(`${ws}/events?swarmId=n1`);
    expect(await command(sub2, { command: 'extend', maxTurns: 0 })).toMatchObject({ ok: false, status: 400 });
    expect(await command(sub2, { command: 'extend', maxTurns: 3 })).toMatchObject({ ok: true, result: { status: 'paused', maxTurns: 3 } });
    expect(await command(sub2, { command: 'resume', message: 'conclude' })).toMatchObject({ ok: true });
    expect(await limited.wait()).toMatchObject({ status: 'completed' });
  });
});
