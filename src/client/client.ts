/**
 * `SwarmClient`: the handle on one swarm instance.
 *
 * @module
 */
import type { Part, PauseReason, SwarmEvent, SwarmLabel } from '../../machines/events.js';
import type { UsageReport } from '../usage/report.js';
import type { z } from 'zod';
import { responseSchemaOf } from '../define/response-schema.js';
import type { OnLimit, SwarmOverrides, ToolEntry } from '../define/swarm.js';
import type { Budget } from '../define/budget.js';
import type { HistoryPolicy } from '../define/history.js';
import { ADHOC_ID } from '../define/ids.js';
import type { Handoff } from '../define/handoff.js';
import type { AdhocGuardrails, ResolveOptions } from '../catalog/resolve.js';
import type { StallRule } from '../../machines/stall.js';
import type { SwarmResult } from '../store/result.js';
import { jsonSchemaOf } from '../define/tool.js';

/** What an approval may say besides its id (`client.approve(id, options)`). */
export interface ApproveOptions {
  /** Approve this tool for the rest of the run: its later calls need no approval. */
  always?: boolean;
}

/** What a client needs from its runtime (implemented by the runtime core). */
export interface SwarmControl {
  startSwarm(definitionId: string, swarmId: string, input: unknown, options?: StartOptions): Promise<void>;
  result(swarmId: string): Promise<SwarmResult>;
  usage(swarmId: string): Promise<UsageReport>;
  wait(swarmId: string): Promise<SwarmResult>;
  events(swarmId: string, since: number | 'latest', signal?: AbortSignal): AsyncIterable<SwarmEvent>;
  pause(swarmId: string, reason: PauseReason): Promise<void>;
  resume(swarmId: string, answer: unknown, options?: ResumeOptions): Promise<void>;
  stop(swarmId: string, reason: string): Promise<void>;
  extend(swarmId: string, limits: SwarmLimits): Promise<void>;
  approve(swarmId: string, approvalId: string, options?: ApproveOptions): Promise<void>;
  reject(swarmId: string, approvalId: string, reason: string): Promise<void>;
}

/** What a resume may say besides its answer (`client.resume(answer, options)`). */
export interface ResumeOptions {
  /**
   * The id of the pause this answers (`reason.pauseId` of the paused result or `paused` fact):
   * a resume naming another pause (one answered already) is refused, nothing changed.
   */
  pauseId?: string;
}

/**
 * A pause a client asks for (`client.pause`): a {@link PauseReason}, whose `responseSchema` may
 * be a zod schema (stored and sent as JSON Schema). The runtime names the pause (`pauseId`).
 */
export type PauseRequest = Omit<PauseReason, 'responseSchema'> & {
  /** What the answer must match: a zod schema, or a JSON Schema object. */
  responseSchema?: z.ZodType | Record<string, unknown>;
};

/** Limits a client can raise on a swarm (`client.extend`). */
export interface SwarmLimits {
  /** The new bound on the orchestrator's rounds: more than the rounds it has made. */
  maxTurns?: number;
  /**
   * New caps for the swarm's own budget (each only raised; those not named stay): a swarm paused
   * because its budget would be exceeded goes on with `resume()` once they leave room.
   */
  budget?: Budget;
}

/**
 * How a swarm starts: its resolved configuration's options, and the session (`contextId`) it
 * belongs to when that is not the swarm itself (an A2A client's conversation). The context is
 * kept with the swarm's state, so it survives restarts. `inputParts`: see {@link SwarmClient.run}.
 */
export type StartOptions = ResolveOptions & { contextId?: string; inputParts?: Part[] };

/**
 * The handle on one swarm: start it, read its result and events, pause, resume, stop.
 * `I` is the input type, `R` the result type of its definition.
 *
 * @example
 * const client = runtime.forSwarm(planner);
 * await client.run('Suggest outdoor activities for this weekend');
 * for await (const e of client.events()) console.log(e.seq, e.kind); // ends after the final event
 * const r = await client.getResult();
 * if (r.status === 'completed') console.log(r.result);
 */
