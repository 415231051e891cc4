// @ts-check
/**
 * "Diff to the previous step": what changed between two folds of the same swarm (playback
 * shows step N against step N-1). Pure, so the unit tests check it in Node.
 *
 * @module
 */

import { countThrough } from './fold.js';

/** @import { FoldResult, TreeNode, ConversationMessage } from './fold.js' */
/** @import { SwarmEvent } from './types.js' */

/**
 * A tree node that appeared or whose figures changed.
 * @typedef {{ key: string, kind: TreeNode['kind'], id: string, change: 'added' | 'changed', before: TreeNode | null, after: TreeNode }} NodeChange
 */

/**
 * What changed from `before` to `after`.
 * @typedef {Object} FoldDiff
 * @property {number} fromSeq
 * @property {number} toSeq
 * @property {{ from: string, to: string } | null} state null when the state did not change
 * @property {SwarmEvent[]} events the events after `fromSeq` up to `toSeq`
 * @property {ConversationMessage[]} messages the messages said in between
 * @property {NodeChange[]} nodes
 */

const FIGURES = /** @type {const} */ (['status', 'turns', 'calls', 'inputTokens', 'outputTokens', 'latencyMs', 'open']);

/**
 * The diff of two folds; `events` are the swarm's events (in `seq` order), of which those in
 * between are listed.
 * @param {FoldResult} before
 * @param {FoldResult} after
 * @param {readonly SwarmEvent[]} events
 * @returns {FoldDiff}
 */
export function diffFolds(before, after, events) {
  const lo = Math.min(before.seq, after.seq);
  const hi = Math.max(before.seq, after.seq);
  const old = new Map(before.tree.map((n) => [n.key, n]));
  /** @type {NodeChange[]} */
  const nodes = [];
  for (const n of after.tree) {
    const prev = old.get(n.key);
    if (!prev) nodes.push({ key: n.key, kind: n.kind, id: n.id, change: 'added', before: null, after: n });
    else if (FIGURES.some((f) => prev[f] !== n[f])) nodes.push({ key: n.key, kind: n.kind, id: n.id, change: 'changed', before: prev, after: n });
  }
  return {
    fromSeq: before.seq,
    toSeq: after.seq,
    state: before.state === after.state ? null : { from: before.state, to: after.state },
    events: events.slice(countThrough(events, lo), countThrough(events, hi)),
    messages: after.conversation.slice(before.conversation.length),
    nodes,
  };
}
