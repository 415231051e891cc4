/**
 * Stall detection (issue 30, item 3, "struggling"): off by default; with `stall`, the same tool
 * call repeated with the same arguments, or turns without a new tool result, pause the swarm
 * with a `LIMIT` reason whose trip says `struggling`; resume goes on, stop ends it; replayed
 * with zero calls; across a restart.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DefinitionError, defineSwarm, type ModelRequest, scriptedModel, type StallRule, tool } from '../../src/index.js';
import { call, collect } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-stall-');
const runtime = file.runtime;

function search() {
  const runs: string[] = [];
  const t = tool({
    name: 'search',
    description: 'Searches',
    parameters: z.object({ q: z.string() }),
    execute: ({ q }) => {
      runs.push(q);
      return 'no results';
    },
  });
  return { tool: t, runs };
}

/**
 * A model stuck on one search until a human says "try harder", then it completes. With
 * `vary`, each search has new arguments (but the results stay the same).
 */
function stuck(vary = false) {
  const requests: ModelRequest[] = [];
  const model = scriptedModel((req) => {
    requests.push(req);
    if (req.messages.some((m) => m.role === 'user' && m.content === 'try harder')) return { text: 'gave a partial answer' };
    const n = req.messages.filter((m) => m.role === 'tool').length;
    return call('search', { q: vary ? `cats ${n}` : 'cats' }, `s${n + 1}`);
  });
  return { model, requests };
}

const researcher = (stall: StallRule | undefined, t = search().tool, maxTurns = 10) =>
  defineSwarm({ id: 'research', instructions: 'Research.', tools: [t], maxTurns, ...(stall ? { stall } : {}) });

describe('stall detection', () => {
  it('off by default: a repeating swarm runs to its turn limit', async () => {
    const { tool: t, runs } = search();
    const rt = runtime({ swarms: [researcher(undefined, t, 4)], model: stuck().model });
    const client = rt.forSwarm('research', 'o1');
    await client.run('Find cats');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { limit: 'maxTurns' } } });
    expect(runs).toHaveLength(4);
  });

  it('repeats: the same call with the same arguments n times pauses it as struggling; resume goes on; replay makes zero calls', async () => {
    const { tool: t, runs } = search();
    const { model, requests } = stuck();
    const rt = runtime({ swarms: [researcher({ repeats: 3 }, t)], model });
    const client = rt.forSwarm('research', 'r1');
    await client.run('Find cats');
    expect(await client.wait()).toEqual({
      status: 'paused',
      reason: {
        type: 'LIMIT',
        message: 'The swarm is struggling: the same search call 3 times. Resume with guidance to go on, or stop it',
        limit: { limit: 'struggling', rule: 'repeats', max: 3, spent: 3, left: 0, toolName: 'search' },
        pauseId: 'limit:t3:1',
      },
      currentTurn: 3,
      maxTurns: 10,
    });
    expect(runs).toHaveLength(3);
    await client.resume('try harder');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'gave a partial answer' });

    const calls = requests.length;
    expect(await collect(rt.replay('r1'))).toEqual(await collect(client.events()));
    expect(requests).toHaveLength(calls);
    expect(runs).toHaveLength(3);
  });

  it('turnsWithoutNewResult: n turns whose results are nothing new pause it; stop ends it', async () => {
    const { tool: t, runs } = search();
    const rt = runtime({ swarms: [researcher({ turnsWithoutNewResult: 2 }, t)], model: stuck(true).model });
    const client = rt.forSwarm('research', 'w1');
    await client.run('Find cats');
    // The first "no results" is new; the next two turns bring nothing new.
    expect(await client.wait()).toMatchObject({
      status: 'paused',
      reason: { type: 'LIMIT', limit: { limit: 'struggling', rule: 'turnsWithoutNewResult', max: 2, spent: 2 } },
      currentTurn: 3,
    });
    expect(runs).toEqual(['cats 0', 'cats 1', 'cats 2']);
    await client.stop('enough');
    expect(await client.wait()).toEqual({ status: 'stopped', reason: 'enough' });
  });

  it('survives a restart paused as struggling, and per run (withParameters) and for ad-hoc swarms', async () => {
    const { tool: t } = search();
    const a = runtime({ swarms: [researcher(undefined, t)], model: stuck().model, store: file.open() });
    await a
      .forSwarm('research', 'k1')
      .withParameters({ stall: { repeats: 2 } })
      .run('Find cats');
    expect(await a.forSwarm('research', 'k1').wait()).toMatchObject({ status: 'paused', reason: { limit: { limit: 'struggling', spent: 2 } } });
    await a.adhoc('k2').run({ userMessage: 'Find cats', instructions: 'Research.', tools: [t], stall: { repeats: 2 } });
    expect(await a.adhoc('k2').wait()).toMatchObject({ status: 'paused', reason: { limit: { limit: 'struggling' } } });
    await a.close();

    const { model, requests } = stuck();
    const b = runtime({ swarms: [researcher(undefined, t)], tools: [t], model, store: file.open() });
    await b.start();
    const client = b.forSwarm('research', 'k1');
    expect(await client.getResult()).toMatchObject({ status: 'paused', reason: { limit: { limit: 'struggling', rule: 'repeats' } } });
    await client.resume('try harder');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'gave a partial answer' });
    expect(requests).toHaveLength(1);
  });

  it('a bad stall rule is a clear definition error', () => {
    expect(() => researcher({ repeats: 1 })).toThrow(DefinitionError);
    expect(() => researcher({ turnsWithoutNewResult: 0 })).toThrow(/stall must be/);
    expect(() => researcher({})).toThrow(/at least one set/);
  });
});
