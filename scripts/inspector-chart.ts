/**
 * Generates `inspector/swarm-chart.json`: the swarm machine's state chart, laid out by elkjs
 * (layered, hierarchical: `running` drawn as a box holding its states), for the inspector page
 * to draw without laying anything out itself. Run it after changing `machines/swarm.ts`:
 * `npm run inspector:chart` (a test fails while the committed file is stale).
 *
 * The chart is read from the machine's own definition (XState's `StateNode` tree: `root`,
 * `.states`, `.transitions`, `.always`), never written by hand:
 *
 * - nodes: every state but the root, with its dotted path as id (`running`,
 *   `running.thinking`, `paused`…), its parent's id (null at the top), whether it is its
 *   parent's initial state and whether it is final; x/y are absolute (top-left corner).
 * - edges: one per (source, target), id `<source>-><target>`, labelled with its event types
 *   (joined by `, ` when several events take the same way); `always` for an eventless one; an invoked actor's done and error events read `model done`,
 *   `model error` (`call done`, `call error` for the wildcard of every call). Transitions
 *   without a target (actions only) are not drawn. `points` run from source to target
 *   (absolute), `labelAt` is where ELK placed the label (its top-left corner).
 * - a transition of the root (`STOP`) applies in every state until the machine ends. Drawn from
 *   each unfinished top-level state it crossed the whole chart three times, so it is drawn once:
 *   from a note (`notes`: a box reading "any unfinished state", laid out by ELK like a state)
 *   to its target. The edges stay one per unfinished top-level state (`running->stopped`,
 *   `awaitingHandoff->stopped`, `paused->stopped`, so the page can mark the one taken), each
 *   with `from` naming the note and the note's line as its `points`.
 *
 * elkjs is a devDependency: the package ships the generated JSON, users build nothing.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import elkBundled from 'elkjs/lib/elk.bundled.js';
import type { ELK as ElkApi, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import type { AnyStateNode } from 'xstate';
import { swarmMachine } from '../machines/swarm.js';

/** A state as the page draws it. */
export interface ChartNode {
  id: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
  parent: string | null;
  initial: boolean;
  final: boolean;
}

/** A transition as the page draws it. */
export interface ChartEdge {
  id: string;
  source: string;
  target: string;
  label: string;
  points: { x: number; y: number }[];
  labelAt: { x: number; y: number } | null;
  /** The note the edge is drawn from instead of its source (a transition of the root). */
  from?: string;
}

/** A box that stands for several states: the root's transitions are drawn from it. */
export interface ChartNote {
  id: string;
  text: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The whole chart: `inspector/swarm-chart.json`. */
export interface SwarmChart {
  width: number;
  height: number;
  nodes: ChartNode[];
  edges: ChartEdge[];
  notes: ChartNote[];
}

/** Where the generated file goes. */
export const CHART_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', 'inspector', 'swarm-chart.json');

/** Font metrics the page's stylesheet is expected to keep close to (12px sans-serif). */
const CHAR_WIDTH = 7;
const LABEL_HEIGHT = 16;
const NODE_HEIGHT = 40;
/** A state's name is drawn larger (16px, bold when active): wider per character. */
const NODE_CHAR_WIDTH = 9;

const pathOf = (node: AnyStateNode) => node.path.join('.');

/**
 * An edge label's width at the page's 13px: capitals are wider than the 7.5px of a lower-case
 * letter, spaces and commas narrower (with one width per character, `RESUME` labels side by
 * side ran into each other).
 */
export function labelWidth(text: string): number {
  let width = 0;
  for (const c of text) width += /[A-Z]/.test(c) ? 9.5 : /[\s,.]/.test(c) ? 4 : 7.5;
  return Math.ceil(width);
}

/**
 * The layout engine, run in this process (the bundled build, no worker). Its typings are
 * CommonJS ones that NodeNext reads as a namespace: the value is the constructor.
 */
const ELK = elkBundled as unknown as new () => ElkApi;

/** An event type as an edge label: the done and error events of invoked actors shortened. */
export function edgeLabel(eventType: string): string {
  const m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  if (!m) return eventType === '' ? 'always' : eventType;
  return `${m[2] === '*' ? 'call' : m[2]} ${m[1]}`;
}

/** The states below the root, parents before their children, in definition order. */
function statesOf(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states).flatMap((child) => [child, ...statesOf(child)]);
}

/** The note the root's transitions are drawn from. */
const UNFINISHED_NOTE = { id: 'note:unfinished', text: 'any unfinished state' };

/** A drawn transition; `from` when it is drawn from a note (a transition of the root). */
interface Transition {
  source: string;
  target: string;
  label: string;
  from?: string;
}

/**
 * The drawn transitions, one per (source, target) in definition order, labelled with their
 * events' labels (each once, in definition order, joined by `, `).
 */
function transitionsOf(root: AnyStateNode): Transition[] {
  const out = new Map<string, { source: string; target: string; labels: string[]; from?: string }>();
  const add = (source: string, targets: readonly AnyStateNode[] | undefined, eventType: string, from?: string) => {
    for (const t of targets ?? []) {
      const target = pathOf(t);
      const edge = out.get(`${source}->${target}`) ?? { source, target, labels: [], ...(from ? { from } : {}) };
      const label = edgeLabel(eventType);
      if (!edge.labels.includes(label)) edge.labels.push(label);
      out.set(`${source}->${target}`, edge);
    }
  };
  for (const node of statesOf(root)) {
    for (const [eventType, list] of node.transitions) for (const t of list) add(pathOf(node), t.target, eventType);
    for (const t of node.always ?? []) add(pathOf(node), t.target, '');
  }
  // The root's own transitions apply in every state it is in until it ends: one edge from each
  // unfinished top-level state, all drawn from the note.
  const unfinished = Object.values(root.states).filter((s) => s.type !== 'final');
  for (const [eventType, list] of root.transitions) for (const t of list) for (const s of unfinished) add(pathOf(s), t.target, eventType, UNFINISHED_NOTE.id);
  return [...out.values()].map(({ source, target, labels, from }) => ({ source, target, label: labels.join(', '), ...(from ? { from } : {}) }));
}

