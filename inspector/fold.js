// @ts-check
/**
 * The fold: a swarm's recorded events → what the page shows of it at one step: the swarm
 * machine's state value (a dotted path of machines/swarm.ts), the tree of agents, child swarms,
 * remote agents and tools with their turns, tokens and latency, the conversation, and the
 * pause's question. Pure (no DOM, no I/O): the page folds live events one at a time
 * ({@link Folder}) and folds the first N events for playback ({@link fold}); the unit tests
 * fold real recorded runs in Node.
 *
 * The machine's state is not in the events: it is read from the facts each transition emits.
 * A model response (`internal:llm-call` of the orchestrator, scope '') leads to
 * `awaitingHandoff` (a handoff planned), `running.acting` (calls to run), `running.deciding`
 * (a correction, or calls rejected up front) or a final state; the last result of the round
 * (`handoff-result` / `internal:tool-complete`) back to `running.thinking`, or to
 * `running.deciding` when a pause call waits or the turns are used up (the machine's
 * `lastCallThenThink` and `deciding` guards; the turn limit is read from `turn-completed`);
 * `paused`, `resumed` (back to what the pause interrupted) and the final facts as they say.
 * A state the machine only passes through within one step (a correction's `running.deciding`)
 * is shown at the event that step emitted first.
 *
 * @module
 */

/** @import { SwarmEvent, StatusEvent, LlmCallEvent, Part, A2AMessage } from './types.js' */

/**
 * A node of the tree. Agents, remote agents and tools are one node per name under their parent
 * (a long run calls the same tool thousands of times: the tree stays small); child swarms are
 * one node each (each is a swarm of its own, opened by its id).
 * @typedef {Object} TreeNode
 * @property {string} key unique in the tree: `swarm`, `agent:<id>`, `remote:<id>`, `child:<swarmId>`, `<parent key>/tool:<name>`
 * @property {'swarm' | 'agent' | 'child-swarm' | 'remote' | 'tool'} kind
 * @property {string} id the swarm id, agent id, child swarm id, remote agent name or tool name
 * @property {string} label what to show beside the id (a definition id, '' when none)
 * @property {string | null} parent the parent's key
 * @property {'running' | 'done' | 'failed' | 'paused' | 'stopped'} status
 * @property {number} turns model responses (tools: 0)
 * @property {number} calls handoffs to it, or calls of the tool
 * @property {number} inputTokens
 * @property {number} outputTokens
 * @property {number} latencyMs model time (swarm, agent), call time (tool, remote, child swarm)
 * @property {number} open calls in flight
 * @property {number} seq the last event that changed it
 */

/**
 * One entry of the conversation. `nested`: said inside a handoff (an agent's own exchange).
 * @typedef {Object} ConversationMessage
 * @property {number} seq
 * @property {'user' | 'assistant' | 'tool' | 'status'} role
 * @property {string} speaker
 * @property {string} text
 * @property {string[]} calls the tool calls of a model response, as `name(arguments)`
 * @property {boolean} nested
 */

/**
 * The swarm as it was after event `seq`.
 * @typedef {Object} FoldResult
 * @property {number} seq the last event folded (0: none)
 * @property {number} count how many events were folded
 * @property {string} state the machine's state value, dotted (`running.thinking`); '' before any event
 * @property {string | null} swarmId
 * @property {string | null} definitionId
 * @property {TreeNode[]} tree parents before their children
 * @property {ConversationMessage[]} conversation
 * @property {string | null} pauseQuestion the pause's question while paused
 * @property {number} turns the orchestrator's turns
 * @property {{ input: number, output: number }} tokens every model call's tokens in this stream (orchestrator and agents)
 * @property {string | null} outcome the final status message (result, failure or stop reason)
 */

/** The states after which nothing follows. */
export const FINAL_STATES = new Set(['completed', 'failed', 'stopped']);

const HANDOFF_KINDS = new Set(['agent', 'remote', 'swarm']);
const SPAWNED_KINDS = new Set(['tool', 'agent', 'remote', 'swarm']);

/**
 * The text of an A2A message's parts: text parts as they are, files named (`[file name (type)]`,
 * a run's input as sent), else data parts as JSON.
 * @param {Part[] | undefined} parts
 */
