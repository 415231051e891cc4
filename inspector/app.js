// @ts-check
/**
 * The inspector page's entry: routing (`#swarm=<id>`, `#team=<definitionId>/<teamId>`, and a
 * `token=` taken once), the list, and the selected swarm or team. A swarm's events arrive over
 * the `/events` WebSocket (stored first, then live: a reload misses nothing) into one array and
 * one incremental fold; drawing happens at most once a frame, whatever the event rate.
 *
 * @module
 */

import { api, ApiError, followAll, followSwarm, onUnauthorized, setToken, takeTokenFromFragment } from './api.js';
import { ChartView } from './chart.js';
import { renderConversation } from './conversation.js';
import { Controls } from './controls.js';
import { diffFolds } from './diff.js';
import { byTestId, svgByTestId } from './dom.js';
import { countThrough, Folder } from './fold.js';
import { count, duration } from './format.js';
import { SwarmList } from './list.js';
import { Playback, renderDiff, stepAt } from './playback.js';
import { renderBoard, renderInbox } from './team.js';
import { Timeline } from './timeline.js';
import { renderTree } from './tree.js';

/** @import { SwarmEvent, SwarmRow, Overview } from './types.js' */
/** @import { FoldResult } from './fold.js' */
/** @import { FoldDiff } from './diff.js' */

const OVERVIEW_EVERY_MS = 5000;
const TEAM_EVERY_MS = 2000;
/** Live drawing at most this often: a burst of events is drawn once. */
const MIN_DRAW_MS = 100;

/** @param {string} id */
const el = (id) => byTestId(id);
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ (byTestId(id));
/** @param {string} id */
const button = (id) => /** @type {HTMLButtonElement} */ (byTestId(id));

/**
 * The selected swarm: its events, their fold, its stream.
 * @typedef {{ swarmId: string, definitionId: string | null, events: SwarmEvent[], folder: Folder, live: FoldResult,
 *   previous: FoldResult | null, dirty: boolean, stream: { close: () => void } | null, row: SwarmRow | null, streamStatus: string }} SwarmSession
 */

/** @type {SwarmSession | null} */
let session = null;
/** @type {{ definitionId: string, teamId: string, timer: ReturnType<typeof setInterval> } | null} */
let team = null;
/** Child swarms' rows (fetched by id when the list does not have them). @type {Map<string, SwarmRow>} */
const fetchedRows = new Map();
/** @type {Set<string>} */
const fetching = new Set();
/** The playback step's fold, cached (moving the slider folds once per new step). @type {{ seq: number, count: number, at: FoldResult, diff: FoldDiff } | null} */
let stepCache = null;

const list = new SwarmList(el('swarm-list'), input('swarm-filter'), el('list-count'), {
  onSelect: (item) => {
    location.hash =
      item.type === 'swarm'
        ? `swarm=${encodeURIComponent(item.swarm.swarmId)}`
        : `team=${encodeURIComponent(item.team.definitionId)}/${encodeURIComponent(item.team.teamId)}`;
  },
  onUnknownSwarm: () => refreshOverviewSoon(),
});
const chart = new ChartView(svgByTestId('chart'));
const timeline = new Timeline(el('timeline'), { onPick: (seq) => playback.go(seq) });
const playback = new Playback({ slider: input('playback-slider'), live: button('btn-live'), bar: el('playback') }, { onStep: () => scheduleDraw(true) });
const controls = new Controls(
  {
    pause: button('btn-pause'),
    resume: button('btn-resume'),
    stop: button('btn-stop'),
    message: input('resume-message'),
    reason: el('pause-reason'),
    banner: el('pause-banner'),
    error: el('control-error'),
  },
  () => (session ? { swarmId: session.swarmId, definitionId: session.definitionId ?? session.live.definitionId ?? '' } : null),
);

// ---- token ------------------------------------------------------------------------------------

const tokenForm = /** @type {HTMLFormElement} */ (el('token-form'));
onUnauthorized(() => {
  tokenForm.hidden = false;
  input('token-input').focus();
});
tokenForm.addEventListener('submit', (e) => {
  e.preventDefault();
  setToken(input('token-input').value.trim() || null);
  input('token-input').value = '';
  tokenForm.hidden = true;
  showError('');
  startAllStream();
  void refreshOverview();
  route(true);
});

/** @param {string} text */
function showError(text) {
  const e = el('app-error');
  e.textContent = text;
  e.hidden = text === '';
}

// ---- the list ---------------------------------------------------------------------------------

async function refreshOverview() {
  try {
    /** @type {Overview} */
    const overview = await api('/inspector/api/overview?limit=5000');
    list.setOverview(overview);
    if (session?.row) list.ensure(session.row);
    showError('');
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) showError(`Cannot read the list of swarms: ${errorText(err)}`);
  }
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let overviewSoon;
function refreshOverviewSoon() {
  if (overviewSoon !== undefined) return;
  overviewSoon = setTimeout(() => {
    overviewSoon = undefined;
    void refreshOverview();
  }, 300);
}

