// @ts-check
/**
 * Playback: a slider over the received events' seqs (`playback-slider`; the page writes the
 * step it drew in `playback-step`); at
 * step N the page shows the swarm as it was after event N, folded from the events it already
 * holds (the journal: no model or tool call, no request), and the diff to step N-1 (`diff`).
 * `btn-live` goes back to following the swarm.
 *
 * @module
 */

import { h } from './dom.js';
import { diffFolds } from './diff.js';
import { countThrough, Folder } from './fold.js';
import { describe } from './format.js';

/** @import { FoldResult } from './fold.js' */
/** @import { FoldDiff } from './diff.js' */
/** @import { SwarmEvent } from './types.js' */

/**
 * The swarm at step `seq` and at the step before it, in one pass over the events.
 * @param {readonly SwarmEvent[]} events in seq order
 * @param {number} seq
 * @returns {{ at: FoldResult, before: FoldResult, diff: FoldDiff }}
 */
export function stepAt(events, seq) {
  const n = countThrough(events, seq);
  const folder = new Folder();
  for (let i = 0; i < n - 1; i++) folder.push(/** @type {SwarmEvent} */ (events[i]));
  const before = folder.snapshot();
  if (n > 0) folder.push(/** @type {SwarmEvent} */ (events[n - 1]));
  const at = folder.snapshot();
  return { at, before, diff: diffFolds(before, at, events) };
}

/** The slider and the live button. */
export class Playback {
  /**
   * @param {{ slider: HTMLInputElement, live: HTMLButtonElement, bar: HTMLElement }} els
   * @param {{ onStep: (seq: number | null) => void }} handlers null: back to live
   */
  constructor(els, { onStep }) {
    this.els = els;
    /** @type {number | null} */
    this.step = null;
    this.last = 0;
    this.onStep = onStep;
    const pick = () => this.go(Number(els.slider.value));
    els.slider.addEventListener('input', pick);
    els.slider.addEventListener('change', pick);
    els.slider.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') this.go(null);
    });
    els.live.addEventListener('click', () => this.go(null));
  }

  /**
   * Goes to step `seq` (null: live).
   * @param {number | null} seq
   */
  go(seq) {
    const next = seq === null || !Number.isFinite(seq) ? null : Math.max(Math.min(seq, this.last), Math.min(1, this.last));
    this.step = next;
    this.sync();
    this.onStep(next);
  }

  /**
   * The events received so far end at `last`.
   * @param {number} last
   */
  setLast(last) {
    this.last = last;
    this.sync();
  }

  /** @private */
  sync() {
    const { slider, live, bar } = this.els;
    slider.min = this.last > 0 ? '1' : '0';
    slider.max = String(this.last);
    slider.disabled = this.last === 0;
    const value = this.step ?? this.last;
    if (slider.value !== String(value)) slider.value = String(value);
    live.disabled = this.step === null;
    live.setAttribute('aria-pressed', String(this.step === null));
    bar.dataset.mode = this.step === null ? 'live' : 'playback';
  }
}

/**
 * Renders a diff into `el`.
 * @param {HTMLElement} el
 * @param {FoldDiff | null} diff
 */
export function renderDiff(el, diff) {
  if (!diff || diff.toSeq === 0) {
    el.replaceChildren(h('div', { class: 'empty-note' }, 'No step yet.'));
    return;
  }
  const items = [];
  items.push(
    h(
      'div',
      { class: 'diff-line diff-state', 'data-change': diff.state ? 'changed' : 'same' },
      h('span', { class: 'diff-key' }, 'state'),
      diff.state ? h('span', {}, h('code', {}, diff.state.from || '—'), ' → ', h('code', {}, diff.state.to)) : h('span', { class: 'muted' }, 'unchanged'),
    ),
  );
  for (const e of diff.events.slice(-20)) {
    const d = describe(e);
    items.push(h('div', { class: 'diff-line diff-event', 'data-seq': e.seq }, h('span', { class: 'diff-key' }, `+ #${e.seq}`), h('span', {}, `${d.kind} ${d.text}`)));
  }
  for (const m of diff.messages.slice(-10)) {
    items.push(
      h(
        'div',
        { class: 'diff-line diff-message', 'data-role': m.role },
        h('span', { class: 'diff-key' }, `+ ${m.role}`),
        h('span', {}, `${m.speaker}: ${m.text || m.calls.join(', ')}`),
      ),
    );
  }
  for (const n of diff.nodes) {
    const what =
      n.change === 'added'
        ? 'new'
        : [
            n.before?.status !== n.after.status ? `${n.before?.status} → ${n.after.status}` : '',
            n.before && n.before.turns !== n.after.turns ? `turns ${n.before.turns} → ${n.after.turns}` : '',
            n.before && n.before.calls !== n.after.calls ? `calls ${n.before.calls} → ${n.after.calls}` : '',
            n.before && n.before.inputTokens + n.before.outputTokens !== n.after.inputTokens + n.after.outputTokens
              ? `tokens +${n.after.inputTokens + n.after.outputTokens - n.before.inputTokens - n.before.outputTokens}`
              : '',
          ]
            .filter(Boolean)
            .join(', ') || 'updated';
    items.push(
      h(
        'div',
        { class: 'diff-line diff-node', 'data-change': n.change },
        h('span', { class: 'diff-key' }, `${n.change === 'added' ? '+' : '~'} ${n.kind}`),
        h('span', {}, `${n.id}: ${what}`),
      ),
    );
  }
  el.replaceChildren(h('div', { class: 'diff-head' }, `#${diff.fromSeq} → #${diff.toSeq}`), ...items);
}
