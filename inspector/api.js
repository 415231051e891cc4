// @ts-check
/**
 * The page's talk with the server: JSON over fetch and events over the `/events` WebSocket,
 * with the token rules of the inspector contract. The token comes from the URL fragment
 * (`#…&token=T`, then removed from the address bar and kept in sessionStorage) or from the
 * token field shown when a call answers 401. fetch sends `Authorization: Bearer T`; a
 * WebSocket cannot carry headers, so it offers the subprotocols `xswarm` and
 * `xswarm.bearer.<base64url(T)>`.
 *
 * @module
 */

/** @import { SwarmEvent } from './types.js' */

const TOKEN_KEY = 'xswarm.token';

/** An answer other than 2xx: `status` and the server's `{ error }` text. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** @type {Set<() => void>} */
const unauthorizedListeners = new Set();

/**
 * Calls `listener` whenever a call answers 401 (the page then asks for a token).
 * @param {() => void} listener
 */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
}

/** The token in use, or null. */
export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/**
 * Keeps `value` as the token (null forgets it).
 * @param {string | null} value
 */
export function setToken(value) {
  try {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage refused (a sandboxed frame): the token lasts until the page is closed.
  }
}

/**
 * Takes a `token=` out of the fragment (kept in sessionStorage, removed from the address bar
 * so it is not left in the history or a screenshot); returns the fragment's other parameters.
 * @returns {URLSearchParams}
 */
export function takeTokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const t = params.get('token');
  if (t !== null) {
    setToken(t);
    params.delete('token');
    const rest = params.toString();
    history.replaceState(null, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
  }
  return params;
}

/**
 * base64url of a string's UTF-8 bytes, without padding.
 * @param {string} text
 */
export function base64url(text) {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * The WebSocket subprotocols that carry the token.
 * @param {string | null} t
 */
export function subprotocols(t) {
  return t ? ['xswarm', `xswarm.bearer.${base64url(t)}`] : ['xswarm'];
}

/**
 * A JSON call. Throws {@link ApiError} on a status other than 2xx.
 * @param {string} path from the server's root, e.g. `/inspector/api/overview`
 * @param {{ method?: string, body?: unknown, signal?: AbortSignal }} [options]
 * @returns {Promise<any>}
 */
export async function api(path, { method = 'GET', body, signal } = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  const t = token();
  if (t) headers.authorization = `Bearer ${t}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'omit' };
  if (body !== undefined) init.body = JSON.stringify(body);
  if (signal) init.signal = signal;
  const res = await fetch(path, init);
  const text = await res.text();
  /** @type {any} */
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    if (res.status === 401) for (const l of unauthorizedListeners) l();
    const message = data && typeof data.error === 'string' ? data.error : `${res.status} ${res.statusText || 'error'}`;
    throw new ApiError(res.status, message);
  }
  return data;
}

/**
 * The `/events` URL on this page's host (ws: or wss:).
 * @param {Record<string, string | number>} params
 */
function eventsUrl(params) {
  const url = new URL('/events', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  return url.toString();
}

/**
 * The state of an event stream, for the page's connection badge.
 * @typedef {'connecting' | 'live' | 'ended' | 'retrying'} StreamStatus
 */

/**
 * A WebSocket that connects again after it closes, backing off (`baseMs` doubling up to
 * `maxMs`), until `close()` or until `onClose` says the stream is over. `url` is asked at each
 * connection (a stream resumes where it was); frames reach `onFrame` parsed, garbled ones never.
 * @param {{ url: () => string, onFrame: (data: any) => void, onOpen?: () => void,
 *   onClose: (code: number, reason: string) => 'over' | 'again', baseMs: number, maxMs: number }} options
 * @returns {{ close: () => void, connected: () => void }} `connected()` resets the back-off.
 */
function reconnecting({ url, onFrame, onOpen = () => undefined, onClose, baseMs, maxMs }) {
  let closed = false;
  let attempt = 0;
  /** @type {WebSocket | null} */
  let ws = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const connect = () => {
    if (closed) return;
    const socket = new WebSocket(url(), subprotocols(token()));
    ws = socket;
    socket.onopen = onOpen;
    socket.onmessage = (m) => {
      /** @type {any} */
      let data;
      try {
        data = JSON.parse(String(m.data));
      } catch {
        return;
      }
      onFrame(data);
    };
    socket.onclose = (c) => {
      if (ws === socket) ws = null;
      if (closed || onClose(c.code, c.reason) === 'over') return;
      attempt++;
      timer = setTimeout(connect, Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 5)));
    };
  };
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      ws?.close(1000);
    },
    connected() {
      attempt = 0;
    },
  };
}

/**
 * Follows one swarm's events: stored ones first, then live, each exactly once and in `seq`
 * order, received in batched frames (`batch=1`: JSON arrays of events). After an overflow (1013)
 * or a dropped connection it reconnects with `since` = the last seq received (backing off up to
 * 5 s), so nothing is missed or repeated; it stops after the final event (1000) or `close()`.
 * @param {string} swarmId
 * @param {{ since?: number, onEvent: (e: SwarmEvent) => void, onStatus?: (s: StreamStatus, detail?: string) => void }} handlers
 * @returns {{ close: () => void }}
 */
export function followSwarm(swarmId, { since = 0, onEvent, onStatus = () => undefined }) {
  let lastSeq = since;
  let ended = false;
  onStatus('connecting');
  const stream = reconnecting({
    // batch=1: events come as JSON arrays (a stored page or a commit per frame), because a
    // browser's cost is per frame: 100,000 events one per frame take Chromium seconds.
    url: () => eventsUrl({ swarmId, since: lastSeq, batch: 1 }),
    onOpen: () => {
      stream.connected();
      onStatus('live');
    },
    onFrame: (data) => {
      // Batched frames are arrays of events; control frames (overflow, followed by 1013) objects.
      if (!Array.isArray(data)) return;
      for (const event of data) {
        if (!event || typeof event.seq !== 'number' || event.seq <= lastSeq) continue; // never twice
        lastSeq = event.seq;
        onEvent(event);
        if (event.kind === 'status-update' && event.final) ended = true;
      }
    },
    onClose: (code, reason) => {
      if (ended || (code === 1000 && lastSeq > 0)) {
        onStatus('ended', reason);
        return 'over';
      }
      // Overflow (1013), a restart, a dropped network: continue where we were.
      onStatus('retrying', reason || `closed (${code})`);
      return 'again';
    },
    baseMs: 250,
    maxMs: 5000,
  });
  return { close: stream.close };
}

/**
 * Follows the events of every swarm (from now on): the list's live updates. Reconnects after
 * a drop or an overflow; `onGap` is called then (the list reloads the overview to catch up).
 * @param {{ onEvent: (e: SwarmEvent) => void, onGap: () => void }} handlers
 * @returns {{ close: () => void }}
 */
export function followAll({ onEvent, onGap }) {
  const stream = reconnecting({
    url: () => eventsUrl({}),
    onFrame: (data) => {
      if (data?.type === 'subscribed') {
        stream.connected();
        // Anything committed before the subscription is in the overview: read it once more.
        onGap();
      } else if (data && typeof data.seq === 'number') onEvent(data);
    },
    onClose: () => 'again',
    baseMs: 500,
    maxMs: 10_000,
  });
  return { close: stream.close };
}