/** @type {{ close: () => void } | null} */
let allStream = null;
function startAllStream() {
  allStream?.close();
  allStream = followAll({ onEvent: (e) => list.applyEvent(e), onGap: () => refreshOverviewSoon() });
}

// ---- routing ----------------------------------------------------------------------------------

/** @param {boolean} [force] reopen the selection even when it did not change (a new token) */
function route(force = false) {
  const params = takeTokenFromFragment();
  const swarmId = params.get('swarm');
  const teamRef = params.get('team');
  if (swarmId) {
    if (force || session?.swarmId !== swarmId) openSwarm(swarmId);
    list.select(`swarm:${swarmId}`);
  } else if (teamRef?.includes('/')) {
    const cut = teamRef.indexOf('/');
    const definitionId = teamRef.slice(0, cut);
    const teamId = teamRef.slice(cut + 1);
    if (force || team?.definitionId !== definitionId || team.teamId !== teamId) openTeam(definitionId, teamId);
    list.select(`team:${definitionId}/${teamId}`);
  } else {
    closeAll();
    list.select(null);
    show('empty-view');
  }
}

/** @param {'empty-view' | 'swarm-view' | 'team-view'} which */
function show(which) {
  for (const id of ['empty-view', 'swarm-view', 'team-view']) el(id).hidden = id !== which;
}

function closeAll() {
  session?.stream?.close();
  session = null;
  if (team) clearInterval(team.timer);
  team = null;
  stepCache = null;
  setConnection('idle');
}

/**
 * @param {string} status
 * @param {string} [detail]
 */
function setConnection(status, detail = '') {
  const c = el('connection');
  c.dataset.status = status;
  c.textContent = status === 'idle' ? '' : status;
  c.title = detail;
}

// ---- a swarm ----------------------------------------------------------------------------------

/** @param {string} swarmId */
function openSwarm(swarmId) {
  closeAll();
  const folder = new Folder();
  /** @type {SwarmSession} */
  const s = {
    swarmId,
    definitionId: null,
    events: [],
    folder,
    live: folder.snapshot(),
    previous: null,
    dirty: true,
    stream: null,
    row: null,
    streamStatus: 'connecting',
  };
  session = s;
  show('swarm-view');
  el('swarm-title').textContent = swarmId;
  el('swarm-definition').textContent = '';
  controls.showError('');
  playback.go(null);
  void api(`/inspector/api/swarms/${encodeURIComponent(swarmId)}`)
    .then((/** @type {SwarmRow} */ row) => {
      if (session !== s) return;
      s.row = row;
      s.definitionId = row.definitionId;
      list.ensure(row);
      draw();
    })
    .catch((err) => {
      if (session === s && !(err instanceof ApiError && err.status === 401)) showError(`Swarm ${swarmId}: ${errorText(err)}`);
    });
  s.stream = followSwarm(swarmId, {
    onEvent: (e) => {
      if (session !== s) return;
      s.events.push(e);
      s.folder.push(e);
      s.dirty = true;
      scheduleDraw();
    },
    onStatus: (status, detail) => {
      if (session !== s) return;
      s.streamStatus = status;
      setConnection(status, detail);
    },
  });
  draw(true);
}

/** @type {number | null} */
let frame = null;
let lastDraw = 0;
/** A redraw is due although no event came (the playback step moved). */
let forced = false;
/**
 * Draws on a coming frame: however many events or slider moves arrive meanwhile, once.
 * @param {boolean} [force]
 */
function scheduleDraw(force = false) {
  forced ||= force;
  if (frame !== null) return;
  const wait = Math.max(0, MIN_DRAW_MS - (performance.now() - lastDraw));
  frame = requestAnimationFrame(() => {
    if (wait > 0) {
      setTimeout(() => {
        frame = null;
        draw();
      }, wait);
    } else {
      frame = null;
      draw();
    }
  });
}

/**
 * Draws the selected swarm: live, or at the playback step.
 * @param {boolean} [force] redraw even when no event arrived (the step moved)
 */
