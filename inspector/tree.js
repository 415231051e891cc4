// @ts-check
/**
 * The tree of the selected swarm (`tree`): the swarm, the agents it handed off to, its child
 * swarms and remote agents, and the tools each called, with turns, tokens and latency per node
 * (`tree-node`, `data-kind`, `data-id`). A child swarm's own figures are in its own stream:
 * the page fills them in from its overview row (`extra`), which also finds children run by
 * another process on the same NATS store.
 *
 * @module
 */

import { h } from './dom.js';
import { count, duration } from './format.js';

/** @import { TreeNode } from './fold.js' */
/** @import { SwarmRow } from './types.js' */

/**
 * Renders `nodes` (parents before children) into `el`.
 * @param {HTMLElement} el
 * @param {TreeNode[]} nodes
 * @param {{ rows?: Map<string, SwarmRow>, onOpen?: (swarmId: string) => void }} [extra] child swarms' rows, by id; opening one
 */
export function renderTree(el, nodes, { rows = new Map(), onOpen } = {}) {
  /** @type {Map<string | null, TreeNode[]>} */
  const children = new Map();
  for (const n of nodes) {
    const list = children.get(n.parent) ?? [];
    list.push(n);
    children.set(n.parent, list);
  }
  /**
   * @param {TreeNode} n
   * @returns {HTMLLIElement}
   */
  const item = (n) => {
    const row = n.kind === 'child-swarm' ? rows.get(n.id) : undefined;
    const turns = row?.turns ?? n.turns;
    const input = row?.tokens ? row.tokens.input : n.inputTokens;
    const output = row?.tokens ? row.tokens.output : n.outputTokens;
    const status = row ? row.status : n.status;
    const kids = children.get(n.key) ?? [];
    const name =
      n.kind === 'child-swarm' && onOpen
        ? h('button', { class: 'link id', title: `Open ${n.id}`, onclick: () => onOpen(n.id) }, n.id)
        : h('span', { class: 'id', title: n.id }, n.id);
    return h(
      'li',
      { testid: 'tree-node', 'data-kind': n.kind, 'data-id': n.id, 'data-status': status, class: `tn k-${n.kind}` },
      h(
        'div',
        { class: 'tn-line' },
        h('span', { class: `dot s-${status}`, title: status }),
        h('span', { class: 'tn-kind' }, n.kind),
        name,
        n.label && n.label !== n.id ? h('span', { class: 'tn-label' }, n.label) : null,
        h(
          'span',
          { class: 'tn-figures' },
          n.kind === 'tool' || n.kind === 'remote'
            ? h('span', { title: 'calls' }, `${n.calls} call${n.calls === 1 ? '' : 's'}`)
            : h('span', { title: 'turns' }, `${turns ?? '—'} turns`),
          n.kind === 'tool' || n.kind === 'remote' ? null : h('span', { title: `tokens: ${input} in, ${output} out` }, `${count(input + output)} tok`),
          h('span', { title: n.kind === 'tool' || n.kind === 'remote' || n.kind === 'child-swarm' ? 'time in calls' : 'time in model calls' }, duration(n.latencyMs)),
        ),
      ),
      kids.length > 0 ? h('ul', {}, ...kids.map(item)) : null,
    );
  };
  const roots = children.get(null) ?? [];
  el.replaceChildren(...roots.map(item));
  if (roots.length === 0) el.replaceChildren(h('li', { class: 'empty-note' }, 'No events yet.'));
}
