/**
 * `client.events({ since: 'latest' })`: only what a swarm does from now on, live here or driven
 * by another runtime on the same store; an unknown swarm is refused.
 */
import { describe, expect, it } from 'vitest';
import type { SwarmEvent } from '../../machines/events.js';
import { createRuntime, type Runtime, type SwarmError } from '../../src/index.js';
import { answerModel, dinner } from '../support/answer-swarms.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-events-latest-');

async function collect(events: AsyncIterable<SwarmEvent>): Promise<SwarmEvent[]> {
  const seen: SwarmEvent[] = [];
  for await (const e of events) seen.push(e);
  return seen;
}

/** The highest seq `runtime` has emitted for each swarm so far. */
function lastSeqs(runtime: Runtime): Map<string, number> {
  const last = new Map<string, number>();
  runtime.subscribe((e) => last.set(e.swarmId, Math.max(last.get(e.swarmId) ?? 0, e.seq)));
  return last;
}

describe("events({ since: 'latest' })", () => {
  it('follows a paused swarm from its last event: the resume and the end, nothing before', async () => {
    const runtime = createRuntime({ swarms: [dinner], model: answerModel().model });
    try {
      const last = lastSeqs(runtime);
      const swarm = runtime.forSwarm(dinner, 'l1');
      await swarm.run('plan');
      expect((await swarm.wait()).status).toBe('paused');
      const pausedAt = last.get('l1')!;
      expect(pausedAt).toBeGreaterThan(1);
      const following = collect(swarm.events({ since: 'latest' }));
      await swarm.resume({ guests: 2 });
      const after = await following;
      expect(after[0]!.seq).toBe(pausedAt + 1);
      expect(after.map((e) => e.seq)).toEqual(after.map((_, i) => pausedAt + 1 + i));
      expect(after.at(-1)).toMatchObject({ kind: 'status-update', final: true });
      // An ended swarm has nothing after its last event: the reader ends at once.
      expect(await collect(swarm.events({ since: 'latest' }))).toEqual([]);
      await expect(collect(runtime.forSwarm(dinner, 'nobody').events({ since: 'latest' }))).rejects.toMatchObject({
        code: 'unknown-swarm',
      } satisfies Partial<SwarmError>);
    } finally {
      await runtime.close();
    }
  });

  it('follows a swarm another runtime drives on the same file', async () => {
    const reader = file.runtime({ swarms: [dinner], model: answerModel().model, store: file.open() });
    const driver = file.runtime({ swarms: [dinner], model: answerModel().model, store: file.open() });
    const last = lastSeqs(driver);
    const driven = driver.forSwarm(dinner, 'l2');
    await driven.run('plan');
    expect((await driven.wait()).status).toBe('paused');
    const pausedAt = last.get('l2')!;
    const following = collect(reader.forSwarm(dinner, 'l2').events({ since: 'latest' }));
    await driven.resume({ guests: 3 });
    const after = await following;
    expect(after[0]!.seq).toBe(pausedAt + 1);
    expect(after.at(-1)).toMatchObject({ kind: 'status-update', final: true });
  });
});
