// @ts-check
/**
 * A tiny virtual scroller: a list of fixed-height rows where only the rows in view (plus a
 * margin) are in the DOM, so 100,000 rows cost what 40 do. The window math is pure
 * ({@link visibleRange}, unit-tested); {@link VirtualList} applies it to a scrolling element.
 *
 * @module
 */

/**
 * The rows to render for a scroll position.
 * @typedef {{ start: number, end: number, totalHeight: number }} Range `start` inclusive, `end` exclusive
 */

/**
 * Which rows are in view at `scrollTop` in a viewport `viewportHeight` tall, rows `rowHeight`
 * tall, with `overscan` rows more on each side (so a quick scroll shows no blank).
 * @param {{ scrollTop: number, viewportHeight: number, rowHeight: number, count: number, overscan?: number }} o
 * @returns {Range}
 */
export function visibleRange({ scrollTop, viewportHeight, rowHeight, count, overscan = 8 }) {
  const totalHeight = count * rowHeight;
  if (count <= 0 || rowHeight <= 0) return { start: 0, end: 0, totalHeight: Math.max(0, totalHeight) };
  const top = Math.max(0, Math.min(scrollTop, Math.max(0, totalHeight - viewportHeight)));
  const first = Math.floor(top / rowHeight);
  const last = Math.ceil((top + Math.max(0, viewportHeight)) / rowHeight);
  return { start: Math.max(0, first - overscan), end: Math.min(count, last + overscan), totalHeight };
}

/**
 * Whether a scroller is (nearly) at its bottom: a live list keeps following new rows then.
 * @param {{ scrollTop: number, viewportHeight: number, totalHeight: number }} o
 * @param {number} [slack]
 */
export function atBottom({ scrollTop, viewportHeight, totalHeight }, slack = 4) {
  return scrollTop + viewportHeight >= totalHeight - slack;
}

/**
 * A virtualized list in `scroller` (an element with a fixed height and `overflow: auto`): a
 * spacer as tall as every row, and the rows in view positioned in it. `renderRow(i)` makes
 * row `i`'s element; rows are rebuilt when the view moves or {@link VirtualList.refresh} is called.
 */
export class VirtualList {
  /**
   * @param {HTMLElement} scroller
   * @param {{ rowHeight: number, renderRow: (index: number) => HTMLElement, follow?: boolean }} options
   *   `follow`: stay at the bottom as rows are added, while the user is there
   */
  constructor(scroller, { rowHeight, renderRow, follow = false }) {
    this.scroller = scroller;
    this.rowHeight = rowHeight;
    this.renderRow = renderRow;
    this.follow = follow;
    this.count = 0;
    /** @type {number | null} */
    this.frame = null;
    this.spacer = document.createElement('div');
    this.spacer.className = 'vspacer';
    scroller.append(this.spacer);
    scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    if (typeof ResizeObserver !== 'undefined') new ResizeObserver(() => this.schedule()).observe(scroller);
  }

  /**
   * Sets the number of rows and redraws (on the next frame).
   * @param {number} count
   */
  setCount(count) {
    const wasAtBottom = atBottom({ scrollTop: this.scroller.scrollTop, viewportHeight: this.scroller.clientHeight, totalHeight: this.count * this.rowHeight });
    this.count = count;
    this.spacer.style.height = `${count * this.rowHeight}px`;
    if (this.follow && wasAtBottom) this.scroller.scrollTop = this.scroller.scrollHeight;
    this.schedule();
  }

  /** Redraws the rows in view now (their content may have changed). */
  refresh() {
    if (this.frame !== null) cancelAnimationFrame(this.frame);
    this.frame = null;
    this.draw();
  }

  /** Redraws on the next animation frame (once however many times it is asked). */
  schedule() {
    if (this.frame === null) this.frame = requestAnimationFrame(() => ((this.frame = null), this.draw()));
  }

  /**
   * Scrolls so that row `index` is in view.
   * @param {number} index
   */
  reveal(index) {
    const top = index * this.rowHeight;
    const view = this.scroller.clientHeight;
    if (top < this.scroller.scrollTop || top + this.rowHeight > this.scroller.scrollTop + view) this.scroller.scrollTop = Math.max(0, top - view / 2);
    this.schedule();
  }

  /** @private */
  draw() {
    const { start, end } = visibleRange({
      scrollTop: this.scroller.scrollTop,
      viewportHeight: this.scroller.clientHeight || 600,
      rowHeight: this.rowHeight,
      count: this.count,
    });
    const rows = [];
    for (let i = start; i < end; i++) {
      const row = this.renderRow(i);
      row.classList.add('vrow');
      row.style.top = `${i * this.rowHeight}px`;
      row.style.height = `${this.rowHeight}px`;
      rows.push(row);
    }
    this.spacer.replaceChildren(...rows);
  }
}
