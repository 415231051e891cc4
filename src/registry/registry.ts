/**
 * The agent registry (seed 003): agents found by their A2A agent cards (or given as local
 * definitions), health-checked, and tasks dispatched to the best available agent.
 *
 * - **Registering** a remote agent reads and validates its card (`./card-check.ts`) and checks
 *   its health at once; a card that cannot be read or lacks required fields is refused with a
 *   `TeamError` naming the URL and what is wrong.
 * - **Bounds** (`src/a2a/bounded-fetch.ts`, `src/a2a/endpoint-policy.ts`, shared with the A2A
 *   client): every card fetch, the registry's and the one its A2A client makes before each call
 *   (the client given the same `timeoutMs`, `maxCardBytes` and `allowedHosts`), has one deadline
 *   for headers and body (`timeoutMs`) and a byte limit (`maxCardBytes`), and follows redirects
 *   only within the card's origin; health checks and calls go only to http(s) interfaces on the
 *   card's origin or on `allowedHosts`, a card naming others being refused.
 * - **Health** (`./health.ts`): every `healthIntervalMs` (a timer that does not keep the
 *   process alive, stopped by `close()`), on demand with `checkHealth()`, and right after a
 *   send to the agent failed. Each check re-reads the card, so changed skills are picked up.
 * - **Selection** (`./selection.ts`): healthy agents with the skill, lowest load, first
 *   registered on ties.
 * - **Dispatch**: a task waits for its dependencies (`./dispatch.ts`), then picks its agent
 *   (at start, not at submission: load and health are those of that moment) and is sent over
 *   A2A with our client (`src/a2a/client.ts`: streaming, resubscribe, v0.3 peers), tracked
 *   `submitted → working → completed | failed` with timestamps. An agent that asks for input
 *   puts the task in `input-required` with its question until {@link AgentRegistry.answer}.
 * - **Retry** (`./retry.ts`): a task (by skill) or handoff whose agent failed and is then found
 *   unhealthy goes to the next best agent not yet tried; a healthy agent's failure is its answer.
 * - **Handoffs**: `handoff.toBestAgent(skill)` in a swarm of `createRuntime({ registry })`
 *   calls {@link AgentRegistry.callBest} (see `src/catalog/best-agent.ts`).
 * - **Closing** interrupts what is under way without recording an outcome: tasks stay as they
 *   were and calls reject, so a restart (a registry restored from the snapshot, a swarm's call
 *   run again) picks them up where they were.
 *
 * All state is plain JSON ({@link AgentRegistry.snapshot}) and time comes from `now`.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { A2ARemoteOptions } from '../a2a/client.js';
import type { A2APushInbox } from '../a2a/push-inbox.js';
import { abortable } from '../util/abort.js';
import type { AgentDefinition } from '../define/agent.js';
import type { RemoteAgentInput } from '../../machines/calls/remote.js';
import type { CallResult } from '../../machines/calls/kind.js';
import type { RemoteAgentClient, RemoteHooks } from '../a2a/remote.js';
import { a2aRemoteAgents } from '../a2a/lazy.js';
import { TeamError } from '../errors.js';
import { DEFAULT_CARD_TIMEOUT_MS, DEFAULT_MAX_CARD_BYTES } from '../a2a/bounded-fetch.js';
import { type AllowedHosts, checkAllowedHosts } from '../a2a/endpoint-policy.js';
import { type CardFetchOptions, type CheckedCard, fetchAgentCard, reasonOf, type RegistrySkill } from './card-check.js';
import { answeredTask, askTask, awaitDependencies, cancelTask, checkDispatch, endTask, isTerminal, newTask, startTask } from './dispatch.js';
import { checkAgentHealth, type HealthResult, pingAgent } from './health.js';
import { type Outcome, sendWithRetry } from './retry.js';
import { hasSkill, selectAgent } from './selection.js';
import type { AgentInfo, DispatchSpec, RegistrySnapshot, RegistryTask } from './types.js';

/** Runs a local agent on one message and resolves with its answer (rejects when it fails). */
export type LocalAgentRun = (message: string, signal: AbortSignal) => Promise<string>;

