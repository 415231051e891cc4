/**
 * `createRuntime({ logger })`: what an operator reads. A run logs its start and end with its
 * swarm and definition ids (model calls at debug); a failing commit logs its retry; a throwing
 * listener and a throwing logger are logged or ignored, never failing a swarm; another runtime
 * adopting a swarm logs it. `jsonLogger` writes JSON lines at its level and above.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, jsonLogger, type Logger, memoryStore, type RuntimeOptions, scriptedModel, tool } from '../../src/index.js';
import { newCounts, runW1, W1_AGENTS, W1_MODEL_CALLS, W1_SWARM_ID, w1Respond } from '../../bench/w1.js';
import { recordingStore } from '../support/recording-store.js';
import { until } from '../support/wait.js';

/** A W1 runtime (bench/w1.ts's swarm and script) with more options: a logger, a store. */
function w1Runtime(options: Partial<RuntimeOptions>) {
  const counts = newCounts();
  const agents = W1_AGENTS.map((id) => defineAgent({ id, instructions: 'Answer.' }));
  const swarm = defineSwarm({ id: W1_SWARM_ID, instructions: 'Plan.', handoffs: agents.map((a) => handoff.toAgent(a)) });
  return createRuntime({ swarms: [swarm], agents, model: scriptedModel((req) => w1Respond(req, counts)), ...options });
}

interface Line {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg: string;
}

/** A logger keeping every line. */
function recorder(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: Line['level']) => (fields: Record<string, unknown>, msg: string) => void lines.push({ level, fields, msg });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const price = tool({ name: 'price', description: 'a price', parameters: z.object({}), execute: async () => '4 EUR' });
// Calls price every turn: its one turn ends at the limit, and it pauses.
const looper = defineSwarm({ id: 'looper', instructions: 'Loop.', tools: [price], maxTurns: 1 });
const loopModel = scriptedModel((req) => ({ toolCalls: [{ id: `l${req.messages.length}`, name: 'price', arguments: '{}' }] }));

describe('the runtime logger', () => {
  it('logs a run: started and completed at info with its ids, each model call at debug', async () => {
    const { logger, lines } = recorder();
    const runtime = w1Runtime({ logger });
    try {
      const c = runtime.forSwarm(W1_SWARM_ID, 'run-1');
      await c.run('Plan');
      await c.wait();
    } finally {
      await runtime.close();
    }
    expect(lines.filter((l) => l.level !== 'debug')).toEqual([
      { level: 'info', fields: { swarmId: 'run-1', definitionId: W1_SWARM_ID }, msg: 'swarm started' },
      { level: 'info', fields: { swarmId: 'run-1', definitionId: W1_SWARM_ID }, msg: 'swarm completed' },
    ]);
    const calls = lines.filter((l) => l.msg === 'model call');
    expect(calls).toHaveLength(W1_MODEL_CALLS);
    expect(calls.every((l) => l.level === 'debug' && l.fields.swarmId === 'run-1')).toBe(true);
    expect(lines.filter((l) => l.msg === 'handoff').map((l) => l.fields.to)).toEqual([...W1_AGENTS]);
  });

  it('logs a commit retry at warn, and a listener that threw; the swarm completes', async () => {
    const { logger, lines } = recorder();
    // The third commit attempt fails once: it is retried and goes through.
    const rec = recordingStore(memoryStore(), { inject: (n) => (n === 3 ? new Error('disk busy') : undefined) });
    const runtime = w1Runtime({ store: rec.store, logger });
    try {
      runtime.subscribe(() => {
        throw new Error('listener bug');
      });
      const c = runtime.forSwarm(W1_SWARM_ID, 'run-2');
      await c.run('Plan');
      expect(await c.wait()).toMatchObject({ status: 'completed' });
    } finally {
      await runtime.close();
    }
    expect(lines).toContainEqual({
      level: 'warn',
      fields: expect.objectContaining({ swarmId: 'run-2', definitionId: W1_SWARM_ID, attempt: 1, error: expect.stringContaining('disk busy') }),
      msg: 'store commit failed; retrying',
    });
    expect(lines).toContainEqual({
      level: 'warn',
      fields: expect.objectContaining({ swarmId: 'run-2', error: expect.stringContaining('listener bug') }),
      msg: 'an event listener threw; ignored',
    });
  });

  it('never lets a throwing logger fail a swarm', async () => {
    const boom = () => {
      throw new Error('logger down');
    };
    const runtime = w1Runtime({ logger: { debug: boom, info: boom, warn: boom, error: boom } });
    try {
      await runW1(runtime);
    } finally {
      await runtime.close();
    }
  });

  it('logs the adoption of a swarm another runtime left paused', async () => {
    const store = memoryStore();
    const first = createRuntime({ swarms: [looper], model: loopModel, store });
    const c = first.forSwarm(looper, 'left');
    await c.run('Loop');
    await until(
      'the looper pauses',
      async () => (await c.getResult()).status,
      (s) => s === 'paused',
    );
    // Closing releases the lease: the next runtime adopts it at start.
    await first.close();
    const { logger, lines } = recorder();
    const second = createRuntime({ swarms: [looper], model: loopModel, store, logger });
    try {
      await second.start();
      expect(lines).toContainEqual({ level: 'info', fields: expect.objectContaining({ swarmId: 'left', definitionId: 'looper' }), msg: 'swarm adopted' });
    } finally {
      await second.close();
    }
  });

  it('is refused when it is not a logger', () => {
    expect(() => createRuntime({ swarms: [looper], model: loopModel, logger: { info: () => {} } as never })).toThrow(/logger must be a logger/);
  });
});

describe('jsonLogger', () => {
  it('writes one JSON object per line at its level and above, with the child bindings', () => {
    const out: string[] = [];
    const logger = jsonLogger({ level: 'info', write: (line) => out.push(line) });
    logger.debug({ swarmId: 's' }, 'hidden');
    logger.info({ swarmId: 's' }, 'shown');
    logger.child!({ owner: 'o' }).error({ error: new Error('boom') }, 'bad');
    expect(out.every((l) => l.endsWith('\n'))).toBe(true);
    const parsed = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed).toEqual([
      { level: 'info', time: expect.any(Number), msg: 'shown', swarmId: 's' },
      { level: 'error', time: expect.any(Number), msg: 'bad', owner: 'o', error: 'boom' },
    ]);
    expect(() => jsonLogger({ level: 'loud' as never })).toThrow(/log level/);
  });
});
