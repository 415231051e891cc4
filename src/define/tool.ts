/**
 * Regular tools: a name, a description, a zod schema for the arguments and a function.
 *
 * @module
 */
import { z } from 'zod';
import { DefinitionError } from '../errors.js';
import { checkOnTimeout, checkTimeoutMs, type OnTimeout } from './timeout.js';

/**
 * What a tool's `execute` receives besides its arguments. `idempotencyKey` is the same when a
 * call runs again after a restart, so side effects can be de-duplicated; `signal` aborts when
 * the swarm stops.
 */
export interface ToolContext {
  swarmId: string;
  agentId: string;
  toolCallId: string;
  idempotencyKey: string;
  signal: AbortSignal;
}

/** What a tool's `needsApproval` function receives besides the call's arguments. */
export interface ApprovalContext {
  swarmId: string;
  /** Who makes the call: the swarm's definition id for its orchestrator, else the agent's id. */
  agentId: string;
  toolCallId: string;
}

/**
 * Whether a call of a tool waits for a human's approval: always (`true`), never (`false`, the
 * default), or as a function of the call's arguments decides (a throwing function gates the call:
 * fail closed).
 */
export type NeedsApproval<A = Record<string, unknown>> = boolean | ((args: A, ctx: ApprovalContext) => boolean | Promise<boolean>);

/** A tool the orchestrator or an agent can call. */
export interface Tool<P extends z.ZodObject = z.ZodObject> {
  readonly kind: 'tool';
  readonly name: string;
  readonly description: string;
  readonly parameters: P;
  /**
   * How long one call may take, in ms, counted from the model response that asked for it: past
   * it the call's `signal` aborts and the model reads a timeout as the tool's result. The
   * deadline is stored with the call, so a swarm restored after a crash keeps it.
   */
  readonly timeoutMs?: number;
  /**
   * Whether a call waits for a human's approval before it runs (`client.approve` /
   * `client.reject`): see {@link NeedsApproval} and docs/approvals.md.
   */
  readonly needsApproval?: NeedsApproval<z.output<P>>;
  /**
   * What a call past `timeoutMs` does: `'result'` (the default) gives the timeout to the model as
   * the tool's result; `'fail'` fails the swarm whose model (or agent) made the call.
   */
  readonly onTimeout?: OnTimeout;
  execute(args: z.output<P>, ctx: ToolContext): unknown;
}

/** Tool names the OpenAI API accepts, which we apply to every model. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool. The name must match `^[a-zA-Z0-9_-]{1,64}$`; the runtime checks this (and
 * uniqueness) when it is created. A `timeoutMs` that is not a whole number of milliseconds from
 * 1 up is refused here (`DefinitionError`).
 *
 * @example
 * import { z } from 'zod';
 * import { tool } from 'xswarm';
 * const forecast = tool({
 *   name: 'get_forecast',
 *   description: 'Weather forecast for a day',
 *   parameters: z.object({ day: z.string() }),
 *   execute: async ({ day }, ctx) => ({ day, sky: 'sunny', key: ctx.idempotencyKey }),
 *   timeoutMs: 10_000, // the model reads a timeout after 10 s; ctx.signal aborts then
 * });
 * const refund = tool({
 *   name: 'refund',
 *   description: 'Refunds an order',
 *   parameters: z.object({ orderId: z.string(), amount: z.number() }),
 *   execute: async ({ orderId }) => `refunded ${orderId}`,
 *   needsApproval: ({ amount }) => amount > 100, // the swarm pauses until client.approve(id)
 * });
 */
export function tool<P extends z.ZodObject>(spec: {
  name: string;
  description: string;
  parameters: P;
  execute: (args: z.output<P>, ctx: ToolContext) => unknown;
  timeoutMs?: number;
  needsApproval?: NeedsApproval<z.output<P>>;
  onTimeout?: OnTimeout;
}): Tool<P> {
  checkTimeoutMs(spec.timeoutMs, `Tool "${spec.name}"`);
  checkOnTimeout(spec.onTimeout, `Tool "${spec.name}"`);
  const gate = spec.needsApproval;
  if (gate !== undefined && typeof gate !== 'boolean' && typeof gate !== 'function') {
    throw new DefinitionError(`Tool "${spec.name}": needsApproval must be a boolean or a function (args, ctx) => boolean, got ${typeof gate}`);
  }
  return Object.freeze({ kind: 'tool' as const, ...spec });
}

const schemaCache = new WeakMap<z.ZodType, Record<string, unknown>>();

/** The JSON Schema of a zod schema, as sent to models (computed once per schema). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  let json = schemaCache.get(schema);
  if (!json) {
    const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
    json = rest;
    schemaCache.set(schema, json);
  }
  return json;
}

/**
 * Validates a value with a zod schema; on failure, a one-line description of every issue
 * (what a model needs to correct itself).
 */
export function validate(schema: z.ZodType, value: unknown): { ok: true; value: unknown } | { ok: false; error: string } {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const error = parsed.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
  return { ok: false, error };
}