const round = (n: number) => Math.round(n * 10) / 10;

/** Lays out the swarm machine's chart with elkjs. */
export async function buildChart(root: AnyStateNode = swarmMachine.root): Promise<SwarmChart> {
  const states = statesOf(root);
  const transitions = transitionsOf(root);
  // What ELK lays out: the transitions of states as they are; those drawn from the note once
  // per (note, target), under the id of the first.
  const laidOut = new Map<string, Transition & { elkId: string }>();
  transitions.forEach((t, i) => {
    const key = t.from ? `${t.from}->${t.target}` : `${t.source}->${t.target}`;
    if (!laidOut.has(key)) laidOut.set(key, { ...t, elkId: `e${i}` });
  });
  const noteUsed = transitions.some((t) => t.from === UNFINISHED_NOTE.id);
  const elkNode = (node: AnyStateNode): ElkNode => {
    const label = node.key;
    const children = Object.values(node.states).map(elkNode);
    return {
      id: pathOf(node),
      labels: [{ text: label, width: label.length * CHAR_WIDTH, height: LABEL_HEIGHT }],
      ...(children.length > 0
        ? { children, layoutOptions: { 'elk.padding': '[top=36,left=20,bottom=20,right=20]' } }
        : { width: Math.max(96, label.length * NODE_CHAR_WIDTH + 28), height: NODE_HEIGHT }),
    };
  };
  const graph: ElkNode = {
    id: '#root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.spacing.nodeNodeBetweenLayers': '48',
      'elk.spacing.nodeNode': '32',
      'elk.spacing.edgeLabel': '4',
      'elk.edgeLabels.inline': 'false',
      'elk.json.shapeCoords': 'ROOT',
      'elk.json.edgeCoords': 'ROOT',
      // Edges out of a state keep the order the machine defines them in: of the settings tried
      // (ELK's defaults, model order for nodes too, longest-path or Coffman-Graham layering,
      // network-simplex or linear-segments placement, merged edges, tighter spacing, head/tail
      // or inline labels, direction RIGHT, priorities by distance from the start), the one with
      // the fewest crossings and labels that stay apart at the page's size.
      'elk.layered.considerModelOrder.strategy': 'PREFER_EDGES',
    },
    children: [
      ...Object.values(root.states).map(elkNode),
      ...(noteUsed ? [{ id: UNFINISHED_NOTE.id, width: UNFINISHED_NOTE.text.length * CHAR_WIDTH + 24, height: NODE_HEIGHT - 8 }] : []),
    ],
    edges: [...laidOut.values()].map(
      (t): ElkExtendedEdge => ({
        id: t.elkId,
        sources: [t.from ?? t.source],
        targets: [t.target],
        labels: [{ text: t.label, width: labelWidth(t.label), height: LABEL_HEIGHT }],
      }),
    ),
  };
  const laid = await new ELK().layout(graph);

  const boxes = new Map<string, ElkNode>();
  const collect = (n: ElkNode) => {
    boxes.set(n.id, n);
    for (const c of n.children ?? []) collect(c);
  };
  collect(laid);
  const nodes = states.map((s): ChartNode => {
    const box = boxes.get(pathOf(s))!;
    const parent = s.parent && s.parent !== root ? pathOf(s.parent) : null;
    const initialOfParent = s.parent?.initial?.target.some((t) => t === s) ?? false;
    return {
      id: pathOf(s),
      label: s.key,
      x: round(box.x ?? 0),
      y: round(box.y ?? 0),
      width: round(box.width ?? 0),
      height: round(box.height ?? 0),
      parent,
      initial: initialOfParent,
      final: s.type === 'final',
    };
  });
  const laidEdges = new Map((laid.edges ?? []).map((e) => [e.id, e]));
  const edges = transitions.map((t): ChartEdge => {
    const e = laidEdges.get(laidOut.get(t.from ? `${t.from}->${t.target}` : `${t.source}->${t.target}`)!.elkId)!;
    const section = e.sections?.[0];
    const points = section ? [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map((p) => ({ x: round(p.x), y: round(p.y) })) : [];
    const label = e.labels?.[0];
    return {
      id: `${t.source}->${t.target}`,
      source: t.source,
      target: t.target,
      label: t.label,
      points,
      labelAt: label?.x !== undefined && label.y !== undefined ? { x: round(label.x), y: round(label.y) } : null,
      ...(t.from ? { from: t.from } : {}),
    };
  });
  const noteBox = boxes.get(UNFINISHED_NOTE.id);
  const notes: ChartNote[] = noteBox
    ? [{ ...UNFINISHED_NOTE, x: round(noteBox.x ?? 0), y: round(noteBox.y ?? 0), width: round(noteBox.width ?? 0), height: round(noteBox.height ?? 0) }]
    : [];
  return { width: round(laid.width ?? 0), height: round(laid.height ?? 0), nodes, edges, notes };
}

/** The chart as the file holds it: pretty JSON, as Biome formats it, with a final newline. */
export function chartText(chart: SwarmChart): string {
  return `${JSON.stringify(chart, null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const chart = await buildChart();
  writeFileSync(CHART_PATH, chartText(chart));
  console.log(`wrote ${CHART_PATH}: ${chart.nodes.length} states, ${chart.edges.length} transitions, ${chart.width}x${chart.height}`);
}
