// @ts-check
/**
 * A team's view: the task board by state (`team-board`, `board-task` with `data-task-id`,
 * `data-state`, the owner, attempts and dependencies) and the leader's inbox (`team-inbox`,
 * `inbox-message`), read from `GET /teams/:def/:teamId/board` and `/inbox`.
 *
 * @module
 */

import { h } from './dom.js';
import { when } from './format.js';

/** @import { Board, Inbox, BoardTask } from './types.js' */

/** The board's columns, in the order work moves. */
export const TASK_STATES = ['pending', 'in_progress', 'completed', 'failed', 'escalated'];

/**
 * The tasks by state, in column order (a state the page does not know gets a column at the end).
 * @param {readonly BoardTask[]} tasks
 * @returns {[string, BoardTask[]][]}
 */
export function columns(tasks) {
  /** @type {Map<string, BoardTask[]>} */
  const by = new Map(TASK_STATES.map((s) => [s, []]));
  for (const t of tasks) {
    const list = by.get(t.status) ?? [];
    list.push(t);
    by.set(t.status, list);
  }
  return [...by.entries()];
}

/**
 * @param {HTMLElement} el
 * @param {Board} board
 */
export function renderBoard(el, board) {
  el.replaceChildren(
    ...columns(board.tasks).map(([state, tasks]) =>
      h(
        'section',
        { class: `column s-${state}`, 'data-state': state },
        h('h4', {}, state.replace('_', ' '), h('span', { class: 'n' }, tasks.length)),
        ...tasks.map((t) =>
          h(
            'article',
            { class: 'task', testid: 'board-task', 'data-task-id': t.id, 'data-state': t.status },
            h('div', { class: 'task-head' }, h('span', { class: 'id' }, t.id), t.owner ? h('span', { class: 'owner', title: 'owner' }, t.owner) : null),
            h('div', { class: 'subject' }, t.subject),
            h(
              'div',
              { class: 'task-meta' },
              h(
                'span',
                { class: 'attempts', title: 'attempts (failures)' },
                `${t.attempts} attempt${t.attempts === 1 ? '' : 's'}${t.failures ? ` (${t.failures} failed)` : ''}`,
              ),
              t.dependencies.length > 0 ? h('span', { class: 'deps', title: 'dependencies' }, `after ${t.dependencies.join(', ')}`) : null,
            ),
            t.lastError ? h('div', { class: 'error-text' }, t.lastError) : null,
          ),
        ),
      ),
    ),
  );
}

/**
 * @param {HTMLElement} el
 * @param {Inbox} inbox
 */
export function renderInbox(el, inbox) {
  const messages = inbox.messages.slice(-200).reverse();
  el.replaceChildren(
    h('div', { class: 'inbox-head' }, `to ${inbox.leader} · members: ${inbox.members.join(', ')}`),
    ...messages.map((m) =>
      h(
        'div',
        { class: 'inbox-msg', testid: 'inbox-message', 'data-type': m.type, 'data-seq': m.seq },
        h('span', { class: 'when' }, when(m.at)),
        h('span', { class: 'from' }, `${m.from} → ${m.to}`),
        h('span', { class: `type t-${m.type}` }, m.type),
        h('span', { class: 'payload' }, JSON.stringify(m.payload)),
      ),
    ),
  );
  if (messages.length === 0) el.append(h('div', { class: 'empty-note' }, 'No messages.'));
}
