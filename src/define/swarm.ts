/**
 * Swarm definitions as plain, frozen values (agents are in `agent.ts`, handoffs in
 * `handoff.ts`, tools in `tool.ts`). Nothing runs until a runtime is created with them; the
 * runtime's catalog validates them together and fails fast on mistakes.
 *
 * @module
 */
import { z } from 'zod';
import { DefinitionError } from '../errors.js';
import { checkOnTimeout, checkTimeoutMs, type OnTimeout } from './timeout.js';
import { checkHistory, type HistoryPolicy } from './history.js';
import { type Budget, checkBudget } from './budget.js';
import type { Handoff } from './handoff.js';
import type { SwarmRegistryTools } from './swarm-registry.js';
import type { Tool } from './tool.js';
import { checkGuardrails, checkStall, type Guardrail, type GuardedToolCall } from './guardrail.js';
import type { ModelResponse } from '../../machines/messages.js';
import type { StallRule } from '../../machines/stall.js';
import { checkMigrate, type Migrate } from './migrate.js';

/** What a swarm's `tools` list may hold: tools, and the swarm registry tool set. */
export type ToolEntry = Tool | SwarmRegistryTools;

/** A value, or a function of the swarm's input computing it when a run starts. */
export type FromInput<T, I> = T | ((args: { input: I }) => T);

export type { Guardrail } from './guardrail.js';

/** A swarm definition. `I` and `R` are the zod schemas of its input and result. */
export interface SwarmDefinition<I extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  readonly kind: 'swarm';
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** Stamped on persisted snapshots; bump it when a change makes old snapshots unsafe. */
  readonly version: number;
  readonly input: I;
  readonly result: R;
  readonly instructions: FromInput<string, z.output<I>>;
  readonly handoffs: FromInput<readonly Handoff[], z.output<I>>;
  readonly tools: FromInput<readonly ToolEntry[], z.output<I>>;
  readonly maxTurns: FromInput<number, z.output<I>>;
  /** Whether parents may customize it when they reach it through the swarm registry. */
  readonly customizable: boolean;
  /**
   * How long a run of it as a child swarm may take, in ms, unless the parent's handoff says
   * otherwise (`handoff.toSwarm(child, { timeoutMs })`): past it the child is stopped and the
   * parent's model reads the timeout as the handoff's result. Not a limit on top-level runs.
   */
  readonly timeoutMs?: number;
  /**
   * What its `timeoutMs` does when a run of it as a child times out: `'result'` (the default)
   * gives the timeout to the parent's model; `'fail'` fails the parent. A handoff's own wins.
   */
  readonly onTimeout?: OnTimeout;
  /**
   * What reaching `maxTurns` does: `'pause'` (the default) pauses the swarm with a `LIMIT`
   * reason saying what was spent, keeping everything — `client.extend({ maxTurns })` then
   * `resume()` go on in the same conversation, `stop()` ends it; `'fail'` fails it.
   */
  readonly onLimit?: OnLimit;
  /**
   * What each run may spend, with its agents and child swarms (see `docs/budgets.md`): every
   * call reserves its worst case before it is made, and one that would exceed a cap is not made
   * (the swarm pauses with a `LIMIT` reason, or fails with `onLimit: 'fail'`).
   */
  readonly budget?: Budget;
  /**
   * What the orchestrator's model sees of its conversation (see docs/history.md): past
   * `maxTokens` (estimated), `'trim'` leaves the oldest turns out, `'summarize'` replaces them by
   * a summary the model writes. The stored conversation stays whole. Also the default of its agents.
   */
  readonly history?: HistoryPolicy;
  readonly guardrails: {
    readonly input: readonly Guardrail<z.output<I>>[];
    readonly output: readonly Guardrail<z.output<R>>[];
    /** On each of the orchestrator's model responses, before it is acted on. */
    readonly response?: readonly Guardrail<ModelResponse>[];
    /** On each of the orchestrator's tool calls, before it runs. */
    readonly toolCall?: readonly Guardrail<GuardedToolCall>[];
  };
  /** Stall detection (off when absent): when the swarm counts as struggling and pauses. */
  readonly stall?: StallRule;
  /**
   * Migrates a stored run of an older version that this runtime does not have registered to this
   * version (see `docs/deploys.md`); without it such a run waits for a runtime that has its version.
   */
  readonly migrate?: Migrate;
}

/** What reaching a limit does to a swarm (see `SwarmDefinition.onLimit`). */
export type OnLimit = 'pause' | 'fail';

/** `value` when it is an {@link OnLimit} or absent; else a {@link DefinitionError} naming `owner`. */
export function checkOnLimit(value: unknown, owner: string): OnLimit | undefined {
  if (value === undefined || value === 'pause' || value === 'fail') return value;
  throw new DefinitionError(`${owner}: onLimit must be 'pause' or 'fail', got ${JSON.stringify(value) ?? String(value)}`);
}

/**
 * The default bound on rounds: a swarm's orchestrator rounds and an agent's own tool loop
 * (defined or inline) alike.
 */
export const DEFAULT_MAX_TURNS = 10;

/**
 * Defines a swarm. `input` and `result` default to strings; `instructions`, `handoffs`,
 * `tools` and `maxTurns` may be functions of `{ input }`, evaluated when a run starts.
 *
 * @example
 * import { z } from 'zod';
 * import { defineSwarm, handoff } from 'xswarm';
 * const planner = defineSwarm({
 *   id: 'activity-planner',
 *   result: z.object({ day: z.string(), activities: z.array(z.string()) }),
 *   instructions: ({ input }) => `Plan outdoor activities for: ${input}`,
 *   handoffs: [handoff.toAgent(weather)],
 *   maxTurns: 8,
 * });
 */