export function partsText(parts) {
  if (!parts) return '';
  const texts = parts.flatMap((p) => (p.kind === 'text' ? [p.text] : p.kind === 'file' ? [fileLabel(p.file)] : []));
  if (texts.length > 0) return texts.join('\n');
  return parts.map((p) => (p.kind === 'data' ? JSON.stringify(p.data) : '')).join('\n');
}

/**
 * How a file part reads in the conversation: its name and type, where it lives when it is a URL.
 * @param {{ name?: string, mimeType?: string, uri?: string }} file
 */
function fileLabel(file) {
  const type = file.mimeType ? ` (${file.mimeType})` : '';
  return `[file ${file.name ?? ''}${type}${file.uri ? ` ${file.uri}` : ''}]`;
}

/**
 * The time of an event in ms since the epoch (internal events carry a number, public ones an ISO string).
 * @param {SwarmEvent} e
 * @returns {number | null}
 */
export function eventTime(e) {
  if ('timestamp' in e && typeof e.timestamp === 'number') return e.timestamp;
  if ('status' in e && e.status && typeof e.status.timestamp === 'string') {
    const t = Date.parse(e.status.timestamp);
    return Number.isNaN(t) ? null : t;
  }
  return null;
}

/**
 * Folds events one at a time. `push` takes the events in `seq` order; `snapshot` copies what
 * the page renders (the tree's nodes and the conversation's array; messages are never changed
 * once made, so they are shared).
 */
export class Folder {
  constructor() {
    /** @type {number} */ this.seq = 0;
    /** @type {number} */ this.count = 0;
    /** @type {string} */ this.state = '';
    /** @type {string | null} */ this.swarmId = null;
    /** @type {string | null} */ this.definitionId = null;
    /** @type {Map<string, TreeNode>} */ this.nodes = new Map();
    /** @type {ConversationMessage[]} */ this.conversation = [];
    /** @type {string | null} */ this.pauseQuestion = null;
    /** @type {number} */ this.turns = 0;
    /** @type {number} */ this.inputTokens = 0;
    /** @type {number} */ this.outputTokens = 0;
    /** @type {string | null} */ this.outcome = null;
    /** The orchestrator's calls of the open round still running, by call id → kind. @type {Map<string, string>} */
    this.pending = new Map();
    /** Every planned call's kind by call id (a remote handoff's fact reads like an agent's). @type {Map<string, string>} */
    this.callKinds = new Map();
    /** A pause call of the open round waits for a human. */
    this.pausePending = false;
    /** What a pause returns to (the machine's `pause.from`). @type {'model' | 'thinking' | 'round' | 'limit'} */
    this.pauseFrom = 'round';
    /** Handoff calls in flight: call id → { node key, start time }. @type {Map<string, { key: string, at: number | null }>} */
    this.handoffs = new Map();
    /** Tool calls in flight: call id → { node key, start time }. @type {Map<string, { key: string, at: number | null }>} */
    this.tools = new Map();
    /** An agent run's scope → its node key. @type {Map<string, string>} */
    this.scopes = new Map();
  }

  /**
   * Folds one event (the next in `seq` order).
   * @param {SwarmEvent} e
   */
  push(e) {
    this.seq = e.seq;
    this.count++;
    if (this.swarmId === null) this.swarmId = e.swarmId;
    switch (e.kind) {
      case 'task':
        this.definitionId = e.metadata.definitionId;
        this.root(e.seq);
        this.state = 'running.thinking';
        for (const m of e.history ?? []) this.say(e.seq, 'user', 'user', messageText(m), false);
        break;
      case 'status-update':
        this.fact(e);
        break;
      case 'internal:llm-call':
        this.llmCall(e);
        break;
      case 'internal:tool-start': {
        const key = this.toolNode(e.agent, e.toolName, e.seq);
        this.tools.set(e.callId, { key, at: e.timestamp });
        const node = this.nodes.get(key);
        if (node) node.open++;
        if (this.isOrchestrator(e.agent) && this.state !== 'awaitingHandoff' && this.state.startsWith('running')) this.state = 'running.acting';
        break;
      }
      case 'internal:tool-complete': {
        const started = this.tools.get(e.callId);
        const key = started?.key ?? this.toolNode(e.agent, e.toolName, e.seq);
        const node = this.nodes.get(key);
        if (node) {
          if (started) {
            node.open = Math.max(0, node.open - 1);
            if (started.at !== null) node.latencyMs += Math.max(0, e.timestamp - started.at);
          } else node.calls++;
          node.status = e.ok ? (node.open > 0 ? 'running' : 'done') : 'failed';
          node.seq = e.seq;
        }
        this.tools.delete(e.callId);
        this.say(e.seq, 'tool', e.toolName, e.content, !this.isOrchestrator(e.agent));
        if (this.isOrchestrator(e.agent)) this.callDone(e.callId);
        break;
      }
      default:
        // Checkpoints and artifacts change nothing shown: the result is the final status's message.
        break;
    }
  }

