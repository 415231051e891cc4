// @ts-check
/**
 * The list of teams and swarms (`swarm-list`): filterable, live, virtualized. Rows come from
 * the overview (`GET /inspector/api/overview`, refreshed now and then) and are kept current by
 * the every-swarm event stream: a status, a turn, tokens, the last seq.
 *
 * @module
 */

import { h } from './dom.js';
import { count, when } from './format.js';
import { VirtualList } from './virtual-scroll.js';

/** @import { SwarmRow, TeamRow, Overview, SwarmEvent } from './types.js' */

/**
 * A row of the list: a team or a swarm.
 * @typedef {{ type: 'team', key: string, team: TeamRow, text: string } | { type: 'swarm', key: string, swarm: SwarmRow, text: string }} Item
 */

export const ROW_HEIGHT = 46;

/**
 * A swarm's status after one of its events (the store's status names, machines/swarm.ts's top states).
 * @param {SwarmEvent} e
 * @returns {string | null}
 */
export function statusAfter(e) {
  if (e.kind !== 'status-update') return null;
  switch (e.status.state) {
    case 'working':
      return e.metadata.type === 'agent-handoff' || e.metadata.type === 'swarm-handoff' ? 'awaitingHandoff' : 'running';
    case 'input-required':
      return 'paused';
    case 'completed':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'canceled':
      return 'stopped';
    default:
      return null;
  }
}

/**
 * Updates a list row from one of its swarm's events, counting what the overview and the fold
 * count: `turns` the orchestrator's model responses — its `internal:llm-call` (scope `''`)
 * carries the turn it made, before the turn completes (a handoff's turn completes only when the
 * handoff returns, so `turn-completed` alone left the row a turn behind the swarm's header) —
 * and `tokens` every model call's usage. Returns whether the status changed.
 * @param {SwarmRow} row
 * @param {SwarmEvent} e
 * @returns {boolean}
 */
export function applyToRow(row, e) {
  row.lastSeq = Math.max(row.lastSeq, e.seq);
  row.updatedAt = Date.now();
  if (e.kind === 'status-update' && e.metadata.type === 'turn-completed') row.turns = Math.max(row.turns ?? 0, e.metadata.turn);
  if (e.kind === 'internal:llm-call') {
    if (e.scope === '') row.turns = Math.max(row.turns ?? 0, e.turn);
    if (e.usage) {
      const t = row.tokens ?? { input: 0, output: 0, total: 0 };
      t.input += e.usage.inputTokens;
      t.output += e.usage.outputTokens;
      t.total = t.input + t.output;
      row.tokens = t;
    }
  }
  const status = statusAfter(e);
  if (!status || status === row.status) return false;
  row.status = status;
  return true;
}

/**
 * Whether an item matches the filter: every word of it is in the id, definition or status.
 * @param {string} text the item's searchable text, lower case
 * @param {string} filter
 */
export function matches(text, filter) {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  return words.every((w) => text.includes(w));
}

/** The list, drawn in `el` and filtered by `filterInput`. */
export class SwarmList {
  /**
   * @param {HTMLElement} el the scrolling container (`swarm-list`)
   * @param {HTMLInputElement} filterInput
   * @param {HTMLElement} footer shows how many rows match
   * @param {{ onSelect: (item: Item) => void, onUnknownSwarm: () => void }} handlers
   */
  constructor(el, filterInput, footer, { onSelect, onUnknownSwarm }) {
    /** @type {Item[]} */
    this.items = [];
    /** @type {Item[]} */
    this.shown = [];
    /** @type {Map<string, Item>} */
    this.byKey = new Map();
    /** @type {string | null} */
    this.selected = null;
    this.revealPending = false;
    this.filterInput = filterInput;
    this.footer = footer;
    this.onSelect = onSelect;
    this.onUnknownSwarm = onUnknownSwarm;
    this.list = new VirtualList(el, { rowHeight: ROW_HEIGHT, renderRow: (i) => this.row(/** @type {Item} */ (this.shown[i])) });
    filterInput.addEventListener('input', () => this.applyFilter());
  }

  /**
   * Replaces the rows with a fresh overview (the live updates since are in it).
   * @param {Overview} overview
   */
  setOverview(overview) {
    /** @type {Item[]} */
    const items = [];
    for (const team of overview.teams) {
      items.push({ type: 'team', key: `team:${team.definitionId}/${team.teamId}`, team, text: `${team.teamId} ${team.definitionId} ${team.status} team`.toLowerCase() });
    }
    for (const swarm of overview.swarms) items.push(swarmItem(swarm));
    this.items = items;
    this.byKey = new Map(items.map((i) => [i.key, i]));
    this.applyFilter();
  }