export function defineSwarm<I extends z.ZodType = z.ZodString, R extends z.ZodType = z.ZodString>(spec: {
  id: string;
  name?: string;
  description?: string;
  version?: number;
  input?: I;
  result?: R;
  instructions: FromInput<string, z.output<I>>;
  handoffs?: FromInput<readonly Handoff[], z.output<I>>;
  tools?: FromInput<readonly ToolEntry[], z.output<I>>;
  maxTurns?: FromInput<number, z.output<I>>;
  customizable?: boolean;
  guardrails?: {
    input?: readonly Guardrail<z.output<I>>[];
    output?: readonly Guardrail<z.output<R>>[];
    response?: readonly Guardrail<ModelResponse>[];
    toolCall?: readonly Guardrail<GuardedToolCall>[];
  };
  timeoutMs?: number;
  onTimeout?: OnTimeout;
  onLimit?: OnLimit;
  stall?: StallRule;
  budget?: Budget;
  history?: HistoryPolicy;
  migrate?: Migrate;
}): SwarmDefinition<I, R> {
  const onTimeout = checkOnTimeout(spec.onTimeout, `Swarm "${spec.id}"`);
  const history = checkHistory(spec.history, `Swarm "${spec.id}"`);
  const timeoutMs = checkTimeoutMs(spec.timeoutMs, `Swarm "${spec.id}"`);
  const budget = checkBudget(spec.budget, `Swarm "${spec.id}"`);
  const onLimit = checkOnLimit(spec.onLimit, `Swarm "${spec.id}"`);
  const owner = `Swarm "${spec.id}"`;
  const g = spec.guardrails ?? {};
  const stall = checkStall(spec.stall, owner);
  const migrate = checkMigrate(spec.migrate, owner);
  if (spec.version !== undefined && (!Number.isInteger(spec.version) || spec.version < 1)) {
    throw new DefinitionError(`${owner}: version must be a positive integer, got ${String(spec.version)}`);
  }
  return Object.freeze({
    kind: 'swarm' as const,
    id: spec.id,
    name: spec.name ?? spec.id,
    description: spec.description ?? spec.name ?? spec.id,
    version: spec.version ?? 1,
    input: (spec.input ?? z.string()) as I,
    result: (spec.result ?? z.string()) as R,
    instructions: spec.instructions,
    handoffs: spec.handoffs ?? [],
    tools: spec.tools ?? [],
    maxTurns: spec.maxTurns ?? DEFAULT_MAX_TURNS,
    customizable: spec.customizable ?? false,
    guardrails: Object.freeze({
      input: checkGuardrails(g.input, 'input', owner),
      output: checkGuardrails(g.output, 'output', owner),
      ...(g.response ? { response: checkGuardrails(g.response, 'response', owner) } : {}),
      ...(g.toolCall ? { toolCall: checkGuardrails(g.toolCall, 'toolCall', owner) } : {}),
    }),
    ...(stall !== undefined ? { stall } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(onTimeout !== undefined ? { onTimeout } : {}),
    ...(onLimit !== undefined ? { onLimit } : {}),
    ...(budget !== undefined ? { budget } : {}),
    ...(history ? { history } : {}),
    ...(migrate ? { migrate } : {}),
  });
}

/** Evaluates a {@link FromInput} for one input. */
export function resolveFromInput<T, I>(value: FromInput<T, I>, input: I): T {
  return typeof value === 'function' ? (value as (args: { input: I }) => T)({ input }) : value;
}

/**
 * Per-run replacements for parts of a definition (`client.withParameters`); like the
 * definition's own, each may be a value or a function of `{ input }`.
 */
export interface SwarmOverrides<I = unknown> {
  instructions?: FromInput<string, I>;
  handoffs?: FromInput<readonly Handoff[], I>;
  tools?: FromInput<readonly ToolEntry[], I>;
  maxTurns?: FromInput<number, I>;
  /** What reaching `maxTurns` does in this run (see `SwarmDefinition.onLimit`). */
  onLimit?: OnLimit;
  /** Stall detection for this run (see `SwarmDefinition.stall`). */
  stall?: StallRule;
  /** This run's budget, instead of the definition's (see `SwarmDefinition.budget`). */
  budget?: Budget;
  /**
   * The key whose budget this run also draws from (`createRuntime({ keyBudgets })`), e.g. a
   * tenant's per day.
   */
  budgetKey?: string;
  /** What the model sees of the conversation in this run (see `SwarmDefinition.history`). */
  history?: HistoryPolicy;
}

/** The definition each derived definition was made from (see {@link derivedSwarm}). */
const origins = new WeakMap<object, object>();

/**
 * A copy of `def` with `changes` that a runtime takes for `def` itself: a handoff naming the
 * original reaches the copy, which is registered in its place (e.g. a team worker's swarm given
 * the team's tools). Same id and version.
 */
export function derivedSwarm<D extends SwarmDefinition<any, any>>(def: D, changes: Partial<Pick<D, 'tools'>>): D {
  const copy = Object.freeze({ ...def, ...changes }) as D;
  origins.set(copy, origins.get(def) ?? def);
  return copy;
}

/** Whether two definitions are one: the same object, or one derived from the other by {@link derivedSwarm}. */
export function sameSwarm(a: SwarmDefinition<any, any>, b: SwarmDefinition<any, any>): boolean {
  return a === b || (origins.get(a) ?? a) === (origins.get(b) ?? b);
}