  /** @param {string} agent */
  isOrchestrator(agent) {
    return agent === this.definitionId;
  }

  /** The swarm's own node. @param {number} seq */
  root(seq) {
    if (!this.nodes.has('swarm')) {
      this.nodes.set('swarm', newNode('swarm', 'swarm', this.swarmId ?? '', this.definitionId ?? '', null, seq));
    }
    return /** @type {TreeNode} */ (this.nodes.get('swarm'));
  }

  /**
   * The node of `key`, made under `parent` when new.
   * @param {string} key @param {TreeNode['kind']} kind @param {string} id @param {string} label @param {string} parent @param {number} seq
   */
  node(key, kind, id, label, parent, seq) {
    let n = this.nodes.get(key);
    if (!n) {
      this.root(seq);
      n = newNode(key, kind, id, label, parent, seq);
      this.nodes.set(key, n);
    }
    return n;
  }

  /**
   * A handoff began: its node runs (timed from `at`), and one of the orchestrator's moves the
   * swarm to `awaitingHandoff` unless it is paused or over.
   * @param {string} key @param {TreeNode} n @param {string} callId @param {string} from @param {number | null} at
   */
  openHandoff(key, n, callId, from, at) {
    n.calls++;
    n.open++;
    n.status = 'running';
    this.handoffs.set(callId, { key, at });
    if (this.isOrchestrator(from) && !FINAL_STATES.has(this.state) && this.state !== 'paused') this.state = 'awaitingHandoff';
  }

  /**
   * The node of a tool called by `agent` (the orchestrator or an agent): its key.
   * @param {string} agent @param {string} toolName @param {number} seq
   */
  toolNode(agent, toolName, seq) {
    const parent = this.isOrchestrator(agent) ? 'swarm' : this.agentKey(agent);
    if (parent !== 'swarm') this.node(parent, 'agent', agent, '', 'swarm', seq);
    const key = `${parent}/tool:${toolName}`;
    this.node(key, 'tool', toolName, '', parent, seq);
    return key;
  }

  /** @param {string} agentId */
  agentKey(agentId) {
    return this.nodes.has(`remote:${agentId}`) && !this.nodes.has(`agent:${agentId}`) ? `remote:${agentId}` : `agent:${agentId}`;
  }

  /**
   * @param {number} seq @param {ConversationMessage['role']} role @param {string} speaker @param {string} text @param {boolean} nested
   * @param {string[]} [calls]
   */
  say(seq, role, speaker, text, nested, calls = []) {
    this.conversation.push({ seq, role, speaker, text, calls, nested });
  }

  /** @param {LlmCallEvent} e */
  llmCall(e) {
    const input = e.usage?.inputTokens ?? 0;
    const output = e.usage?.outputTokens ?? 0;
    this.inputTokens += input;
    this.outputTokens += output;
    const orchestrator = e.scope === '';
    /** @type {TreeNode} */
    let node;
    if (orchestrator) {
      node = this.root(e.seq);
      this.turns = Math.max(this.turns, e.turn);
    } else {
      const key = this.scopes.get(e.scope) ?? this.scopeKey(e.scope, e.agent);
      this.scopes.set(e.scope, key);
      node = this.node(key, 'agent', e.agent, '', 'swarm', e.seq);
    }
    node.turns++;
    node.inputTokens += input;
    node.outputTokens += output;
    node.latencyMs += e.durationMs;
    node.seq = e.seq;
    for (const c of e.calls) this.callKinds.set(c.id, c.kind);
    const calls = (e.response.toolCalls ?? []).map((c) => `${c.name}(${c.arguments})`);
    this.say(e.seq, 'assistant', e.agent, e.response.text ?? '', !orchestrator, calls);
    if (!orchestrator) return;
    // The orchestrator's response: where the machine goes from `thinking` (machines/swarm.ts).
    const verdict = e.verdict.type;
    this.pending = new Map(e.calls.filter((c) => SPAWNED_KINDS.has(c.kind)).map((c) => [c.id, c.kind]));
    this.pausePending = e.calls.some((c) => c.kind === 'pause');
    if (verdict === 'fail') this.state = 'failed';
    else if (verdict === 'complete') this.state = 'completed';
    else if (e.calls.some((c) => HANDOFF_KINDS.has(c.kind))) this.state = 'awaitingHandoff';
    else if (this.pending.size > 0) this.state = 'running.acting';
    else this.state = 'running.deciding';
  }

