/**
 * The agent registry (seed 003): agents found by their A2A agent cards (or given as local
 * definitions), health-checked, and tasks dispatched to the best available agent.
 *
 * - **Registering** a remote agent reads and validates its card (`./card-check.ts`) and checks
 *   its health at once; a card that cannot be read or lacks required fields is refused with a
 *   `TeamError` naming the URL and what is wrong.
 * - **Health** (`./health.ts`): every `healthIntervalMs` (a timer that does not keep the
 *   process alive, stopped by `close()`), on demand with `checkHealth()`, and right after a
 *   send to the agent failed. Each check re-reads the card, so changed skills are picked up.
 * - **Selection** (`./selection.ts`): healthy agents with the skill, lowest load, first
 *   registered on ties.
 * - **Dispatch**: a task waits for its dependencies (`./dispatch.ts`), then picks its agent
 *   (at start, not at submission: load and health are those of that moment) and is sent over
 *   A2A with our client (`src/a2a/client.ts`: streaming, resubscribe, v0.3 peers), tracked
 *   `submitted → working → completed | failed` with timestamps.
 *
 * All state is plain JSON ({@link AgentRegistry.snapshot}) and time comes from `now`.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { A2ARemoteOptions } from '../a2a/client.js';
import { abortable } from '../abort.js';
import type { AgentDefinition } from '../definitions/define.js';
import type { RemoteAgentClient } from '../handoffs/remote-agent.js';
import { a2aRemoteAgents } from '../on-demand.js';
import { TeamError } from '../team/errors.js';
import { type CardFetchOptions, type CheckedCard, fetchAgentCard, reasonOf, type RegistrySkill } from './card-check.js';
import { awaitDependencies, checkDispatch, endTask, isTerminal, newTask, startTask } from './dispatch.js';
import { checkAgentHealth, type HealthResult, pingAgent } from './health.js';
import { hasSkill, selectAgent } from './selection.js';
import type { AgentInfo, DispatchSpec, RegistrySnapshot, RegistryTask } from './types.js';

/** Runs a local agent on one message and resolves with its answer (rejects when it fails). */
export type LocalAgentRun = (message: string, signal: AbortSignal) => Promise<string>;

/** Options of {@link createAgentRegistry}. */
export interface AgentRegistryOptions {
  /** How often every remote agent is checked (default 30 000 ms; 0 turns periodic checks off). */
  healthIntervalMs?: number;
  /** How long one card fetch or ping may take before the agent counts as unhealthy (default 5000 ms). */
  timeoutMs?: number;
  /** The clock (ms since the epoch), default `Date.now`. */
  now?: () => number;
  /** Headers for every request to agents (typically `authorization`), as for our A2A client. */
  headers?: A2ARemoteOptions['headers'];
  /** The fetch for cards and health checks, and for the default client (default: the global one). */
  fetch?: typeof fetch;
  /** The A2A client tasks are sent with (default: {@link a2aRemoteAgents} with `headers` and `fetch`). */
  client?: RemoteAgentClient;
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
   * `unknown-task` for a dependency, `unknown-agent`) or after `close()` (`registry-closed`). A task for which no
   * healthy agent has the skill, or whose agent fails, ends `failed` with the reason.
   */
  dispatch(spec: DispatchSpec): RegistryTask;
  /** A task as it is now, or undefined. */
  task(taskId: string): RegistryTask | undefined;
  /** Every task, in submission order. */
  tasks(): RegistryTask[];
  /** Resolves with the task once it has ended (rejects with `unknown-task`, or when `signal` aborts). */
  wait(taskId: string, signal?: AbortSignal): Promise<RegistryTask>;
  /**
   * Sends one message to the named agent and resolves with its answer (counted in its load
   * meanwhile, but not recorded as a task). Rejects with a `TeamError`: `unknown-agent`,
   * `no-agent` when the agent is unhealthy, `agent-failed` when it failed or could not be reached.
   */
  message(agentId: string, text: string, signal?: AbortSignal): Promise<string>;
  /** The registry as JSON (remote agents and all tasks). */
  snapshot(): RegistrySnapshot;
  /** Stops the health timer and every check; unfinished tasks fail with `registry-closed`. */
  close(): Promise<void>;
}

