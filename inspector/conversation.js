// @ts-check
/**
 * The conversation (`conversation`, `message` items with `data-role`): the user's input, each
 * model response (the orchestrator's and, indented, its agents'), tool and handoff results, the
 * pause, the human's answer. A long run's conversation is paged: the last {@link PAGE} messages
 * are drawn, with a note of how many came before. While a swarm runs, the messages only grow:
 * the new ones are appended and the oldest dropped, rather than all drawn again.
 *
 * @module
 */

import { h } from './dom.js';

/** @import { ConversationMessage } from './fold.js' */

/** How many messages are drawn at most. */
export const PAGE = 200;

/** @type {WeakMap<HTMLElement, { list: readonly ConversationMessage[], from: number, to: number }>} */
const drawn = new WeakMap();

/** @param {ConversationMessage} m */
function message(m) {
  return h(
    'div',
    { class: `msg r-${m.role}${m.nested ? ' nested' : ''}`, testid: 'message', 'data-role': m.role, 'data-seq': m.seq },
    h('div', { class: 'msg-head' }, h('span', { class: 'who' }, m.speaker), h('span', { class: 'seq' }, `#${m.seq}`)),
    m.text ? h('div', { class: 'msg-text' }, m.text) : null,
    ...m.calls.map((c) => h('div', { class: 'msg-call' }, `→ ${c}`)),
  );
}

/** @param {number} hidden */
function olderNote(hidden) {
  return h('div', { class: 'older' }, `${hidden} earlier message${hidden === 1 ? '' : 's'} not shown`);
}

/**
 * Renders `messages` into `el`, keeping the view at the bottom when it was there.
 * @param {HTMLElement} el
 * @param {readonly ConversationMessage[]} messages
 */
export function renderConversation(el, messages) {
  const wasAtBottom = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
  const from = Math.max(0, messages.length - PAGE);
  const to = messages.length;
  const before = drawn.get(el);
  if (before && before.to === to && before.from === from && before.list[to - 1] === messages[to - 1]) return;
  // The same conversation, grown: its drawn messages are the same objects (the fold never changes one).
  const grown = before !== undefined && before.to > 0 && before.to <= to && messages[before.to - 1] === before.list[before.to - 1] && from - before.from < PAGE;
  if (grown && before) {
    const note = el.firstElementChild?.classList.contains('older') ? el.firstElementChild : null;
    for (let i = before.from; i < from; i++) (note ? note.nextElementSibling : el.firstElementChild)?.remove();
    el.append(...messages.slice(before.to, to).map(message));
    if (from > 0) {
      if (note) note.textContent = olderNote(from).textContent;
      else el.prepend(olderNote(from));
    }
  } else if (messages.length === 0) {
    el.replaceChildren(h('div', { class: 'empty-note' }, 'Nothing said yet.'));
  } else {
    el.replaceChildren(...(from > 0 ? [olderNote(from)] : []), ...messages.slice(from).map(message));
  }
  drawn.set(el, { list: messages, from, to });
  if (wasAtBottom) el.scrollTop = el.scrollHeight;
}