  /**
   * A swarm row for a swarm opened by id but not in the overview (another process's, or older).
   * @param {SwarmRow} swarm
   */
  ensure(swarm) {
    const key = `swarm:${swarm.swarmId}`;
    const known = this.byKey.get(key);
    if (known && known.type === 'swarm') return void Object.assign(known.swarm, swarm);
    const item = swarmItem(swarm);
    this.items.push(item);
    this.byKey.set(key, item);
    this.applyFilter();
  }

  /**
   * Updates a row from one of its swarm's events.
   * @param {SwarmEvent} e
   */
  applyEvent(e) {
    const item = this.byKey.get(`swarm:${e.swarmId}`);
    if (item?.type !== 'swarm') {
      this.onUnknownSwarm();
      return;
    }
    if (applyToRow(item.swarm, e)) item.text = searchText(item.swarm);
    this.list.schedule();
  }

  /**
   * Marks a row as selected (by key: `swarm:<id>`, `team:<definitionId>/<teamId>`).
   * @param {string | null} key
   */
  select(key) {
    const changed = key !== this.selected;
    this.selected = key;
    this.revealPending = changed && key !== null;
    this.revealSelected();
    this.list.schedule();
  }

  /** Scrolls the selected row into view once it is listed (a reload may select a row far down). @private */
  revealSelected() {
    if (!this.revealPending) return;
    const index = this.shown.findIndex((i) => i.key === this.selected);
    if (index < 0) return;
    this.revealPending = false;
    this.list.reveal(index);
  }

  /** @private */
  applyFilter() {
    const filter = this.filterInput.value;
    this.shown = filter.trim() ? this.items.filter((i) => matches(i.text, filter)) : this.items;
    const swarms = this.shown.filter((i) => i.type === 'swarm').length;
    this.footer.textContent = `${swarms} swarm${swarms === 1 ? '' : 's'}, ${this.shown.length - swarms} team${this.shown.length - swarms === 1 ? '' : 's'}${filter.trim() ? ` matching “${filter.trim()}”` : ''}`;
    this.list.setCount(this.shown.length);
    this.revealSelected();
    this.list.refresh();
  }

  /**
   * @private
   * @param {Item} item
   */
  row(item) {
    const selected = item.key === this.selected;
    const pick = () => this.onSelect(item);
    if (item.type === 'team') {
      const t = item.team;
      const counts = Object.entries(t.counts)
        .filter(([state, n]) => n > 0 && state !== 'total')
        .map(([state, n]) => `${n} ${state.replace('_', ' ')}`)
        .join(' · ');
      return h(
        'div',
        {
          class: `row team${selected ? ' selected' : ''}`,
          testid: 'team-row',
          'data-team-id': t.teamId,
          'data-status': t.status,
          role: 'button',
          tabindex: 0,
          onclick: pick,
          onkeydown: onEnter(pick),
        },
        h('div', { class: 'line1' }, h('span', { class: `badge s-${t.status}` }, t.status), h('span', { class: 'kind' }, 'team'), h('span', { class: 'id' }, t.teamId)),
        h('div', { class: 'line2' }, h('span', {}, t.definitionId), h('span', {}, counts || 'no tasks')),
      );
    }
    const s = item.swarm;
    return h(
      'div',
      {
        class: `row${selected ? ' selected' : ''}`,
        testid: 'swarm-row',
        'data-swarm-id': s.swarmId,
        'data-status': s.status,
        role: 'button',
        tabindex: 0,
        onclick: pick,
        onkeydown: onEnter(pick),
      },
      h('div', { class: 'line1' }, h('span', { class: `badge s-${s.status}` }, s.status), h('span', { class: 'id', title: s.swarmId }, s.swarmId)),
      h(
        'div',
        { class: 'line2' },
        h('span', { class: 'def', title: s.label?.description ?? s.definitionId }, s.label?.name ? `${s.label.name} (${s.definitionId})` : s.definitionId),
        h('span', { title: 'started' }, when(s.startedAt)),
        h('span', { title: 'turns' }, `${s.turns ?? '—'} turns`),
        h('span', { title: 'tokens (input + output)' }, `${count(s.tokens?.total)} tok`),
      ),
    );
  }
}

/** @param {SwarmRow} swarm @returns {Item} */
function swarmItem(swarm) {
  return { type: 'swarm', key: `swarm:${swarm.swarmId}`, swarm, text: searchText(swarm) };
}

/** @param {SwarmRow} s */
function searchText(s) {
  return `${s.swarmId} ${s.definitionId} ${s.status} ${s.label?.name ?? ''} ${s.label?.componentId ?? ''}`.toLowerCase();
}

/** @param {() => void} act */
function onEnter(act) {
  /** @param {Event} e */
  return (e) => {
    if (e instanceof KeyboardEvent && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      act();
    }
  };
}
