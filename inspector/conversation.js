// @ts-check
/**
 * The conversation (`conversation`, `message` items with `data-role`): the user's input, each
 * model response (the orchestrator's and, indented, its agents'), tool and handoff results, the
 * pause, the human's answer. A long run's conversation is paged: the last {@link PAGE} messages
 * are drawn, with a note of how many came before.
 *
 * @module
 */

import { h } from './dom.js';

/** @import { ConversationMessage } from './fold.js' */

/** How many messages are drawn at most. */
export const PAGE = 200;

/**
 * Renders `messages` into `el`, keeping the view at the bottom when it was there.
 * @param {HTMLElement} el
 * @param {readonly ConversationMessage[]} messages
 */
export function renderConversation(el, messages) {
  const wasAtBottom = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
  const shown = messages.slice(-PAGE);
  const hidden = messages.length - shown.length;
  el.replaceChildren(
    ...(hidden > 0 ? [h('div', { class: 'older' }, `${hidden} earlier message${hidden === 1 ? '' : 's'} not shown`)] : []),
    ...shown.map((m) =>
      h(
        'div',
        { class: `msg r-${m.role}${m.nested ? ' nested' : ''}`, testid: 'message', 'data-role': m.role, 'data-seq': m.seq },
        h('div', { class: 'msg-head' }, h('span', { class: 'who' }, m.speaker), h('span', { class: 'seq' }, `#${m.seq}`)),
        m.text ? h('div', { class: 'msg-text' }, m.text) : null,
        ...m.calls.map((c) => h('div', { class: 'msg-call' }, `→ ${c}`)),
      ),
    ),
  );
  if (messages.length === 0) el.replaceChildren(h('div', { class: 'empty-note' }, 'Nothing said yet.'));
  if (wasAtBottom) el.scrollTop = el.scrollHeight;
}