export class SwarmClient<I = unknown, R = unknown> {
  constructor(
    protected readonly control: SwarmControl,
    /** The swarm definition this client runs. */
    readonly definitionId: string,
    /** The swarm instance id, also its session id. */
    readonly swarmId: string,
    private readonly overrides?: SwarmOverrides<I>,
  ) {}

  /**
   * Starts the swarm. Resolves once it has started and its first step is recorded; throws a
   * `SwarmError` when it cannot start (unknown definition, invalid input, an invalid swarm id
   * — see `swarmIdProblem` —, id in use). `contextId`: the session the swarm belongs to (its
   * events carry it; default the swarm id). `inputParts`: the parts of the message the input
   * was read from, as sent, when they hold files (the A2A server's): the run's task keeps them
   * as its first message while the model reads `input` (files as `<file>` elements).
   */
  run(input: I, options: { contextId?: string; inputParts?: Part[] } = {}): Promise<void> {
    return this.control.startSwarm(this.definitionId, this.swarmId, input, {
      ...(this.overrides ? { overrides: this.overrides as SwarmOverrides } : {}),
      ...(options.contextId ? { contextId: options.contextId } : {}),
      ...(options.inputParts ? { inputParts: options.inputParts } : {}),
    });
  }

  /**
   * A client for the same swarm id whose `run` replaces parts of the definition for this run
   * (the result type stays the definition's). The resolved configuration is stored with the
   * swarm, so a restored run continues with it.
   */
  withParameters(overrides: SwarmOverrides<I>): SwarmClient<I, R> {
    return new SwarmClient<I, R>(this.control, this.definitionId, this.swarmId, { ...this.overrides, ...overrides });
  }

  /**
   * The swarm's current {@link SwarmResult}. With `{ usage: true }` it also carries `usage`, the
   * swarm's {@link UsageReport} (as `usage()` answers; one more read of its durable state), read
   * after the result, so it counts at least the calls the result reflects. Opt-in, so results
   * compared whole keep their shape.
   */
  getResult(): Promise<SwarmResult<R>>;
  getResult(options: { usage: true }): Promise<SwarmResult<R> & { usage: UsageReport }>;
  getResult(options?: { usage?: boolean }): Promise<SwarmResult<R> & { usage?: UsageReport }>;
  async getResult(options: { usage?: boolean } = {}): Promise<SwarmResult<R> & { usage?: UsageReport }> {
    const result = (await this.control.result(this.swarmId)) as SwarmResult<R>;
    return options.usage ? { ...result, usage: await this.control.usage(this.swarmId) } : result;
  }

  /**
   * The tokens of every model call made for the swarm so far: `inputTokens`/`outputTokens`
   * (and `cachedInputTokens`, `modelCalls`, `byModel`) are its own calls' — its orchestrator's
   * and its agents'; `total` adds its children's (child swarms, remote peers that report usage),
   * rolled up over every level, each child counted once. With `createRuntime({ prices })`,
   * `usd` per model and in total; a model without a price is listed in `unpriced` (and the total
   * then has no `usd`). Each call's own usage is in its `internal:llm-call` event; a model that
   * reports no usage adds a call but no tokens.
   */
  usage(): Promise<UsageReport> {
    return this.control.usage(this.swarmId);
  }

  /** Resolves with the result once the swarm is paused or has ended. */
  async wait(): Promise<SwarmResult<R>> {
    return (await this.control.wait(this.swarmId)) as SwarmResult<R>;
  }

  /**
   * The swarm's events in order, starting after sequence number `since` (default 0: from the
   * beginning). Stored events first, then live ones; ends after the final event, or at once
   * when `signal` aborts (nothing of the reader stays behind). `since` beyond the last event
   * throws a `SwarmError` with code `invalid-cursor` when the swarm has ended (nothing can
   * follow it); while the swarm is unfinished, the reader waits for the events after `since`.
   * `since: 'latest'` follows only what happens from now on, in whichever process drives it.
   *
   * @example
   * for await (const event of client.events({ since: 'latest' })) console.log(event.kind);
   */
  events(options: { since?: number | 'latest'; signal?: AbortSignal } = {}): AsyncIterable<SwarmEvent> {
    return this.control.events(this.swarmId, options.since ?? 0, options.signal);
  }

