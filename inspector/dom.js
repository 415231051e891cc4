// @ts-check
/**
 * Making elements without a framework: `h('div', { class: 'x', testid: 'y' }, 'text', child)`.
 * Attributes are set as attributes (never `innerHTML`: event text is data, not markup), `testid`
 * becomes `data-testid`, `on*` functions become listeners.
 *
 * @module
 */

/** @typedef {Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>} Attrs */
/** @typedef {Node | string | number | null | undefined | false} Child */

/**
 * @param {Element} el
 * @param {Attrs} attrs
 */
function setAttrs(el, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'testid') el.setAttribute('data-testid', String(value));
    else el.setAttribute(name, value === true ? '' : String(value));
  }
}

/**
 * An HTML element.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * An SVG element.
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, attrs = {}, ...children) {
  const el = /** @type {SVGElementTagNameMap[K]} */ (document.createElementNS(SVG, tag));
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/**
 * @param {Element} el
 * @param {Child[]} children
 */
function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
}

/**
 * The element with `data-testid` `id` (the page's skeleton has them all).
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byTestId(id) {
  const el = document.querySelector(`[data-testid="${id}"]`);
  if (!(el instanceof HTMLElement)) throw new Error(`The page has no [data-testid="${id}"]`);
  return el;
}

/**
 * The SVG element with `data-testid` `id`.
 * @param {string} id
 * @returns {SVGSVGElement}
 */
export function svgByTestId(id) {
  const el = document.querySelector(`svg[data-testid="${id}"]`);
  if (!(el instanceof SVGSVGElement)) throw new Error(`The page has no svg[data-testid="${id}"]`);
  return el;
}
