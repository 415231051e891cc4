/**
 * The inspector page's other pure parts, in Node: the virtual scroller's window math, the
 * list's status and filter, the board's columns, the chart's label points, the token's
 * subprotocol, the timeline's event lines; a fold of 100,000 events staying quick; and the
 * page's files keeping the rules the browser enforces (no inline script or style under the CSP,
 * every `data-testid` of the DOM contract in the skeleton).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { atBottom, visibleRange } from '../../../inspector/virtual-scroll.js';
import { matches, statusAfter } from '../../../inspector/list.js';
import { columns } from '../../../inspector/team.js';
import { labelPosition, midpoint } from '../../../inspector/chart.js';
import { base64url, subprotocols } from '../../../inspector/api.js';
import { clip, count, describe as describeEvent, duration } from '../../../inspector/format.js';
import { Folder, fold } from '../../../inspector/fold.js';
import { stepAt } from '../../../inspector/playback.js';
import { REPO_ROOT } from '../../support/repo-root.js';

const dir = join(REPO_ROOT, 'inspector');

describe('visibleRange', () => {
  const base = { viewportHeight: 220, rowHeight: 22, count: 100_000, overscan: 0 };

  it('renders only the rows in view, plus the overscan on each side', () => {
    expect(visibleRange({ ...base, scrollTop: 0 })).toEqual({ start: 0, end: 10, totalHeight: 2_200_000 });
    expect(visibleRange({ ...base, scrollTop: 22 * 500 })).toEqual({ start: 500, end: 510, totalHeight: 2_200_000 });
    // Half a row scrolled: both partly visible rows are drawn.
    expect(visibleRange({ ...base, scrollTop: 22 * 500 + 11 })).toMatchObject({ start: 500, end: 511 });
    expect(visibleRange({ ...base, scrollTop: 22 * 500, overscan: 8 })).toMatchObject({ start: 492, end: 518 });
  });

  it('clamps at both ends and to what exists', () => {
    expect(visibleRange({ ...base, scrollTop: -50, overscan: 8 })).toMatchObject({ start: 0, end: 18 });
    expect(visibleRange({ ...base, scrollTop: 10 ** 9, overscan: 8 })).toMatchObject({ start: 99_982, end: 100_000 });
    expect(visibleRange({ ...base, count: 3, scrollTop: 0 })).toEqual({ start: 0, end: 3, totalHeight: 66 });
    expect(visibleRange({ ...base, count: 0, scrollTop: 0 })).toEqual({ start: 0, end: 0, totalHeight: 0 });
  });

  it('keeps the DOM small however many rows there are', () => {
    for (const n of [1_000, 100_000, 10_000_000]) {
      const { start, end } = visibleRange({ viewportHeight: 600, rowHeight: 22, count: n, scrollTop: 22 * (n / 2) });
      expect(end - start).toBeLessThanOrEqual(Math.ceil(600 / 22) + 1 + 16);
    }
  });

  it('knows when the view is at the bottom (a live timeline follows then)', () => {
    expect(atBottom({ scrollTop: 780, viewportHeight: 220, totalHeight: 1000 })).toBe(true);
    expect(atBottom({ scrollTop: 700, viewportHeight: 220, totalHeight: 1000 })).toBe(false);
    expect(atBottom({ scrollTop: 0, viewportHeight: 220, totalHeight: 0 })).toBe(true);
  });
});

describe('the list', () => {
  const status = (state: string, type = 'turn-completed') =>
    ({ kind: 'status-update', seq: 1, swarmId: 's', status: { state, timestamp: '' }, final: false, metadata: { type } }) as never;

  it("maps an event to the swarm's status", () => {
    expect(statusAfter(status('working'))).toBe('running');
    expect(statusAfter(status('working', 'agent-handoff'))).toBe('awaitingHandoff');
    expect(statusAfter(status('working', 'swarm-handoff'))).toBe('awaitingHandoff');
    expect(statusAfter(status('input-required', 'paused'))).toBe('paused');
    expect(statusAfter(status('completed', 'completed'))).toBe('completed');
    expect(statusAfter(status('failed', 'failed'))).toBe('failed');
    expect(statusAfter(status('canceled', 'stopped'))).toBe('stopped');
    expect(statusAfter({ kind: 'internal:checkpoint', seq: 2, swarmId: 's', timestamp: 0, step: 'start' })).toBeNull();
  });

  it('filters by every word, in any of id, definition and status', () => {
    const text = 'saturday-1 planner paused';
    expect(matches(text, '')).toBe(true);
    expect(matches(text, 'PLAN')).toBe(true);
    expect(matches(text, 'planner paused')).toBe(true);
    expect(matches(text, 'planner completed')).toBe(false);
    expect(matches(text, '  sat  ')).toBe(true);
  });
});

describe('the team board', () => {
  it('puts the tasks in columns by state, in the order work moves, unknown states last', () => {
    const task = (id: string, status: string) => ({ id, subject: id, status, attempts: 0, failures: 0, dependencies: [] });
    const cols = columns([task('a', 'completed'), task('b', 'pending'), task('c', 'weird'), task('d', 'pending')]);
    expect(cols.map(([state, tasks]) => [state, tasks.map((t) => t.id)])).toEqual([
      ['pending', ['b', 'd']],
      ['in_progress', []],
      ['completed', ['a']],
      ['failed', []],
      ['escalated', []],
      ['weird', ['c']],
    ]);
  });
});

describe('the chart', () => {
  it("puts an edge's label halfway along its polyline", () => {
    expect(
      midpoint([
        { x: 0, y: 0 },
        { x: 10, y: 0 },
        { x: 10, y: 30 },
      ]),
    ).toEqual({ x: 10, y: 10 });
    expect(midpoint([{ x: 3, y: 4 }])).toEqual({ x: 3, y: 4 });
    expect(midpoint([])).toEqual({ x: 0, y: 0 });
  });

  it("draws an edge's label where ELK placed it (labelAt: its box's top-left), else from halfway along", () => {
    const points = [
      { x: 0, y: 0 },
      { x: 0, y: 40 },
    ];
    expect(labelPosition({ id: 'a->b', source: 'a', target: 'b', label: 'GO', points, labelAt: { x: 5, y: 10 } })).toEqual({ x: 5, y: 18, 'text-anchor': 'start' });
    expect(labelPosition({ id: 'a->b', source: 'a', target: 'b', label: 'GO', points, labelAt: null })).toEqual({ x: 0, y: 12, 'text-anchor': 'middle' });
  });
});

describe('the token', () => {
  it('travels as the subprotocol xswarm.bearer.<base64url>, beside xswarm', () => {
    expect(base64url('s3cr3t/+?é')).toBe(Buffer.from('s3cr3t/+?é').toString('base64url'));
    expect(subprotocols('tok')).toEqual(['xswarm', `xswarm.bearer.${Buffer.from('tok').toString('base64url')}`]);
    expect(subprotocols(null)).toEqual(['xswarm']);
  });
});

describe('formatting', () => {
  it('says figures shortly', () => {
    expect([count(null), count(999), count(1234), count(56_789), count(2_500_000)]).toEqual(['—', '999', '1.2k', '57k', '2.5M']);
    expect([duration(0.25), duration(12.4), duration(1500), duration(125_000)]).toEqual(['0.3 ms', '12 ms', '1.5 s', '2m 05s']);
    expect(clip('a\n  b', 10)).toBe('a b');
    expect(clip('x'.repeat(20), 10)).toBe(`${'x'.repeat(9)}…`);
  });

  it('describes an event in one line', () => {
    expect(describeEvent({ kind: 'internal:checkpoint', seq: 3, swarmId: 's', timestamp: 0, step: 'start' })).toEqual({ kind: 'checkpoint', text: 'start' });
    expect(
      describeEvent({
        kind: 'status-update',
        seq: 5,
        swarmId: 's',
        status: { state: 'working', timestamp: '' },
        final: false,
        metadata: { type: 'agent-handoff', from: 'planner', to: 'weather', callId: 'h', request: 'Saturday?' },
      }),
    ).toEqual({ kind: 'agent-handoff', text: 'planner → weather: Saturday?' });
  });
});

describe('a swarm of 100,000 events', () => {
  /** A long run: one tool round per turn, 5 events each, as a swarm records them. */
  function longRun(n: number) {
    const events: unknown[] = [
      {
        kind: 'task',
        id: 'long',
        seq: 1,
        swarmId: 'long',
        status: { state: 'submitted', timestamp: '2026-01-01T00:00:00.000Z' },
        metadata: { definitionId: 'd' },
        history: [],
      },
    ];
    let seq = 1;
    for (let turn = 1; events.length < n; turn++) {
      const id = `c${turn}`;
      const ts = 1_700_000_000_000 + turn;
      events.push(
        {
          kind: 'internal:llm-call',
          seq: ++seq,
          swarmId: 'long',
          timestamp: ts,
          agent: 'd',
          scope: '',
          turn,
          response: { toolCalls: [{ id, name: 'tick', arguments: '{}' }] },
          usage: { inputTokens: 10, outputTokens: 1 },
          durationMs: 2,
          calls: [{ id, name: 'tick', kind: 'tool', arguments: '{}' }],
          verdict: { type: 'continue' },
        },
        {
          kind: 'status-update',
          seq: ++seq,
          swarmId: 'long',
          status: { state: 'working', timestamp: '2026-01-01T00:00:00.000Z' },
          final: false,
          metadata: { type: 'tool-call', agent: 'd', toolName: 'tick', callId: id },
        },
        { kind: 'internal:tool-start', seq: ++seq, swarmId: 'long', timestamp: ts, agent: 'd', toolName: 'tick', callId: id, arguments: '{}' },
        { kind: 'internal:tool-complete', seq: ++seq, swarmId: 'long', timestamp: ts + 1, agent: 'd', toolName: 'tick', callId: id, ok: true, content: 'tock', key: id },
        {
          kind: 'status-update',
          seq: ++seq,
          swarmId: 'long',
          status: { state: 'working', timestamp: '2026-01-01T00:00:00.000Z' },
          final: false,
          metadata: { type: 'turn-completed', turn, maxTurns: 1_000_000, activeAgent: 'd' },
        },
      );
    }
    return events.slice(0, n) as never[];
  }

  it('folds in well under a second, live and at any step, and the tree stays two nodes', () => {
    const events = longRun(100_000);
    let t = performance.now();
    const folder = new Folder();
    for (const e of events) folder.push(e);
    const live = folder.snapshot();
    const liveMs = performance.now() - t;
    t = performance.now();
    const { at, diff } = stepAt(events, 50_000);
    const stepMs = performance.now() - t;
    expect(live.seq).toBe(100_000);
    expect(live.tree.map((n) => [n.kind, n.id, n.calls])).toEqual([
      ['swarm', 'long', 0],
      ['tool', 'tick', 20_000],
    ]);
    expect(live.tokens).toEqual({ input: 200_000, output: 20_000 });
    expect(at).toEqual(fold(events, 50_000));
    expect(diff.events.map((e) => e.seq)).toEqual([50_000]);
    // Generous bounds for a loaded machine; they fail only on a fold that is not linear.
    expect(liveMs).toBeLessThan(1500);
    expect(stepMs).toBeLessThan(1500);
  });
});

