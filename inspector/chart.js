// @ts-check
/**
 * The swarm machine's state chart, drawn as SVG from `swarm-chart.json` (laid out by elkjs from
 * machines/swarm.ts when the package is built: no layout here, only drawing). Each state is a
 * `g` (`chart-state`, `data-state` its dotted path); the active state and its ancestors carry
 * `data-active="true"`, the transitions out of them `data-next="true"`, and the transition
 * just taken `data-taken="true"`. A note (`notes`, e.g. "any unfinished state") stands for
 * several states: the machine's root-level transitions (STOP) are drawn from it once, their
 * edges (one per state, `from` the note) sharing its line.
 *
 * @module
 */

import { s } from './dom.js';
import { activeStates } from './fold.js';

/** @import { Chart, ChartNode, ChartEdge, ChartNote } from './types.js' */

/**
 * The depth of a node (compound states first, so their children are drawn on top).
 * @param {ChartNode} node
 * @param {Map<string, ChartNode>} byId
 */
function depth(node, byId) {
  let d = 0;
  for (let p = node.parent; p !== null && d < 50; p = byId.get(p)?.parent ?? null) d++;
  return d;
}

/**
 * The point halfway along a polyline (where its label goes) and the direction there.
 * @param {{ x: number, y: number }[]} points
 */
export function midpoint(points) {
  if (points.length === 0) return { x: 0, y: 0 };
  if (points.length === 1) return /** @type {{ x: number, y: number }} */ (points[0]);
  let total = 0;
  for (let i = 1; i < points.length; i++) total += dist(/** @type {any} */ (points[i - 1]), /** @type {any} */ (points[i]));
  let left = total / 2;
  for (let i = 1; i < points.length; i++) {
    const a = /** @type {{ x: number, y: number }} */ (points[i - 1]);
    const b = /** @type {{ x: number, y: number }} */ (points[i]);
    const d = dist(a, b);
    if (d >= left && d > 0) return { x: a.x + ((b.x - a.x) * left) / d, y: a.y + ((b.y - a.y) * left) / d };
    left -= d;
  }
  return /** @type {{ x: number, y: number }} */ (points.at(-1));
}

/**
 * A note: a dashed box standing for several states.
 * @param {ChartNote} note
 */
function drawNote(note) {
  return s(
    'g',
    { class: 'note', 'data-note': note.id },
    s('rect', { class: 'note-box', x: note.x, y: note.y, width: note.width, height: note.height, rx: 8 }),
    s('text', { x: note.x + note.width / 2, y: note.y + note.height / 2, class: 'note-label', 'text-anchor': 'middle', 'dominant-baseline': 'central' }, note.text),
  );
}

/** The height of the label box the chart's generator lays out. */
const LABEL_HEIGHT = 16;

/**
 * Where an edge's label is drawn: from the left of the box ELK placed it in (`labelAt`, its
 * top-left corner, clear of the other labels and states), else starting halfway along the line.
 * @param {ChartEdge} e
 * @returns {{ x: number, y: number, 'text-anchor': 'start' | 'middle' }}
 */
export function labelPosition(e) {
  if (e.labelAt) return { x: e.labelAt.x, y: e.labelAt.y + LABEL_HEIGHT / 2, 'text-anchor': 'start' };
  const mid = midpoint(e.points);
  return { x: mid.x, y: mid.y - 8, 'text-anchor': 'middle' };
}

/** @param {{ x: number, y: number }} a @param {{ x: number, y: number }} b */
function dist(a, b) {
  return Math.hypot(b.x - a.x, b.y - a.y);
}

/** The chart in an `svg` element. */
export class ChartView {
  /** @param {SVGSVGElement} svg */
  constructor(svg) {
    this.svg = svg;
    /** @type {Map<string, SVGGElement>} */
    this.states = new Map();
    /** @type {Map<string, ChartNode>} */
    this.nodes = new Map();
    this.active = '';
    /** @type {string | null} */
    this.from = null;
    /** @type {Map<ChartEdge, SVGGElement>} */
    this.edges = new Map();
  }

  /**
   * Fetches and draws the chart.
   * @param {string} [url]
   */
  async load(url = 'swarm-chart.json') {
    try {
      const res = await fetch(url, { credentials: 'omit' });
      if (!res.ok) throw new Error(`${res.status}`);
      this.draw(/** @type {Chart} */ (await res.json()));
    } catch (err) {
      this.svg.replaceChildren(s('text', { x: 10, y: 24, class: 'chart-missing' }, `State chart unavailable (${String(err)})`));
      this.svg.setAttribute('viewBox', '0 0 400 40');
    }
  }

