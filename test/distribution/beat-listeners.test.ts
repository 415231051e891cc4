import { describe, expect, it } from 'vitest';
import { BeatListeners } from '../../src/distribution/beats.js';
import { LocalBus, localTransport } from '../../src/transport/local.js';

const macrotask = () => new Promise((resolve) => setImmediate(resolve));

describe('heartbeat subscriptions shared by swarm', () => {
  it('keeps one subscription while a request hands over to its keep-alive, and ends it after the last listener', async () => {
    const bus = new LocalBus();
    const transport = localTransport(bus);
    const beats = new BeatListeners();
    const heard: string[] = [];
    const stopRequest = beats.listen(transport, 'xswarm.beat.s1', () => heard.push('request'));
    expect(bus.receivers('xswarm.beat.s1')).toHaveLength(1);
    transport.publish('xswarm.beat.s1', '');
    await macrotask();
    // The request is answered; the keep-alive starts listening in the same turn.
    stopRequest();
    const stopKeepAlive = beats.listen(transport, 'xswarm.beat.s1', () => heard.push('keep-alive'));
    await macrotask();
    expect(bus.receivers('xswarm.beat.s1')).toHaveLength(1);
    transport.publish('xswarm.beat.s1', '');
    await macrotask();
    expect(heard).toEqual(['request', 'keep-alive']);
    stopKeepAlive();
    stopKeepAlive();
    expect(bus.receivers('xswarm.beat.s1')).toHaveLength(1);
    await macrotask();
    expect(bus.receivers('xswarm.beat.s1')).toEqual([]);
    // A later call on the same swarm subscribes again.
    const again = beats.listen(transport, 'xswarm.beat.s1', () => heard.push('again'));
    transport.publish('xswarm.beat.s1', '');
    await macrotask();
    expect(heard.at(-1)).toBe('again');
    again();
    await macrotask();
    expect(bus.receivers('xswarm.beat.s1')).toEqual([]);
  });
});