  /**
   * The agent node an agent run's scope (`<swarm>:t<turn>:<call id>`) belongs to.
   * @param {string} scope @param {string} agent
   */
  scopeKey(scope, agent) {
    for (const [callId, h] of this.handoffs) if (scope.endsWith(`:${callId}`)) return h.key;
    return `agent:${agent}`;
  }

  /**
   * One of the orchestrator's calls finished: the round closes with its last call.
   * @param {string} callId
   */
  callDone(callId) {
    if (!this.pending.delete(callId)) return;
    // The machine's `lastCallThenThink`: straight back to thinking unless a pause call waits
    // (the turn limit is checked at `turn-completed`, which follows in the same step).
    if (this.pending.size === 0 && !FINAL_STATES.has(this.state) && this.state !== 'paused') this.state = this.pausePending ? 'running.deciding' : 'running.thinking';
  }

  /** @param {StatusEvent} e */
  fact(e) {
    const f = e.metadata;
    const at = eventTime(e);
    switch (f.type) {
      case 'started':
        this.definitionId ??= f.definitionId;
        this.root(e.seq).label ||= f.definitionId;
        if (this.state === '') this.state = 'running.thinking';
        break;
      case 'agent-handoff': {
        const remote = this.callKinds.get(f.callId) === 'remote';
        const key = `${remote ? 'remote' : 'agent'}:${f.to}`;
        this.openHandoff(key, this.node(key, remote ? 'remote' : 'agent', f.to, remote ? 'remote' : '', 'swarm', e.seq), f.callId, f.from, at);
        break;
      }
      case 'swarm-handoff': {
        const key = `child:${f.childSwarmId}`;
        this.openHandoff(key, this.node(key, 'child-swarm', f.childSwarmId, f.to, 'swarm', e.seq), f.callId, f.from, at);
        break;
      }
      case 'child-swarm': {
        const n = this.node(`child:${f.childSwarmId}`, 'child-swarm', f.childSwarmId, f.definitionId, 'swarm', e.seq);
        n.status =
          f.lifecycle === 'completed'
            ? 'done'
            : f.lifecycle === 'failed'
              ? 'failed'
              : f.lifecycle === 'stopped'
                ? 'stopped'
                : f.lifecycle === 'paused'
                  ? 'paused'
                  : 'running';
        n.seq = e.seq;
        break;
      }
      case 'handoff-result': {
        const h = this.handoffs.get(f.callId);
        const key = h?.key ?? (f.childSwarmId ? `child:${f.childSwarmId}` : this.agentKey(f.from));
        const n = this.nodes.get(key);
        if (n) {
          n.open = Math.max(0, n.open - 1);
          if (h && h.at !== null && at !== null) n.latencyMs += Math.max(0, at - h.at);
          // A child swarm's own lifecycle facts say how it ended; an agent's result says it here.
          if (n.kind !== 'child-swarm' || !f.ok) n.status = f.ok ? (n.open > 0 ? 'running' : 'done') : 'failed';
          n.seq = e.seq;
        }
        this.handoffs.delete(f.callId);
        this.say(e.seq, 'tool', f.from, f.content, false);
        if (this.isOrchestrator(f.to)) this.callDone(f.callId);
        break;
      }
      case 'tool-call': {
        const key = this.toolNode(f.agent, f.toolName, e.seq);
        const n = /** @type {TreeNode} */ (this.nodes.get(key));
        n.calls++;
        n.status = 'running';
        n.seq = e.seq;
        break;
      }
      case 'turn-completed':
        this.turns = Math.max(this.turns, f.turn);
        if (this.state.startsWith('running') || this.state === 'awaitingHandoff') {
          this.state = this.pausePending || f.turn >= f.maxTurns ? 'running.deciding' : 'running.thinking';
        }
        break;
      case 'paused':
        this.pauseFrom = f.reason.type === 'LIMIT' ? 'limit' : this.pausePending ? 'model' : this.state === 'running.thinking' ? 'thinking' : 'round';
        this.state = 'paused';
        this.pauseQuestion = f.reason.message;
        this.root(e.seq).status = 'paused';
        this.say(e.seq, 'status', this.definitionId ?? 'swarm', `Paused: ${f.reason.message}`, false);
        break;
      case 'extended':
        this.say(e.seq, 'status', this.definitionId ?? 'swarm', `Limit raised: maxTurns ${f.maxTurns} (was ${f.previousMaxTurns})`, false);
        break;
      case 'migrated':
        this.say(e.seq, 'status', this.definitionId ?? 'swarm', `Migrated after a deploy: ${f.definitionId} version ${f.from} → ${f.to}`, false);
        break;
      case 'resumed':
        this.pauseQuestion = null;
        this.root(e.seq).status = 'running';
        if (f.message) this.say(e.seq, 'user', 'human', f.message, false);
        // Back from a limit: extended, it thinks again (the machine's deciding → thinking).
        if (this.pauseFrom === 'model' || this.pauseFrom === 'thinking' || this.pauseFrom === 'limit') this.state = 'running.thinking';
        else if ([...this.pending.values()].some((k) => HANDOFF_KINDS.has(k))) this.state = 'awaitingHandoff';
        else if (this.pending.size > 0) this.state = 'running.acting';
        else this.state = 'running.deciding';
        this.pausePending = false;
        break;
      case 'completed':
      case 'failed':
      case 'stopped': {
        this.state = f.type;
        this.pauseQuestion = null;
        this.pending.clear();
        const text = e.status.message ? messageText(e.status.message) : f.type === 'completed' ? JSON.stringify(f.result) : f.reason;
        this.outcome = text;
        this.root(e.seq).status = f.type === 'completed' ? 'done' : f.type === 'failed' ? 'failed' : 'stopped';
        if (f.type !== 'completed') this.say(e.seq, 'status', this.definitionId ?? 'swarm', `${f.type === 'failed' ? 'Failed' : 'Stopped'}: ${text}`, false);
        break;
      }
    }
  }