describe("the page's files", () => {
  const files = readdirSync(dir);
  const html = readFileSync(join(dir, 'index.html'), 'utf8');

  it('hold no inline script or style (the CSP allows only files of the page itself)', () => {
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="[a-z0-9-]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=|javascript:/i);
    for (const f of files.filter((f) => f.endsWith('.js'))) {
      const js = readFileSync(join(dir, f), 'utf8');
      expect(js.startsWith('// @ts-check'), f).toBe(true);
      // Event text is data: never parsed as markup, never set as a style attribute.
      expect(js, f).not.toMatch(/\.innerHTML|\.outerHTML|insertAdjacentHTML|setAttribute\(\s*'style'|\beval\(|new Function\(/);
    }
  });

  it('are plain names the server serves (no sub-folders)', () => {
    for (const f of files) expect(f).toMatch(/^[a-z0-9-]+\.(html|js|css|json|svg|png)$/);
  });

  it("have every data-testid of the DOM contract (the skeleton's and the modules' rows)", () => {
    const all = files.map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
    const skeleton = [
      'swarm-list',
      'swarm-filter',
      'current-state',
      'chart',
      'tree',
      'conversation',
      'timeline',
      'timeline-count',
      'last-seq',
      'btn-pause',
      'btn-resume',
      'btn-stop',
      'resume-message',
      'pause-reason',
      'control-error',
      'playback-slider',
      'playback-step',
      'btn-live',
      'diff',
      'team-board',
      'team-inbox',
    ];
    for (const id of skeleton) expect(html, id).toContain(`data-testid="${id}"`);
    for (const id of ['swarm-row', 'team-row', 'chart-state', 'tree-node', 'message', 'timeline-row', 'board-task', 'inbox-message']) {
      expect(all, id).toContain(`testid: '${id}'`);
    }
  });
});