  /**
   * Draws a chart (replacing what was drawn).
   * @param {Chart} chart
   */
  draw(chart) {
    const pad = 4;
    this.svg.setAttribute('viewBox', `${-pad} ${-pad} ${chart.width + 2 * pad} ${chart.height + 2 * pad}`);
    this.svg.setAttribute('role', 'img');
    this.svg.setAttribute('aria-label', 'The swarm state machine');
    this.nodes = new Map(chart.nodes.map((n) => [n.id, n]));
    const compound = new Set(chart.nodes.map((n) => n.parent).filter((p) => p !== null));
    const ordered = [...chart.nodes].sort((a, b) => depth(a, this.nodes) - depth(b, this.nodes));
    const defs = s(
      'defs',
      {},
      s(
        'marker',
        { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }),
      ),
    );
    this.states = new Map();
    const containers = s('g', { class: 'containers' });
    const leaves = s('g', { class: 'leaves' });
    for (const n of ordered) {
      const isCompound = compound.has(n.id);
      const g = s(
        'g',
        {
          testid: 'chart-state',
          'data-state': n.id,
          class: `state${isCompound ? ' compound' : ''}${n.final ? ' final' : ''}${n.initial ? ' initial' : ''}`,
        },
        s('title', {}, n.id),
        s('rect', { x: n.x, y: n.y, width: n.width, height: n.height, rx: isCompound ? 10 : 8 }),
        n.final ? s('rect', { class: 'inner', x: n.x + 3, y: n.y + 3, width: Math.max(0, n.width - 6), height: Math.max(0, n.height - 6), rx: 6 }) : null,
        isCompound
          ? s('text', { x: n.x + 10, y: n.y + 17, class: 'label compound-label' }, n.label)
          : s('text', { x: n.x + n.width / 2, y: n.y + n.height / 2, class: 'label', 'text-anchor': 'middle', 'dominant-baseline': 'central' }, n.label),
      );
      if (n.initial) {
        // The initial state's marker: a dot with an arrow into it, as statecharts draw it.
        const cy = n.y + Math.min(n.height / 2, 20);
        g.append(
          s('circle', { class: 'initial-dot', cx: n.x - 16, cy, r: 3.5 }),
          s('line', { class: 'initial-line', x1: n.x - 13, y1: cy, x2: n.x - 1, y2: cy, 'marker-end': 'url(#arrow)' }),
        );
      }
      this.states.set(n.id, g);
      (isCompound ? containers : leaves).append(g);
    }
    for (const note of chart.notes ?? []) containers.append(drawNote(note));
    const edges = s('g', { class: 'edges' });
    this.edges = new Map();
    for (const e of chart.edges) {
      const g = this.edge(e);
      this.edges.set(e, g);
      edges.append(g);
    }
    this.svg.replaceChildren(defs, containers, edges, leaves);
    this.setActive(this.active, this.from);
  }

  /**
   * @private
   * @param {ChartEdge} e
   */
  edge(e) {
    const points = e.points.map((p) => `${p.x},${p.y}`).join(' ');
    return s(
      'g',
      { class: 'edge', 'data-source': e.source, 'data-target': e.target },
      s('polyline', { points, class: 'line', 'marker-end': 'url(#arrow)' }),
      s('polyline', { points, class: 'taken-line', 'marker-end': 'url(#arrow-taken)' }),
      e.label ? s('text', { ...labelPosition(e), class: 'edge-label', 'dominant-baseline': 'central' }, e.label) : null,
    );
  }

  /**
   * Highlights `state` (a dotted state value) and its ancestors, and the transition from
   * `from` to it when it is given (`data-taken` on that edge).
   * @param {string} state
   * @param {string | null} [from]
   */
  setActive(state, from = null) {
    this.active = state;
    this.from = from;
    const sources = new Set(from ? activeStates(from) : []);
    const targets = new Set(activeStates(state));
    for (const [edge, g] of this.edges) {
      if (sources.has(edge.source) && targets.has(edge.target)) {
        g.setAttribute('data-taken', 'true');
        // On top of the others: the edges drawn from a note share its line.
        g.parentNode?.append(g);
      } else g.removeAttribute('data-taken');
      // The transitions the swarm can take next stand out; the others recede.
      if (targets.has(edge.source)) g.setAttribute('data-next', 'true');
      else g.removeAttribute('data-next');
    }
    const on = new Set(activeStates(state));
    // A state value deeper than the chart draws (or not drawn at all) still lights its ancestors.
    for (const id of [...on]) for (let p = this.nodes.get(id)?.parent ?? null; p !== null; p = this.nodes.get(p)?.parent ?? null) on.add(p);
    for (const [id, g] of this.states) {
      if (on.has(id)) g.setAttribute('data-active', 'true');
      else g.removeAttribute('data-active');
    }
  }
}