/** Options of {@link createAgentRegistry}. */
export interface AgentRegistryOptions {
  /** How often every remote agent is checked (default 30 000 ms; 0 turns periodic checks off). */
  healthIntervalMs?: number;
  /**
   * How long one card fetch or ping may take, from the request to the last byte of the answer
   * (default 5000 ms). Past it the request is aborted: a registration fails (`card-unreachable`),
   * a health check finds the agent unhealthy, a call fails. It bounds the card the A2A client
   * reads before each call too, but not the call itself.
   */
  timeoutMs?: number;
  /**
   * The largest agent card the registry reads, in bytes, counted as the body arrives (after
   * decompression); default 1 MiB (1 048 576). A larger card is refused (`invalid-card`, the
   * message naming this limit) and the request aborted at the limit, without buffering more.
   * Health-check answers are held to it too, and the card the A2A client reads before each call.
   */
  maxCardBytes?: number;
  /**
   * Hosts an agent card may point health checks and calls at besides its own origin. A card
   * names its service URLs (A2A `supportedInterfaces`, v0.3 `url` and `additionalInterfaces`)
   * and the registry sends requests there, with `headers`; so every interface of a binding the
   * registry speaks (JSON-RPC, HTTP+JSON) must be an `http:` or `https:` URL (always) and either
   * on the origin of the card URL (same scheme, host and port; `localhost`, `127.0.0.0/8` and
   * `[::1]` counting as one host) or on a host listed here, else the card is refused
   * (`invalid-card`, naming the interface) or, when it changes later, the agent is unhealthy and
   * calls to it are refused before anything is sent. Entries: `host` (any port), `host:port`,
   * `[ipv6]`, `[ipv6]:port`, or `*` (any host). Default: none, the card's origin only. Calls
   * made by a custom {@link AgentRegistryOptions.client} are that client's to guard.
   */
  allowedHosts?: AllowedHosts;
  /** The clock (ms since the epoch), default `Date.now`. */
  now?: () => number;
  /** Headers for every request to agents (typically `authorization`), as for our A2A client. */
  headers?: A2ARemoteOptions['headers'];
  /** The fetch for cards and health checks, and for the default client (default: the global one). */
  fetch?: typeof fetch;
  /**
   * The A2A client tasks are sent with (default: {@link a2aRemoteAgents} with `headers`, `fetch`,
   * `timeoutMs`, `maxCardBytes` and `allowedHosts`, whose card fetches and destinations are
   * bounded as above).
   */
  client?: RemoteAgentClient;
  /**
   * Ask peers for push notifications instead of holding a stream open, as
   * `a2aRemoteAgents({ pushInbox })` does (see `src/a2a/push-inbox.ts` and docs/a2a-push.md): a
   * task sent to a peer whose card advertises `capabilities.pushNotifications` goes with a
   * webhook of this inbox, and each notification re-reads the task (`GetTask`). The inbox must
   * be served (`serve(runtime, { pushInbox })`) or have a `publicUrl`; peers without push are
   * streamed to as before. Used by the default client only.
   */
  pushInbox?: A2APushInbox;
  /**
   * This registry's id, the prefix of the A2A message ids it sends (`<id>:<taskId>`), so a
   * restored registry re-sends the same message for the same task (default: a random UUID).
   */
  id?: string;
  /** A {@link AgentRegistry.snapshot} to start from: its remote agents, its tasks (unfinished ones run again). */
  restore?: RegistrySnapshot;
}

