// @ts-check
/**
 * The event timeline (`timeline`): every received event as one row (`timeline-row`,
 * `data-seq`), virtualized, so a swarm of 100,000 events keeps only the rows in view in the
 * DOM. The events stay in the page's array; the timeline shows the first `shown` of them (all
 * when live, up to the step when playing back) and follows the end while the user is there.
 *
 * @module
 */

import { h } from './dom.js';
import { describe, when } from './format.js';
import { eventTime } from './fold.js';
import { VirtualList } from './virtual-scroll.js';

/** @import { SwarmEvent } from './types.js' */

export const ROW_HEIGHT = 22;

/** The timeline in `el` (a scrolling element). */
export class Timeline {
  /**
   * @param {HTMLElement} el
   * @param {{ onPick: (seq: number) => void }} handlers a row clicked: play back to it
   */
  constructor(el, { onPick }) {
    /** @type {readonly SwarmEvent[]} */
    this.events = [];
    this.shown = 0;
    /** @type {number | null} */
    this.current = null;
    this.onPick = onPick;
    this.list = new VirtualList(el, { rowHeight: ROW_HEIGHT, follow: true, renderRow: (i) => this.row(i) });
  }

  /**
   * Shows the first `shown` events of `events` (the array is the page's, read only), marking
   * `current` (the playback step).
   * @param {readonly SwarmEvent[]} events
   * @param {number} shown
   * @param {number | null} current
   */
  set(events, shown, current) {
    const changed = this.events !== events || this.current !== current;
    this.events = events;
    this.current = current;
    if (shown !== this.shown) {
      this.shown = shown;
      this.list.setCount(shown);
    }
    if (changed) this.list.schedule();
  }

  /**
   * Scrolls the row at index `index` into view.
   * @param {number} index
   */
  reveal(index) {
    this.list.reveal(index);
  }

  /**
   * @private
   * @param {number} i
   */
  row(i) {
    const e = /** @type {SwarmEvent} */ (this.events[i]);
    const { kind, text } = describe(e);
    const internal = e.kind.startsWith('internal:');
    return h(
      'div',
      {
        class: `tl-row k-${kind}${internal ? ' internal' : ''}${e.seq === this.current ? ' current' : ''}`,
        testid: 'timeline-row',
        'data-seq': e.seq,
        title: `#${e.seq} ${kind}`,
        onclick: () => this.onPick(e.seq),
      },
      h('span', { class: 'tl-seq' }, e.seq),
      h('span', { class: 'tl-time' }, when(eventTime(e))),
      h('span', { class: 'tl-kind' }, kind),
      h('span', { class: 'tl-text' }, text),
    );
  }
}