  /**
   * The swarm as folded so far: copies of what changes later, so a snapshot stays as it was.
   * @returns {FoldResult}
   */
  snapshot() {
    return {
      seq: this.seq,
      count: this.count,
      state: this.state,
      swarmId: this.swarmId,
      definitionId: this.definitionId,
      tree: [...this.nodes.values()].map((n) => ({ ...n })),
      conversation: this.conversation.slice(),
      pauseQuestion: this.state === 'paused' ? this.pauseQuestion : null,
      turns: this.turns,
      tokens: { input: this.inputTokens, output: this.outputTokens },
      outcome: this.outcome,
    };
  }
}

/**
 * @param {string} key @param {TreeNode['kind']} kind @param {string} id @param {string} label @param {string | null} parent @param {number} seq
 * @returns {TreeNode}
 */
function newNode(key, kind, id, label, parent, seq) {
  return { key, kind, id, label, parent, status: 'running', turns: 0, calls: 0, inputTokens: 0, outputTokens: 0, latencyMs: 0, open: 0, seq };
}

/** @param {A2AMessage} m */
function messageText(m) {
  return partsText(m.parts);
}

/**
 * The swarm after its events up to `seq` (all of them by default): the first events of
 * `events` whose `seq` is at most `seq`, folded. Reads `events` only.
 * @param {readonly SwarmEvent[]} events in `seq` order
 * @param {number} [seq]
 * @returns {FoldResult}
 */
export function fold(events, seq = Number.POSITIVE_INFINITY) {
  const folder = new Folder();
  for (const e of events) {
    if (e.seq > seq) break;
    folder.push(e);
  }
  return folder.snapshot();
}

/**
 * The index of the first event whose `seq` is greater than `seq` (binary search: the events
 * are in `seq` order), i.e. how many events are at or before `seq`.
 * @param {readonly { seq: number }[]} events
 * @param {number} seq
 */
export function countThrough(events, seq) {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (/** @type {{ seq: number }} */ (events[mid]).seq <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The active states of a state value: the value and each of its ancestors
 * (`running.thinking` → `running.thinking`, `running`).
 * @param {string} state
 */
export function activeStates(state) {
  if (!state) return [];
  const parts = state.split('.');
  return parts.map((_, i) => parts.slice(0, i + 1).join('.')).reverse();
}