interface Agent {
  info: AgentInfo;
  run?: LocalAgentRun;
  /** The check in progress, so concurrent requests share it. */
  checking?: Promise<void>;
}

const DEFAULT_HEALTH_INTERVAL_MS = 30_000;
const DEFAULT_TIMEOUT_MS = 5000;

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
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const registryId = options.id ?? options.restore?.registryId ?? randomUUID();
  const client =
    options.client ?? a2aRemoteAgents({ ...(options.headers ? { headers: options.headers } : {}), ...(options.fetch ? { fetch: options.fetch } : {}) });
  const closing = new AbortController();

  const agents = new Map<string, Agent>();
  const tasks = new Map<string, RegistryTask>();
  /** Resolves with each task once it has ended. */
  const ended = new Map<string, { promise: Promise<RegistryTask>; resolve: (t: RegistryTask) => void }>();
  let nextOrder = options.restore?.nextOrder ?? 0;

  const copy = <T>(value: T): T => structuredClone(value);
  /** Options of one network request: our fetch and headers, bounded by the timeout and by close(). */
  const requestOptions = (): CardFetchOptions => ({
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    signal: AbortSignal.any([closing.signal, AbortSignal.timeout(timeoutMs)]),
  });
  const assertOpen = () => {
    if (closing.signal.aborted) throw new TeamError('The agent registry is closed', 'registry-closed');
  };

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
  };

  /** Checks one agent; concurrent calls share the check in progress. */
  const check = (agent: Agent): Promise<void> => {
    if (agent.info.kind === 'local') {
      agent.info.lastChecked = agent.info.lastHealthy = now();
      return Promise.resolve();
    }
    agent.checking ??= checkAgentHealth(agent.info.cardUrl!, requestOptions())
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

  /** Sends `text` to `agent`, counting it in the agent's load meanwhile. */
  const send = async (
    agent: Agent,
    key: string,
    callId: string,
    text: string,
    caller?: AbortSignal,
  ): Promise<{ ok: true; result: string } | { ok: false; error: string }> => {
    const signal = caller ? AbortSignal.any([closing.signal, caller]) : closing.signal;
    agent.info.load++;
    try {
      // A local run that ignores its signal must not hold close() up.
      if (agent.run) return { ok: true, result: await abortable(agent.run(text, signal), signal) };
      const answer = await client.send(
        { swarmId: registryId, callId, agentId: agent.info.id, url: agent.info.cardUrl!, request: text, key },
        {
          // Nobody stands behind a dispatched task to answer: the task fails with the question.
          askHuman: (question) => Promise.reject(new Error(`it asked for input, which a dispatched task cannot give: ${question}`)),
          swarmEnded: () => true,
        },
        signal,
      );
      if (!answer.ok) void check(agent);
      return answer.ok ? { ok: true, result: answer.content } : { ok: false, error: answer.content };
    } catch (e) {
      if (caller?.aborted && !closing.signal.aborted) throw caller.reason;
      return { ok: false, error: closing.signal.aborted ? 'The agent registry was closed' : reasonOf(e) };
    } finally {
      agent.info.load--;
    }
  };

  /** Runs a submitted task to its end. Never rejects. */
  const run = async (task: RegistryTask): Promise<void> => {
    const finish = (outcome: { ok: true; result: string } | { ok: false; error: string }) => {
      endTask(task, outcome, now());
      settle(task).resolve(copy(task));
    };
    const blocked = await awaitDependencies(task, (id) => settle(tasks.get(id)!).promise);
    if (blocked) return finish({ ok: false, error: blocked });
    if (closing.signal.aborted) return finish({ ok: false, error: 'The agent registry was closed' });
    const chosen = chooseAgent(task);
    if (typeof chosen === 'string') return finish({ ok: false, error: chosen });
    startTask(task, chosen.info.id, now());
    finish(await send(chosen, `${registryId}:${task.id}`, task.id, task.message));
  };

  /** The agent for a task about to start, or why there is none. */
  const chooseAgent = (task: RegistryTask): Agent | string => {
    if (task.requestedAgent) {
      const agent = agents.get(task.requestedAgent);
      if (!agent) return `No agent "${task.requestedAgent}" is registered`;
      if (agent.info.health !== 'healthy') return `Agent "${task.requestedAgent}" is unhealthy${agent.info.lastError ? `: ${agent.info.lastError}` : ''}`;
      if (task.skill && !hasSkill(agent.info.skills, task.skill)) return `Agent "${task.requestedAgent}" has no skill "${task.skill}"`;
      return agent;
    }
    const best = selectAgent(
      [...agents.values()].map((a) => a.info),
      task.skill!,
    );
    return best ? agents.get(best.id)! : `No healthy agent has the skill "${task.skill}"`;
  };

  const startRun = (task: RegistryTask) => {
    settle(task);
    void run(task);
  };

  // A restored registry: its remote agents as they were (the next check refreshes them), its
  // ended tasks as they ended, and its unfinished ones submitted again (same message ids).
  for (const info of options.restore?.agents ?? []) agents.set(info.id, { info: { ...copy(info), load: 0 } });
  for (const saved of options.restore?.tasks ?? []) {
    const task = copy(saved);
    tasks.set(task.id, task);
    if (isTerminal(task.state)) settle(task).resolve(copy(task));
  }
  for (const task of tasks.values()) {
    if (isTerminal(task.state)) continue;
    if (task.state === 'working') {
      // Back to submitted: the agent is chosen again.
      task.state = 'submitted';
      delete task.agentId;
      delete task.startedAt;
      task.history.push({ state: 'submitted', at: now() });
    }
    startRun(task);
  }

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
      const card = await fetchAgentCard(cardUrl, requestOptions());
      const id = opts.id ?? card.name;
      assertFree(id);
      const at = now();
      const info: AgentInfo = { id, kind: 'remote', name: card.name, description: card.description, cardUrl, skills: [], health: 'unknown', load: 0, order: nextOrder++, registeredAt: at };
      applyCard(info, card);
      const agent: Agent = { info };
      agents.set(id, agent);
      // The card was just read: only the ping is left to do.
      const problem = await pingAgent(card.endpoint, requestOptions());
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

    unregister: (agentId) => agents.delete(agentId),

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
      startRun(task);
      return copy(task);
    },

    task(taskId) {
      const task = tasks.get(taskId);
      return task ? copy(task) : undefined;
    },

    tasks: () => copy([...tasks.values()]),

    async wait(taskId, signal) {
      if (!tasks.has(taskId)) throw new TeamError(`No task "${taskId}"`, 'unknown-task');
      const promise = settle(tasks.get(taskId)!).promise;
      if (!signal) return promise;
      signal.throwIfAborted();
      return new Promise<RegistryTask>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        void promise.then(resolve).finally(() => signal.removeEventListener('abort', onAbort));
      });
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
      const outcome = await send(agent, `${registryId}:message:${callId}`, callId, text, signal);
      if (!outcome.ok) throw new TeamError(outcome.error, 'agent-failed');
      return outcome.result;
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

    async close() {
      if (timer) clearInterval(timer);
      closing.abort(new TeamError('The agent registry was closed', 'registry-closed'));
      // Every unfinished task ends (its send was aborted, its wait for dependencies ends with them).
      await Promise.all([...tasks.values()].map((t) => settle(t).promise));
      await Promise.all([...agents.values()].map((a) => a.checking));
    },
  };
}