  /**
   * Pauses a running swarm; an in-flight model call is aborted and re-issued on resume. With a
   * `responseSchema` (zod), the resume's answer must match it. The pause gets an id
   * (`getResult()`'s `reason.pauseId`) a resume may name. Throws a TypeError for a schema that
   * cannot be written as JSON Schema.
   *
   * @example
   * import { z } from 'zod';
   * await client.pause({ type: 'HITL', message: 'Which budget?', responseSchema: z.object({ usd: z.number().positive() }) });
   */
  pause(reason: string | PauseRequest = 'paused'): Promise<void> {
    if (typeof reason === 'string') return this.control.pause(this.swarmId, { type: 'HITL', message: reason });
    const { responseSchema, ...rest } = reason;
    let stored: PauseReason = rest;
    try {
      if (responseSchema !== undefined) stored = { ...rest, responseSchema: responseSchemaOf(responseSchema) };
    } catch (e) {
      return Promise.reject(e);
    }
    return this.control.pause(this.swarmId, stored);
  }

  /**
   * Resumes a paused swarm; `answer` reaches the orchestrator as the human's answer: text, or,
   * when the pause has a response schema, any JSON value matching it (the model reads it as
   * JSON; a string of JSON text that matches is taken parsed). Strict: throws a `SwarmError`, and
   * nothing changes, when the answer does not match the schema (`invalid-input`, naming the
   * field and why), when `pauseId` is not the current pause's (`wrong-state`: stale), or when
   * the swarm is not paused (`wrong-state`).
   *
   * @example
   * const r = await client.getResult();
   * if (r.status === 'paused') await client.resume({ usd: 40 }, { pauseId: r.reason.pauseId });
   */
  resume(answer?: unknown, options: ResumeOptions = {}): Promise<void> {
    return this.control.resume(this.swarmId, answer, options);
  }

  /** Stops the swarm (and everything it runs) from any non-final state. */
  stop(reason = 'stopped by client'): Promise<void> {
    return this.control.stop(this.swarmId, reason);
  }

  /**
   * Raises the swarm's limits, durably (a restart keeps them). A swarm paused at a limit
   * (`reason.type === 'LIMIT'`) then goes on with `resume()`, in the same conversation; a
   * running one simply has more room. Throws a `SwarmError` (`invalid-input`) for a `maxTurns`
   * that is not a whole number above the rounds already made, and (`wrong-state`) for a swarm
   * that has ended.
   *
   * @example
   * const result = await client.wait();
   * if (result.status === 'paused' && result.reason.type === 'LIMIT') {
   *   await client.extend({ maxTurns: result.maxTurns + 5 });
   *   await client.resume('Five more rounds, then conclude.');
   * }
   */
  extend(limits: SwarmLimits): Promise<void> {
    return this.control.extend(this.swarmId, limits);
  }

  /**
   * Approves a gated tool call (`tool({ needsApproval })`): the swarm paused with
   * `APPROVAL_NEEDED`, listing each waiting call in `reason.pendingApprovals`; once every one is
   * answered it goes on by itself. With `always`, the tool needs no approval for the rest of the
   * run. An approval of an agent or a child swarm is answered here too. Throws a SwarmError
   * (`wrong-state`), nothing changed, for an id not pending now (unknown, answered, stale).
   *
   * @example
   * const r = await client.wait();
   * if (r.status === 'paused' && r.reason.type === 'APPROVAL_NEEDED') {
   *   for (const a of r.reason.pendingApprovals ?? []) await client.approve(a.approvalId);
   * }
   */
  approve(approvalId: string, options: ApproveOptions = {}): Promise<void> {
    return this.control.approve(this.swarmId, approvalId, options);
  }

  /**
   * Rejects a gated tool call: it does not run, and the model reads `reason` as its (error)
   * result. Refused as {@link approve} is.
   */
  reject(approvalId: string, reason: string): Promise<void> {
    return this.control.reject(this.swarmId, approvalId, reason);
  }
}

