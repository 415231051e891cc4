/**
 * The registry's data: agents and tasks as plain JSON (what `list_agents`, `get_task_status`
 * and a persisted snapshot carry). Times are milliseconds since the epoch, from the registry's
 * `now`.
 *
 * @module
 */
import type { RegistrySkill } from './card-check.js';

/** `unknown` until the first check; then whatever the last check found. */
export type AgentHealth = 'unknown' | 'healthy' | 'unhealthy';

/** One registered agent as the registry sees it now. */
export interface AgentInfo {
  /** The registry's name for it: the card's name unless given at registration. */
  id: string;
  /** `remote`: found by its A2A agent card; `local`: an agent definition run in-process. */
  kind: 'remote' | 'local';
  name: string;
  description: string;
  /** Remote agents: where the card is. */
  cardUrl?: string;
  /** Remote agents: where the agent answers (from its card). */
  endpoint?: string;
  skills: RegistrySkill[];
  health: AgentHealth;
  /** Tasks and messages this registry has in flight on the agent. */
  load: number;
  /** Registration sequence number: the tie-breaker of selection. */
  order: number;
  registeredAt: number;
  lastChecked?: number;
  lastHealthy?: number;
  /** Why the last check failed. */
  lastError?: string;
}

/**
 * How a task depends on another:
 * - `blocking`: waits until the dependency completes; a failed dependency fails it;
 * - `parallel`: runs at once, next to the dependency (the relation is recorded only);
 * - `optional`: waits until the dependency ends, and runs whether it completed or failed.
 */
export type DependencyKind = 'blocking' | 'parallel' | 'optional';

/** One dependency of a task on an earlier one. */
export interface TaskDependency {
  taskId: string;
  kind: DependencyKind;
}

/**
 * A dispatched task's state: `submitted` until it has an agent, `working` on it (back to
 * `submitted` when a broken agent is left for another), `input-required` while the agent waits
 * for an answer ({@link AgentRegistry.answer}), then terminal: `completed`, `failed`, or
 * `canceled` ({@link AgentRegistry.cancel}).
 */
export type RegistryTaskState = 'submitted' | 'working' | 'input-required' | 'completed' | 'failed' | 'canceled';

/** One entry of a task's history: the state entered and when. */
export interface RegistryTaskStep {
  state: RegistryTaskState;
  at: number;
  /** `working`, `input-required`: the agent the task is on. */
  agentId?: string;
  /** `submitted` again: why the previous agent was left (`<agent>: <reason>`). */
  error?: string;
}

/** What {@link AgentRegistry.dispatch} takes. */
export interface DispatchSpec {
  /** Unique in the registry (default: a random UUID). */
  id?: string;
  /** The skill wanted; the best healthy agent having it is chosen when the task starts. */
  skill?: string;
  /** A named agent instead of (or besides) a skill. */
  agent?: string;
  /** The message sent to the agent. */
  message: string;
  dependsOn?: readonly TaskDependency[];
}

/** A dispatched task and its history. Plain JSON. */
export interface RegistryTask {
  id: string;
  skill?: string;
  /** The agent asked for by name, if any. */
  requestedAgent?: string;
  message: string;
  dependsOn: TaskDependency[];
  state: RegistryTaskState;
  /** The agent it went to (once working). */
  agentId?: string;
  /** The agent's answer (completed). */
  result?: string;
  /** Why it failed, or was canceled. */
  error?: string;
  /** `input-required`: what the agent asks. */
  question?: string;
  submittedAt: number;
  startedAt?: number;
  endedAt?: number;
  /** Every state with the time it was entered: each agent tried appears in a `working` entry. */
  history: RegistryTaskStep[];
}

/** The whole registry as JSON: what to persist and give back as `restore`. */
export interface RegistrySnapshot {
  version: 1;
  registryId: string;
  nextOrder: number;
  /** Remote agents only: local ones hold code and are registered again by their owner. */
  agents: AgentInfo[];
  tasks: RegistryTask[];
}