/** The agent registry. See the module doc. */
export interface AgentRegistry {
  /** The registry's id (see {@link AgentRegistryOptions.id}). */
  readonly id: string;
  /**
   * Registers the agent whose A2A card is at `cardUrl` under `options.id` (default: the card's
   * name), after reading and validating the card and checking its health. Rejects with a
   * `TeamError`: `card-unreachable`, `invalid-card`, `duplicate-agent` (the id or the URL is
   * registered already).
   */
  register(cardUrl: string, options?: { id?: string }): Promise<AgentInfo>;
  /**
   * Registers a local agent definition, run in-process by `run`. Its skills are the agent
   * itself (id, name, description, tag `agent`) and each of its tools (tag `tool`); it is
   * always healthy.
   */
  registerLocal(agent: AgentDefinition, run: LocalAgentRun): AgentInfo;
  /** Removes an agent; its running tasks go on. False when there was none. */
  unregister(agentId: string): boolean;
  /** Every agent, in registration order; with `skill`, those having it (healthy or not). */
  agents(filter?: { skill?: string }): AgentInfo[];
  agent(agentId: string): AgentInfo | undefined;
  /** Checks one agent now (or all); resolves with their views after the check. */
  checkHealth(agentId?: string): Promise<AgentInfo[]>;
  /** The agent a task for `skill` would go to now (see `selectAgent` for the scoring), or undefined. */
  select(skill: string): AgentInfo | undefined;
  /**
   * Submits a task and returns it (`submitted`); it runs in the background once its
   * dependencies allow. Throws a `TeamError` for a bad spec (`duplicate-task`, `invalid-task`,
   * `unknown-task` for a dependency, `unknown-agent`) or after `close()` (its reason, see
   * {@link closeReason}). A task for which no healthy agent has the skill, or whose agent fails,
   * ends `failed` with the reason.
   */
  dispatch(spec: DispatchSpec): RegistryTask;
  /** A task as it is now, or undefined. */
  task(taskId: string): RegistryTask | undefined;
  /** Every task, in submission order. */
  tasks(): RegistryTask[];
  /**
   * Resolves with the task once it has ended or waits for an answer (`input-required`);
   * rejects with `unknown-task`, when `signal` aborts, or with the registry's close reason
   * (see {@link closeReason}) when it is closed before the task ends (the task is left
   * unfinished then, see {@link close}).
   */
  wait(taskId: string, signal?: AbortSignal): Promise<RegistryTask>;
  /**
   * Answers the question of a task in `input-required`: the answer goes to its agent on the same
   * A2A task, and the task is `working` again (returned). Throws a `TeamError`: `unknown-task`,
   * `wrong-state` when the task is not waiting for input.
   */
  answer(taskId: string, text: string): RegistryTask;
  /**
   * Cancels a task that has not ended: it is `canceled` at once (returned; `reason`, default
   * `Canceled`, is its `error`), its waiters are answered, and the A2A task it went to is
   * canceled on its peer (`CancelTask`, v0.3 `tasks/cancel`; best effort: the peer's own state
   * is its business); a local agent's run is aborted. Tasks blocked on it fail. Canceling a
   * canceled task returns it as it is. Throws a `TeamError`: `unknown-task`, `wrong-state` when
   * the task completed or failed.
   */
  cancel(taskId: string, reason?: string): RegistryTask;
  /**
   * Runs one call of a swarm's handoff to the best agent for `skill` (`handoff.toBestAgent`):
   * the best healthy agent with the skill, chosen now and counted in its load while the call
   * runs; on to the next when it is broken (see `./retry.ts`). A remote agent is sent the
   * request over A2A with the message id `input.key` and may ask `hooks.askHuman` (the calling
   * swarm pauses); a local one runs in-process. Resolves with the answer and the agent that
   * gave it; no agent for the skill, or one that failed, is `{ ok: false }` with the reason (a
   * tool error the model reads). Rejects when `signal` aborts, and with the close reason when
   * the registry is (or gets) closed: the call is interrupted, not answered, so the calling
   * swarm can run it again after a restart (see `RemoteAgents.run`).
   */
  callBest(skill: string, input: RemoteAgentInput, hooks: RemoteHooks, signal: AbortSignal): Promise<CallResult>;
  /**
   * Sends one message to the named agent and resolves with its answer (counted in its load
   * meanwhile, but not recorded as a task). Rejects with a `TeamError`: `unknown-agent`,
   * `no-agent` when the agent is unhealthy, `agent-failed` when it failed or could not be reached,
   * the close reason when the registry is (or gets) closed.
   */
  message(agentId: string, text: string, signal?: AbortSignal): Promise<string>;
  /** The registry as JSON (remote agents and all tasks). */
  snapshot(): RegistrySnapshot;
  /**
   * Takes in a {@link snapshot} (as the `restore` option does at creation): its remote agents
   * not registered here yet (by id and card URL), its tasks not known here yet, the unfinished
   * ones run again with the same message ids. Throws `invalid-snapshot` for an unknown version.
   */
  restore(snapshot: RegistrySnapshot): void;
  /**
   * Calls `listener` after each change of what {@link snapshot} holds (agents registered or
   * checked, tasks and their states); returns the unsubscribe. A runtime keeping the registry
   * in its store listens here.
   */
  onChange(listener: () => void): () => void;
  /**
   * Stops the health timer, every check and every send. Unfinished tasks are left as they were
   * (no state change, no {@link onChange} call), so the snapshot kept in a runtime's store still
   * holds them unfinished and a registry restored from it sends them again; their remote tasks
   * are left running, so that re-send re-attaches to them. Calls made afterwards throw `reason`
   * (default: `TeamError('registry-closed')`); a runtime keeping the registry closes it with
   * `registry-in-use` when another runtime took its record (`./persistence.ts`).
   */
  close(reason?: TeamError): Promise<void>;
  /** Why the registry is closed (the `reason` of {@link close}), or undefined while it is open. */
  readonly closeReason: TeamError | undefined;
}