/** What an ad-hoc swarm is started with: everything a definition would hold. */
export interface AdhocParameters<R extends z.ZodType = z.ZodType> {
  userMessage: string;
  instructions: string;
  result?: R;
  handoffs?: readonly Handoff[];
  tools?: readonly ToolEntry[];
  maxTurns?: number;
  /** What reaching `maxTurns` does (default `'pause'`; see `SwarmDefinition.onLimit`). */
  onLimit?: OnLimit;
  /**
   * Guardrails per step, as a definition's (see `docs/guardrails.md`): registered by name, the
   * swarm stores their names; after a restart they resolve through `createRuntime({ guardrails })`.
   */
  guardrails?: AdhocGuardrails;
  /** Stall detection (see `SwarmDefinition.stall`). */
  stall?: StallRule;
  /** What the run may spend (see `SwarmDefinition.budget`). */
  budget?: Budget;
  /** The key whose budget the run also draws from (`createRuntime({ keyBudgets })`). */
  budgetKey?: string;
  /** What the model sees of the conversation (see `SwarmDefinition.history`, docs/history.md). */
  history?: HistoryPolicy;
  /** What the run is called: shown by `runtime.list()` (filter with `{ name }`), the inspector, `xswarm list`, and carried by its `task` event. */
  name?: string;
  /** What the run is for, shown with its name. */
  description?: string;
  /**
   * An id of the caller's choosing for the component that started the run (a feature, a job, a
   * widget): listings filter by it (`runtime.list({ componentId })`). Every ad-hoc swarm has the
   * definition id `xswarm.adhoc`; this and `name` tell them apart.
   */
  componentId?: string;
}

/** The label of an ad-hoc run: only the fields given (a stored label has no undefined keys). */
function labelOf({ name, description, componentId }: AdhocParameters): SwarmLabel {
  for (const [key, value] of Object.entries({ name, description, componentId })) {
    if (value !== undefined && typeof value !== 'string') throw new TypeError(`adhoc run: ${key} must be a string`);
  }
  return { ...(name ? { name } : {}), ...(description ? { description } : {}), ...(componentId ? { componentId } : {}) };
}

/**
 * The client of an ad-hoc swarm (no definition). The result schema is stored with the swarm
 * as JSON Schema, so it is validated the same way after a restart.
 *
 * @example
 * import { z } from 'zod';
 * const c = runtime.adhoc();
 * await c.run({ userMessage: 'Plan a picnic', instructions: 'You plan picnics.', result: z.object({ items: z.array(z.string()) }) });
 */
export class AdhocClient extends SwarmClient<AdhocParameters> {
  constructor(control: SwarmControl, swarmId: string) {
    super(control, ADHOC_ID, swarmId);
  }

  override run(params: AdhocParameters): Promise<void> {
    if (!params || typeof params.userMessage !== 'string' || typeof params.instructions !== 'string') {
      return Promise.reject(new TypeError('adhoc run needs { userMessage: string, instructions: string }'));
    }
    let label: SwarmLabel | undefined;
    try {
      label = params.name || params.description || params.componentId ? labelOf(params) : undefined;
    } catch (e) {
      return Promise.reject(e);
    }
    const options: ResolveOptions = {
      overrides: {
        instructions: params.instructions,
        ...(params.handoffs ? { handoffs: params.handoffs } : {}),
        ...(params.tools ? { tools: params.tools } : {}),
        ...(params.maxTurns !== undefined ? { maxTurns: params.maxTurns } : {}),
        ...(params.onLimit !== undefined ? { onLimit: params.onLimit } : {}),
        ...(params.stall !== undefined ? { stall: params.stall } : {}),
        ...(params.budget !== undefined ? { budget: params.budget } : {}),
        ...(params.budgetKey !== undefined ? { budgetKey: params.budgetKey } : {}),
        ...(params.history !== undefined ? { history: params.history } : {}),
      },
      ...(params.guardrails ? { guardrails: params.guardrails } : {}),
      ...(params.result ? { result: jsonSchemaOf(params.result) } : {}),
      ...(label ? { label } : {}),
    };
    return this.control.startSwarm(ADHOC_ID, this.swarmId, params.userMessage, options);
  }

  override withParameters(): never {
    throw new TypeError('An ad-hoc swarm takes all its parameters in run()');
  }
}