function draw(force = false) {
  lastDraw = performance.now();
  force ||= forced;
  forced = false;
  const s = session;
  if (!s) return;
  if (!s.dirty && !force) return;
  if (s.dirty) {
    s.previous = s.live;
    s.live = s.folder.snapshot();
    s.dirty = false;
  }
  const events = s.events;
  const last = events.at(-1)?.seq ?? 0;
  playback.setLast(last);
  const step = playback.step;
  /** @type {FoldResult} */
  let view;
  /** @type {FoldDiff | null} */
  let diff;
  if (step === null) {
    view = s.live;
    diff = s.previous && s.previous.seq !== s.live.seq ? diffFolds(s.previous, s.live, events) : (stepCache?.diff ?? null);
    if (!s.previous || s.previous.seq === s.live.seq) {
      // The diff of the last step, once (playback's fold of it), when nothing newer came.
      if (!stepCache || stepCache.seq !== last || stepCache.count !== events.length) stepCache = { seq: last, count: events.length, ...stepAt(events, last) };
      diff = stepCache.diff;
    }
  } else {
    if (!stepCache || stepCache.seq !== step || stepCache.count !== events.length) stepCache = { seq: step, count: events.length, ...stepAt(events, step) };
    view = stepCache.at;
    diff = stepCache.diff;
  }
  s.definitionId ??= s.live.definitionId;
  el('swarm-definition').textContent = s.definitionId ?? '';
  const state = el('current-state');
  state.textContent = view.state || '—';
  state.dataset.mode = step === null ? 'live' : 'playback';
  state.dataset.state = view.state;
  chart.setActive(view.state, diff?.state?.from ?? null);
  el('playback-step').textContent = String(step ?? last);
  renderTree(el('tree'), view.tree, { rows: childRows(view), onOpen: (id) => (location.hash = `swarm=${encodeURIComponent(id)}`) });
  renderConversation(el('conversation'), view.conversation);
  timeline.set(events, step === null ? events.length : countThrough(events, step), step);
  if (step !== null) timeline.reveal(Math.max(0, countThrough(events, step) - 1));
  el('timeline-count').textContent = String(events.length);
  el('last-seq').textContent = String(last);
  renderDiff(el('diff'), diff);
  el('swarm-figures').replaceChildren(
    figure('turns', String(view.turns)),
    figure('tokens', `${count(view.tokens.input)} in · ${count(view.tokens.output)} out`),
    figure('model time', duration(view.tree.find((n) => n.kind === 'swarm')?.latencyMs ?? 0)),
  );
  controls.update(s.live.state, s.live.pauseQuestion);
}

/**
 * @param {string} caption
 * @param {string} value
 */
function figure(caption, value) {
  const f = document.createElement('span');
  f.className = 'figure';
  const c = document.createElement('span');
  c.className = 'caption';
  c.textContent = caption;
  const v = document.createElement('b');
  v.textContent = value;
  f.append(c, v);
  return f;
}

/**
 * The rows of the child swarms in a tree: from the list when it has them, else fetched by id
 * (a child run by another process is found in the shared store).
 * @param {FoldResult} view
 * @returns {Map<string, SwarmRow>}
 */
function childRows(view) {
  /** @type {Map<string, SwarmRow>} */
  const rows = new Map();
  for (const n of view.tree) {
    if (n.kind !== 'child-swarm') continue;
    const item = list.byKey.get(`swarm:${n.id}`);
    const row = item?.type === 'swarm' ? item.swarm : fetchedRows.get(n.id);
    if (row) rows.set(n.id, row);
    const stale = !row || (row.status !== 'completed' && row.status !== 'failed' && row.status !== 'stopped' && n.status !== 'running');
    if (stale && !fetching.has(n.id)) {
      fetching.add(n.id);
      void api(`/inspector/api/swarms/${encodeURIComponent(n.id)}`)
        .then((/** @type {SwarmRow} */ r) => {
          fetchedRows.set(n.id, r);
          draw(true);
        })
        .catch(() => undefined)
        .finally(() => setTimeout(() => fetching.delete(n.id), 2000));
    }
  }
  return rows;
}

// ---- a team -----------------------------------------------------------------------------------

/**
 * @param {string} definitionId
 * @param {string} teamId
 */
function openTeam(definitionId, teamId) {
  closeAll();
  show('team-view');
  el('team-title').textContent = teamId;
  el('team-definition').textContent = definitionId;
  const base = `/teams/${encodeURIComponent(definitionId)}/${encodeURIComponent(teamId)}`;
  const load = async () => {
    try {
      const [board, inbox, summary] = await Promise.all([api(`${base}/board`), api(`${base}/inbox`), api(base)]);
      if (team?.teamId !== teamId || team.definitionId !== definitionId) return;
      renderBoard(el('team-board'), board);
      renderInbox(el('team-inbox'), inbox);
      el('team-figures').replaceChildren(figure('status', String(summary?.status ?? '—')), figure('tasks', String(board.tasks.length)));
      showError('');
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) showError(`Team ${teamId}: ${errorText(err)}`);
    }
  };
  team = { definitionId, teamId, timer: setInterval(load, TEAM_EVERY_MS) };
  void load();
}

/** @param {unknown} err */
function errorText(err) {
  return err instanceof Error ? err.message : String(err);
}

// ---- start ------------------------------------------------------------------------------------

// The token first: every call below needs it.
takeTokenFromFragment();
window.addEventListener('hashchange', () => route());
void chart.load();
startAllStream();
void refreshOverview();
setInterval(() => void refreshOverview(), OVERVIEW_EVERY_MS);
route();