/** One message to an agent: the A2A message id is `key`, the same for every agent tried. */
interface Message {
  swarmId: string;
  callId: string;
  key: string;
  text: string;
}

interface Agent {
  info: AgentInfo;
  run?: LocalAgentRun;
  /** The check in progress, so concurrent requests share it. */
  checking?: Promise<void>;
}

/** The hooks of a direct message: nobody stands behind it to answer, so a question fails it. */
const NO_ANSWERS: RemoteHooks = {
  askHuman: (question) => Promise.reject(new Error(`it asked for input, which a direct message cannot give: ${question}`)),
  swarmEnded: () => true,
};

const DEFAULT_HEALTH_INTERVAL_MS = 30_000;

/**
 * Creates an agent registry (see the module doc).
 *
 * @example
 * import { createAgentRegistry } from 'xswarm';
 * const registry = createAgentRegistry({ healthIntervalMs: 10_000 });
 * await registry.register('http://127.0.0.1:4000/a2a/translator/.well-known/agent-card.json');
 * const task = registry.dispatch({ skill: 'translate', message: 'Bonjour' });
 * console.log((await registry.wait(task.id)).result);
 */
export function createAgentRegistry(options: AgentRegistryOptions = {}): AgentRegistry {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? DEFAULT_CARD_TIMEOUT_MS;
  const maxCardBytes = options.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES;
  if (!Number.isSafeInteger(maxCardBytes) || maxCardBytes <= 0) {
    throw new TypeError(`createAgentRegistry: maxCardBytes must be a positive integer, not ${String(maxCardBytes)}`);
  }
  const allowedHosts = [...(options.allowedHosts ?? [])];
  checkAllowedHosts(allowedHosts, 'createAgentRegistry: allowedHosts');
  const registryId = options.id ?? options.restore?.registryId ?? randomUUID();
  const closing = new AbortController();
  /** Options of every network request: our fetch and headers, the bounds, where cards may point; close() aborts them. */
  const fetchOptions: CardFetchOptions = {
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    signal: closing.signal,
    timeoutMs,
    maxCardBytes,
    allowedHosts,
  };
  /**
   * The default A2A client of each agent, by card URL (what it learnt of a peer, such as
   * speaking only v0.3, goes with the agent at `unregister`). It reads the agent's card again
   * before each call and calls the interface that card names: given the registry's bounds and
   * `allowedHosts`, it holds the card to the rules of registration (`src/a2a/agent-fetch.ts`).
   * Made at the first call: the client refuses a `timeoutMs` the registry has always taken, and
   * creating a registry must not start failing over it (such a registry reaches no agent anyway).
   */
  const clients = new Map<string, RemoteAgentClient>();
  const clientFor = (cardUrl: string): RemoteAgentClient => {
    if (options.client) return options.client;
    let client = clients.get(cardUrl);
    if (!client) {
      client = a2aRemoteAgents({
        ...(options.headers ? { headers: options.headers } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.pushInbox ? { pushInbox: options.pushInbox } : {}),
        timeoutMs,
        maxCardBytes,
        allowedHosts,
      });
      clients.set(cardUrl, client);
    }
    return client;
  };

  const agents = new Map<string, Agent>();
  const tasks = new Map<string, RegistryTask>();
  /** Resolves with each task once it has ended. */
  const ended = new Map<string, { promise: Promise<RegistryTask>; resolve: (t: RegistryTask) => void }>();
  /** Who waits for the next change of a task (`wait` on a task neither ended nor asking). */
  const watchers = new Map<string, (() => void)[]>();
  /** Answers awaited by tasks in `input-required`. */
  const questions = new Map<string, (answer: string) => void>();
  /** Who hears of changes to what {@link AgentRegistry.snapshot} holds. */
  const listeners = new Set<() => void>();
  const announce = () => {
    for (const listener of listeners) listener();
  };
  let nextOrder = options.restore?.nextOrder ?? 0;

  const copy = <T>(value: T): T => structuredClone(value);
  const assertOpen = () => {
    closing.signal.throwIfAborted();
  };
  /** The runs of unfinished tasks, which close() waits for (each stops at once then). */
  const runs = new Set<Promise<void>>();
  /** What cancels each unfinished task's run (see `cancel`). */
  const cancels = new Map<string, AbortController>();

  const applyCard = (info: AgentInfo, card: CheckedCard) => {
    info.name = card.name;
    info.description = card.description;
    info.skills = card.skills;
    info.endpoint = card.endpoint.url;
  };
  const applyHealth = (info: AgentInfo, result: HealthResult) => {
    const at = now();
    info.lastChecked = at;
    if (result.card) applyCard(info, result.card);
    if (result.healthy) {
      info.health = 'healthy';
      info.lastHealthy = at;
      delete info.lastError;
    } else {
      info.health = 'unhealthy';
      info.lastError = result.error;
    }
    announce();
  };

  /** Checks one agent; concurrent calls share the check in progress. */
  const check = (agent: Agent): Promise<void> => {
    if (agent.info.kind === 'local') {
      agent.info.lastChecked = agent.info.lastHealthy = now();
      return Promise.resolve();
    }
    agent.checking ??= checkAgentHealth(agent.info.cardUrl!, fetchOptions)
      .then((result) => {
        // Unregistered or closed meanwhile: the result concerns nobody.
        if (agents.get(agent.info.id) === agent && !closing.signal.aborted) applyHealth(agent.info, result);
      })
      .finally(() => delete agent.checking);
    return agent.checking;
  };

  const checkAll = async () => {
    await Promise.all([...agents.values()].map(check));
  };

  const interval = options.healthIntervalMs ?? DEFAULT_HEALTH_INTERVAL_MS;
  const timer = interval > 0 ? setInterval(() => void checkAll(), interval) : undefined;
  timer?.unref();

  const settle = (task: RegistryTask) => {
    let entry = ended.get(task.id);
    if (!entry) {
      let resolve!: (t: RegistryTask) => void;
      const promise = new Promise<RegistryTask>((r) => (resolve = r));
      entry = { promise, resolve };
      ended.set(task.id, entry);
    }
    return entry;
  };

  /**
   * Sends one message to `agent`, counting it in the agent's load meanwhile: a remote agent
   * over A2A with our client (its questions go to `hooks.askHuman`), a local one in-process.
   * Rejects only when `caller` aborts or the registry closes: an interrupted call is not an
   * answer of the agent.
   */
  const send = async (agent: Agent, message: Message, hooks: RemoteHooks, caller?: AbortSignal): Promise<Outcome> => {
    const signal = caller ? AbortSignal.any([closing.signal, caller]) : closing.signal;
    agent.info.load++;
    try {
      let outcome: Outcome;
      if (agent.run) {
        // A local run that ignores its signal must not hold close() up.
        outcome = { ok: true, result: await abortable(agent.run(message.text, signal), signal) };
      } else {
        const { swarmId, callId, key, text } = message;
        const answer = await clientFor(agent.info.cardUrl!).send(
          { swarmId, callId, agentId: agent.info.id, url: agent.info.cardUrl!, request: text, key },
          hooks,
          signal,
        );
        outcome = answer.ok ? { ok: true, result: answer.content } : { ok: false, error: answer.content };
      }
      signal.throwIfAborted();
      return outcome;
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      return { ok: false, error: reasonOf(e) };
    } finally {
      agent.info.load--;
    }
  };

  /**
   * Whether `agent` is broken after a failure: its health, checked now, is not healthy (see
   * `./retry.ts`). Rejects when the registry closed meanwhile: the call stops there, neither
   * answered nor moved to another agent.
   */
  const broken = async (agent: Agent): Promise<boolean> => {
    await check(agent);
    closing.signal.throwIfAborted();
    return agent.info.health !== 'healthy';
  };

  /** The best healthy agent with `skill` not in `tried`. */
  const best = (skill: string, tried: ReadonlySet<string>): Agent | undefined => {
    const found = selectAgent(
      [...agents.values()].filter((a) => !tried.has(a.info.id)).map((a) => a.info),
      skill,
    );
    return found && agents.get(found.id);
  };

  /** Notifies whoever waits for a change of `task` (see `wait`) or listens to the registry. */
  const changed = (task: RegistryTask) => {
    announce();
    const waiting = watchers.get(task.id) ?? [];
    watchers.delete(task.id);
    for (const notify of waiting) notify();
  };

  /**
   * Runs a submitted task to its end, or until close(), which leaves it as it is then
   * (unfinished: see {@link AgentRegistry.close}). Never rejects.
   */
  const run = async (task: RegistryTask, canceled: AbortSignal): Promise<void> => {
    const finish = (outcome: Outcome) => {
      // Canceled meanwhile: cancel() ended it; what the agent said after does not count.
      if (task.state === 'canceled') return;
      questions.delete(task.id);
      endTask(task, outcome, now());
      settle(task).resolve(copy(task));
      changed(task);
    };
    let outcome: Outcome;
    try {
      outcome = await sendTask(task, canceled);
    } catch (e) {
      // Closing interrupted the task: nothing about it changes, so its record keeps it unfinished.
      // Canceling ended it already.
      if (closing.signal.aborted || canceled.aborted) return;
      outcome = { ok: false, error: reasonOf(e) };
    }
    finish(outcome);
  };

  /**
   * Waits for a task's dependencies and sends it (see `./retry.ts`); resolves with its outcome.
   * Rejects when the registry closes meanwhile.
   */
  const sendTask = async (task: RegistryTask, canceled: AbortSignal): Promise<Outcome> => {
    const blocked = await abortable(
      awaitDependencies(task, (id) => settle(tasks.get(id)!).promise),
      AbortSignal.any([closing.signal, canceled]),
    );
    if (blocked) return { ok: false, error: blocked };
    closing.signal.throwIfAborted();
    const hooks: RemoteHooks = {
      // The task waits in `input-required` until `answer()` (or the MCP tool) gives one.
      askHuman: (question) =>
        new Promise<string>((resolve) => {
          askTask(task, question, now());
          questions.set(task.id, resolve);
          changed(task);
        }),
      // Closing stops following the remote task but leaves it running: a registry restored from
      // a snapshot taken before re-sends the same message and re-attaches to it.
      // A canceled task is over for good: its remote task is canceled too.
      swarmEnded: () => canceled.aborted || !closing.signal.aborted,
    };
    const message: Message = { swarmId: registryId, callId: task.id, key: `${registryId}:${task.id}`, text: task.message };
    return sendWithRetry<Agent>({
      idOf: (agent) => agent.info.id,
      choose: (tried) => chooseAgent(task, tried),
      send: (agent) => send(agent, message, hooks, canceled),
      broken,
      trying: (agent, previous) => {
        startTask(task, agent.info.id, now(), previous);
        changed(task);
      },
    });
  };

  /** The agent for a task about to start (or to retry, `tried` holding those it left), or why there is none. */
  const chooseAgent = (task: RegistryTask, tried: ReadonlySet<string>): Agent | string => {
    if (task.requestedAgent) {
      const agent = agents.get(task.requestedAgent);
      // A named agent is the only one the task may go to.
      if (tried.size > 0) return `Agent "${task.requestedAgent}" failed`;
      if (!agent) return `No agent "${task.requestedAgent}" is registered`;
      if (agent.info.health !== 'healthy') return `Agent "${task.requestedAgent}" is unhealthy${agent.info.lastError ? `: ${agent.info.lastError}` : ''}`;
      if (task.skill && !hasSkill(agent.info.skills, task.skill)) return `Agent "${task.requestedAgent}" has no skill "${task.skill}"`;
      return agent;
    }
    const found = best(task.skill!, tried);
    return found ?? `No healthy agent has the skill "${task.skill}"`;
  };

  const startRun = (task: RegistryTask) => {
    settle(task);
    const canceling = new AbortController();
    cancels.set(task.id, canceling);
    const running = run(task, canceling.signal).finally(() => {
      runs.delete(running);
      if (cancels.get(task.id) === canceling) cancels.delete(task.id);
    });
    runs.add(running);
  };

  /**
   * Takes in a snapshot: its remote agents as they were (the next check refreshes them), its
   * ended tasks as they ended, and its unfinished ones submitted again (same message ids).
   * Agents and tasks already here are kept as they are.
   */
  const restoreFrom = (snapshot: RegistrySnapshot) => {
    if (snapshot.version !== 1) throw new TeamError(`Cannot restore an agent registry snapshot of version ${String(snapshot.version)}`, 'invalid-snapshot');
    for (const info of snapshot.agents) {
      if (agents.has(info.id) || [...agents.values()].some((a) => a.info.cardUrl === info.cardUrl)) continue;
      agents.set(info.id, { info: { ...copy(info), load: 0 } });
    }
    nextOrder = Math.max(nextOrder, snapshot.nextOrder);
    const restored = snapshot.tasks.filter((t) => !tasks.has(t.id)).map(copy);
    for (const task of restored) {
      tasks.set(task.id, task);
      if (isTerminal(task.state)) settle(task).resolve(copy(task));
    }
    for (const task of restored) resume(task);
    if (restored.length > 0 || snapshot.agents.length > 0) announce();
  };

  /** Runs a restored unfinished task again. */
  const resume = (task: RegistryTask) => {
    if (isTerminal(task.state)) return;
    if (task.state === 'working' || task.state === 'input-required') {
      // Back to submitted: the agent is chosen again (an agent asking again re-enters input-required).
      task.state = 'submitted';
      delete task.agentId;
      delete task.startedAt;
      delete task.question;
      task.history.push({ state: 'submitted', at: now() });
    }
    startRun(task);
  };
  if (options.restore) restoreFrom(options.restore);

  return {
    id: registryId,

    async register(cardUrl, opts = {}) {
      assertOpen();
      /** Refuses a card URL or an id registered already (checked again after the card is read: another registration may have won meanwhile). */
      const assertFree = (id: string | undefined) => {
        const same = [...agents.values()].find((a) => a.info.cardUrl === cardUrl);
        if (same) throw new TeamError(`The agent card at ${cardUrl} is already registered as "${same.info.id}"`, 'duplicate-agent');
        if (id !== undefined && agents.has(id)) {
          throw new TeamError(`An agent "${id}" is already registered; register this one (${cardUrl}) under another id`, 'duplicate-agent');
        }
      };
      assertFree(opts.id);
      const card = await fetchAgentCard(cardUrl, fetchOptions);
      const id = opts.id ?? card.name;
      assertFree(id);
      const at = now();
      const info: AgentInfo = {
        id,
        kind: 'remote',
        name: card.name,
        description: card.description,
        cardUrl,
        skills: [],
        health: 'unknown',
        load: 0,
        order: nextOrder++,
        registeredAt: at,
      };
      applyCard(info, card);
      const agent: Agent = { info };
      agents.set(id, agent);
      // The card was just read: only the ping is left to do.
      const problem = await pingAgent(card.endpoint, fetchOptions);
      applyHealth(info, problem === undefined ? { healthy: true, card } : { healthy: false, card, error: problem });
      return copy(info);
    },

    registerLocal(agent, runLocal) {
      assertOpen();
      if (agents.has(agent.id)) throw new TeamError(`An agent "${agent.id}" is already registered`, 'duplicate-agent');
      const at = now();
      const skills: RegistrySkill[] = [
        { id: agent.id, name: agent.name, description: agent.description, tags: ['agent'] },
        ...agent.tools.map((t) => ({ id: `tool:${t.name}`, name: t.name, description: t.description, tags: ['tool'] })),
      ];
      const info: AgentInfo = {
        id: agent.id,
        kind: 'local',
        name: agent.name,
        description: agent.description,
        skills,
        health: 'healthy',
        load: 0,
        order: nextOrder++,
        registeredAt: at,
        lastChecked: at,
        lastHealthy: at,
      };
      agents.set(agent.id, { info, run: runLocal });
      return copy(info);
    },

    unregister(agentId) {
      const cardUrl = agents.get(agentId)?.info.cardUrl;
      const removed = agents.delete(agentId);
      if (cardUrl) clients.delete(cardUrl);
      if (removed) announce();
      return removed;
    },

    agents(filter = {}) {
      const all = [...agents.values()].map((a) => a.info);
      return copy(filter.skill ? all.filter((a) => hasSkill(a.skills, filter.skill!)) : all);
    },

    agent(agentId) {
      const agent = agents.get(agentId);
      return agent ? copy(agent.info) : undefined;
    },

    async checkHealth(agentId) {
      if (agentId === undefined) {
        await checkAll();
        return this.agents();
      }
      const agent = agents.get(agentId);
      if (!agent) throw new TeamError(`No agent "${agentId}" is registered`, 'unknown-agent');
      await check(agent);
      return [copy(agent.info)];
    },

    select(skill) {
      const best = selectAgent(
        [...agents.values()].map((a) => a.info),
        skill,
      );
      return best ? copy(best) : undefined;
    },

    dispatch(spec) {
      assertOpen();
      const id = spec.id ?? randomUUID();
      checkDispatch(spec, id, (taskId) => tasks.has(taskId));
      if (spec.agent && !agents.has(spec.agent)) throw new TeamError(`Task "${id}" names agent "${spec.agent}", which is not registered`, 'unknown-agent');
      const task = newTask(spec, id, now());
      tasks.set(id, task);
      announce();
      startRun(task);
      return copy(task);
    },

    task(taskId) {
      const task = tasks.get(taskId);
      return task ? copy(task) : undefined;
    },

    tasks: () => copy([...tasks.values()]),

    async wait(taskId, signal) {
      const task = tasks.get(taskId);
      if (!task) throw new TeamError(`No task "${taskId}"`, 'unknown-task');
      const settled = () => isTerminal(task.state) || task.state === 'input-required';
      // A task left unfinished by close() never changes again.
      const stop = signal ? AbortSignal.any([signal, closing.signal]) : closing.signal;
      for (;;) {
        signal?.throwIfAborted();
        if (settled()) return copy(task);
        stop.throwIfAborted();
        const next = new Promise<void>((resolve) => watchers.set(taskId, [...(watchers.get(taskId) ?? []), resolve]));
        await abortable(next, stop);
      }
    },

    answer(taskId, text) {
      assertOpen();
      const task = tasks.get(taskId);
      if (!task) throw new TeamError(`No task "${taskId}"`, 'unknown-task');
      const resolve = questions.get(taskId);
      if (task.state !== 'input-required' || !resolve) throw new TeamError(`Task "${taskId}" is ${task.state}, not waiting for input`, 'wrong-state');
      questions.delete(taskId);
      answeredTask(task, now());
      resolve(text);
      changed(task);
      return copy(task);
    },

    cancel(taskId, reason = 'Canceled') {
      assertOpen();
      const task = tasks.get(taskId);
      if (!task) throw new TeamError(`No task "${taskId}"`, 'unknown-task');
      if (task.state === 'canceled') return copy(task);
      if (isTerminal(task.state)) throw new TeamError(`Task "${taskId}" is ${task.state}: it cannot be canceled`, 'wrong-state');
      questions.delete(taskId);
      cancelTask(task, reason, now());
      settle(task).resolve(copy(task));
      changed(task);
      // After the record: the run sees the task canceled when its send stops.
      cancels.get(taskId)?.abort(new TeamError(`Task "${taskId}" was canceled: ${reason}`, 'wrong-state'));
      return copy(task);
    },

    async callBest(skill, input, hooks, signal) {
      assertOpen();
      const message: Message = { swarmId: input.swarmId, callId: input.callId, key: input.key, text: input.request };
      const outcome = await sendWithRetry<Agent>({
        idOf: (agent) => agent.info.id,
        choose: (tried) => best(skill, tried) ?? `No healthy agent has the skill "${skill}"`,
        send: (agent) => send(agent, message, hooks, signal),
        broken,
      });
      const answered = outcome.agentId !== undefined ? { agentId: outcome.agentId } : {};
      return outcome.ok ? { ok: true, content: outcome.result, ...answered } : { ok: false, content: outcome.error, ...answered };
    },

    async message(agentId, text, signal) {
      assertOpen();
      const agent = agents.get(agentId);
      if (!agent) throw new TeamError(`No agent "${agentId}" is registered`, 'unknown-agent');
      if (agent.info.health !== 'healthy') {
        throw new TeamError(`Agent "${agentId}" is unhealthy${agent.info.lastError ? `: ${agent.info.lastError}` : ''}`, 'no-agent');
      }
      signal?.throwIfAborted();
      const callId = randomUUID();
      const message: Message = { swarmId: registryId, callId, key: `${registryId}:message:${callId}`, text };
      const outcome = await send(agent, message, NO_ANSWERS, signal);
      if (!outcome.ok) {
        void check(agent);
        throw new TeamError(outcome.error, 'agent-failed');
      }
      return outcome.result;
    },

    restore(snapshot) {
      assertOpen();
      restoreFrom(snapshot);
    },

    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    snapshot() {
      return copy({
        version: 1 as const,
        registryId,
        nextOrder,
        agents: [...agents.values()].filter((a) => a.info.kind === 'remote').map((a) => a.info),
        tasks: [...tasks.values()],
      });
    },

    get closeReason() {
      return closing.signal.aborted ? (closing.signal.reason as TeamError) : undefined;
    },

    async close(reason = new TeamError('The agent registry is closed', 'registry-closed')) {
      if (timer) clearInterval(timer);
      // A second close keeps the first reason (an aborted signal keeps its reason).
      closing.abort(reason);
      // Every run stops at once (its send or its wait for dependencies rejects), leaving its task as it was.
      await Promise.all(runs);
      await Promise.all([...agents.values()].map((a) => a.checking));
    },
  };
}
