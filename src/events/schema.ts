/**
 * A runtime schema of the swarm event model (`machines/events.ts`), for programs that receive
 * events from outside (a socket, a file, another process) and want to know they are what they
 * claim: A2A v0.3 objects plus `seq` and `swarmId`, and xswarm's `internal:*` events. The shapes
 * are strict (an unknown field is an error); a status update is also checked for the rules the
 * runtime keeps (`final` exactly on completed, failed and canceled, and then with a status
 * message).
 *
 * The machines declare the model as TypeScript types without zod (they import only xstate), so
 * the model is written twice: the checks at the end of this file fail to compile when one side
 * changes without the other (see {@link SameShape}; `test/events/event-schema-types.test.ts` shows
 * they do).
 *
 * @module
 */
import { z } from 'zod';
import { FINAL_STATES } from '../../machines/event-builders.js';
import type { InternalEvent, PublicSwarmEvent, SwarmEvent, SwarmFact } from '../../machines/events.js';
import { LIMIT_PAUSE, PAUSE_TYPES } from '../../machines/pause.js';
import { GUARDRAIL_PAUSE } from '../../machines/guardrail.js';
import { BUDGET_LIMITS, type BudgetLimit } from '../../machines/budget.js';

const count = z.number().nonnegative();
/** Usage by model name (a child's rolled-up usage in its `handoff-result`). */
const usageByModel = z.record(z.string(), z.strictObject({ calls: count, inputTokens: count, outputTokens: count, cachedInputTokens: count }));

const record = z.record(z.string(), z.unknown());
const stamp = { seq: z.number().int().positive(), swarmId: z.string().min(1) };
const isoTimestamp = z.iso.datetime({ offset: true });
const taskState = z.enum(['submitted', 'working', 'input-required', 'completed', 'failed', 'canceled', 'rejected']);

// A run's input files, a tool's files: the content (base64) or where it is.
const filePart = z.strictObject({
  kind: z.literal('file'),
  file: z.union([
    z.strictObject({ name: z.string().optional(), mimeType: z.string().optional(), bytes: z.string() }),
    z.strictObject({ name: z.string().optional(), mimeType: z.string().optional(), uri: z.string() }),
  ]),
  metadata: record.optional(),
});

const part = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('text'), text: z.string(), metadata: record.optional() }),
  // A2A v0.3: data is an object (other values travel wrapped, see `DataPart`).
  z.strictObject({ kind: z.literal('data'), data: record, metadata: record.optional() }),
  filePart,
]);

const message = z.strictObject({
  kind: z.literal('message'),
  role: z.enum(['agent', 'user']),
  messageId: z.string().min(1),
  parts: z.array(part),
  taskId: z.string().min(1),
  contextId: z.string().min(1),
});

// maxTurns trips count turns; budget trips count tokens, USD, calls or ms (and name their account).
const limitTrip = z.strictObject({
  limit: z.enum(['maxTurns', 'struggling', ...BUDGET_LIMITS]),
  max: z.number().nonnegative(),
  spent: z.number().nonnegative(),
  left: z.number().nonnegative(),
  rule: z.enum(['repeats', 'turnsWithoutNewResult']).optional(),
  toolName: z.string().optional(),
  account: z.string().optional(),
});
const guardrailRejection = z.strictObject({
  guardrail: z.string(),
  step: z.enum(['input', 'response', 'toolCall', 'output']),
  callId: z.string().optional(),
});
const pendingApproval = z.strictObject({
  approvalId: z.string(),
  tool: z.string(),
  arguments: z.string(),
  callId: z.string(),
  agent: z.string(),
  scope: z.string().optional(),
  swarmId: z.string().optional(),
});
const budgetCaps = z.strictObject(
  Object.fromEntries(BUDGET_LIMITS.map((k) => [k, z.number().nonnegative().optional()])) as Record<BudgetLimit, z.ZodOptional<z.ZodNumber>>,
);
const pauseReason = z.strictObject({
  type: z.enum([...PAUSE_TYPES, LIMIT_PAUSE, GUARDRAIL_PAUSE]),
  message: z.string(),
  pendingApprovalId: z.string().optional(),
  pendingApprovals: z.array(pendingApproval).optional(),
  limit: limitTrip.optional(),
  guardrail: guardrailRejection.optional(),
  pauseId: z.string().optional(),
  responseSchema: record.optional(),
});
const lifecycle = z.enum(['started', 'paused', 'resumed', 'completed', 'failed', 'stopped']);

/** The swarm facts a status update carries in `metadata`, by `type`. */
export const swarmFactSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('started'), definitionId: z.string() }),
  z.strictObject({ type: z.literal('agent-handoff'), from: z.string(), to: z.string(), callId: z.string(), request: z.string() }),
  z.strictObject({ type: z.literal('swarm-handoff'), from: z.string(), to: z.string(), childSwarmId: z.string(), callId: z.string(), input: z.unknown() }),
  z.strictObject({
    type: z.literal('handoff-result'),
    from: z.string(),
    to: z.string(),
    callId: z.string(),
    ok: z.boolean(),
    childSwarmId: z.string().optional(),
    content: z.string(),
    key: z.string(),
    usage: usageByModel.optional(),
    failsSwarm: z.literal(true).optional(),
  }),
  z.strictObject({
    type: z.literal('child-swarm'),
    childSwarmId: z.string(),
    definitionId: z.string(),
    callId: z.string(),
    lifecycle,
    reason: z.string().optional(),
    childSeq: z.number().int().positive(),
  }),
  z.strictObject({ type: z.literal('tool-call'), agent: z.string(), toolName: z.string(), callId: z.string() }),
  z.strictObject({ type: z.literal('turn-completed'), turn: z.number().int().positive(), maxTurns: z.number().int().positive(), activeAgent: z.string() }),
  z.strictObject({ type: z.literal('paused'), reason: pauseReason }),
  z.strictObject({ type: z.literal('resumed'), message: z.string().optional() }),
  z.strictObject({ type: z.literal('extended'), maxTurns: z.number().int().positive(), previousMaxTurns: z.number().int().positive(), budget: budgetCaps.optional() }),
  z.strictObject({ type: z.literal('migrated'), definitionId: z.string(), from: z.number().int().positive(), to: z.number().int().positive() }),
  z.strictObject({
    type: z.literal('approval'),
    approvalId: z.string(),
    decision: z.enum(['approved', 'rejected']),
    always: z.boolean().optional(),
    reason: z.string().optional(),
    at: z.number().optional(),
  }),
  z.strictObject({ type: z.literal('completed'), result: z.unknown() }),
  z.strictObject({
    type: z.literal('failed'),
    reason: z.string(),
    rejected: guardrailRejection.optional(),
    error: z
      .strictObject({
        kind: z.enum(['guardrail', 'model-call', 'max-turns', 'timeout', 'gave-up', 'runtime']),
        message: z.string(),
        guardrail: z.string().optional(),
      })
      .optional(),
  }),
  z.strictObject({ type: z.literal('stopped'), reason: z.string() }),
  z.strictObject({
    type: z.literal('forked'),
    forkedFrom: z.strictObject({ swarmId: z.string(), seq: z.number().int().nonnegative() }),
    turn: z.number().int().nonnegative(),
    instructions: z.string().optional(),
    sideEffects: z.array(
      z.strictObject({
        kind: z.enum(['tool', 'swarm']),
        name: z.string(),
        callId: z.string(),
        agent: z.string(),
        arguments: z.string(),
        seq: z.number().int().positive(),
        completedSeq: z.number().int().positive().optional(),
        key: z.string(),
        newKey: z.string(),
      }),
    ),
  }),
]);

const taskEvent = z.strictObject({
  kind: z.literal('task'),
  id: z.string().min(1),
  contextId: z.string().min(1),
  status: z.strictObject({ state: z.literal('submitted'), timestamp: isoTimestamp }),
  history: z.array(message).optional(),
  metadata: z.strictObject({
    definitionId: z.string(),
    label: z.strictObject({ name: z.string().optional(), description: z.string().optional(), componentId: z.string().optional() }).optional(),
  }),
  ...stamp,
});

const statusUpdateEvent = z.strictObject({
  kind: z.literal('status-update'),
  taskId: z.string().min(1),
  contextId: z.string().min(1),
  status: z.strictObject({ state: taskState, timestamp: isoTimestamp, message: message.optional() }),
  final: z.boolean(),
  metadata: swarmFactSchema,
  ...stamp,
});

const artifactUpdateEvent = z.strictObject({
  kind: z.literal('artifact-update'),
  taskId: z.string().min(1),
  contextId: z.string().min(1),
  artifact: z.strictObject({
    artifactId: z.string().min(1),
    name: z.string().optional(),
    description: z.string().optional(),
    metadata: record.optional(),
    parts: z.array(part),
  }),
  append: z.boolean().optional(),
  lastChunk: z.boolean().optional(),
  metadata: z.strictObject({ agent: z.string(), turn: z.number().int().nonnegative() }).optional(),
  ...stamp,
});

/**
 * A public swarm event (an A2A v0.3 `Task`, `TaskStatusUpdateEvent` or
 * `TaskArtifactUpdateEvent` with `seq` and `swarmId`), checked for the rules the runtime keeps.
 */
export const publicSwarmEventSchema = z.discriminatedUnion('kind', [taskEvent, statusUpdateEvent, artifactUpdateEvent]).superRefine((e, ctx) => {
  const taskId = e.kind === 'task' ? e.id : e.taskId;
  if (taskId !== e.swarmId) ctx.addIssue({ code: 'custom', message: `the task id ${taskId} is not the swarm id ${e.swarmId}` });
  if (e.kind !== 'status-update') return;
  if (e.final !== FINAL_STATES.has(e.status.state)) ctx.addIssue({ code: 'custom', path: ['final'], message: `final must be ${!e.final} in state ${e.status.state}` });
  if (e.final && !e.status.message) ctx.addIssue({ code: 'custom', path: ['status', 'message'], message: 'a final status carries a message' });
  const m = e.status.message;
  if (m && (m.taskId !== e.taskId || m.contextId !== e.contextId)) {
    ctx.addIssue({ code: 'custom', path: ['status', 'message'], message: 'the status message names another task or context' });
  }
});

// ---- internal events: the replay journal and observability --------------------------------
// What the runtime records, as it records it: a model response is normalized to these fields
// before it is judged (`actors/judge.ts`), so nothing else can be in one.

const toolCall = z.strictObject({ id: z.string(), name: z.string(), arguments: z.string() });
const usage = z.strictObject({ inputTokens: z.number(), outputTokens: z.number(), cachedInputTokens: z.number().optional() });
const modelResponse = z.strictObject({ text: z.string().optional(), toolCalls: z.array(toolCall).optional(), usage: usage.optional() });

// The shape only: what a customization may say is checked where it is planned
// (`src/catalog/customization.ts`), and only a checked one reaches the journal.
const customization = z.strictObject({
  additional_instructions: z.string().optional(),
  additional_agents: z.array(z.string()).optional(),
  additional_tools: z.array(z.string()).optional(),
  max_turns_override: z.number().int().positive().optional(),
});

const callHead = { id: z.string(), name: z.string() };
/** A call's `timeoutMs`, when it has one. */
const timeoutMs = z.number().int().positive().optional();
/** A call's `onTimeout`, when it is `'fail'`. */
const failOnTimeout = z.literal('fail').optional();

const plannedCall = z.discriminatedUnion('kind', [
  z.strictObject({ ...callHead, kind: z.literal('tool'), arguments: z.string(), timeoutMs, onTimeout: failOnTimeout }),
  z.strictObject({ ...callHead, kind: z.literal('agent'), agentId: z.string(), request: z.string() }),
  z.strictObject({ ...callHead, kind: z.literal('remote'), agentId: z.string(), url: z.string(), request: z.string(), timeoutMs, onTimeout: failOnTimeout }),
  z.strictObject({
    ...callHead,
    kind: z.literal('swarm'),
    definitionId: z.string(),
    input: z.unknown(),
    customization: customization.optional(),
    timeoutMs,
    onTimeout: failOnTimeout,
  }),
  z.strictObject({ ...callHead, kind: z.literal('pause'), reason: pauseReason }),
  z.strictObject({ ...callHead, kind: z.literal('invalid'), error: z.string() }),
  z.strictObject({ ...callHead, kind: z.literal('gated'), arguments: z.string(), timeoutMs, approvalId: z.string() }),
]);

const heldVerdicts = [
  z.strictObject({ type: z.literal('continue') }),
  z.strictObject({ type: z.literal('complete'), result: z.unknown() }),
  z.strictObject({ type: z.literal('fail'), reason: z.string() }),
  z.strictObject({ type: z.literal('correct'), message: z.string() }),
] as const;
const stepVerdict = z.discriminatedUnion('type', [
  ...heldVerdicts,
  z.strictObject({ type: z.literal('reject'), reason: z.string(), rejected: guardrailRejection }),
  z.strictObject({ type: z.literal('pause'), reason: z.string(), rejected: guardrailRejection, then: z.discriminatedUnion('type', heldVerdicts) }),
]);

const checkpointStep = z.enum(['start', 'model-response', 'tool-result', 'handoff-result', 'agent-step', 'pause', 'resume', 'extend', 'stop', 'approval']);

/** Internal events are stamped with the time in ms since the epoch, not an ISO text. */
const internalStamp = { ...stamp, timestamp: z.number() };

/**
 * An internal event (`internal:llm-call`, `internal:tool-start`, `internal:tool-complete`,
 * `internal:checkpoint`), payload included. Internal events are the runtime's own (model
 * responses, the replay journal) and never leave over A2A.
 */
export const internalSwarmEventSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('internal:llm-call'),
    agent: z.string(),
    scope: z.string(),
    turn: z.number().int().nonnegative(),
    response: modelResponse,
    usage: usage.optional(),
    model: z.string().optional(),
    durationMs: z.number().nonnegative(),
    calls: z.array(plannedCall),
    verdict: stepVerdict,
    summary: z.strictObject({ upTo: z.number().int().nonnegative() }).optional(),
    ...internalStamp,
  }),
  z.strictObject({ kind: z.literal('internal:tool-start'), agent: z.string(), toolName: z.string(), callId: z.string(), arguments: z.string(), ...internalStamp }),
  z.strictObject({
    kind: z.literal('internal:tool-complete'),
    agent: z.string(),
    toolName: z.string(),
    callId: z.string(),
    ok: z.boolean(),
    content: z.string(),
    failsSwarm: z.literal(true).optional(),
    files: z.array(filePart).optional(),
    key: z.string(),
    ...internalStamp,
  }),
  z.strictObject({ kind: z.literal('internal:checkpoint'), step: checkpointStep, ...internalStamp }),
]);

/**
 * Any event of a swarm's stream: a public one or an internal one.
 *
 * @example
 * import { swarmEventSchema } from 'xswarm';
 * const parsed = swarmEventSchema.safeParse(JSON.parse(line));
 * if (parsed.success) console.log(parsed.data.swarmId, parsed.data.seq, parsed.data.kind);
 * else console.error(parsed.error.issues);
 */
export const swarmEventSchema = z.union([publicSwarmEventSchema, internalSwarmEventSchema]);

// ---- the schema is the model ------------------------------------------------------------------

/**
 * `true` when `A` and `B` are the same type, `false` otherwise: the same members in each object
 * (an optional field on one side only counts as a difference, which mutual assignability would
 * miss), of the same types, at every depth; how a type is written (an interface, an
 * intersection, zod's inferred object) does not count: `{ a: string } & { b?: number }` is
 * `{ a: string; b?: number }`, and `{ a: string }` is not.
 */
export type SameShape<A, B> = (<T>() => T extends Flat<A> ? 1 : 2) extends <T>() => T extends Flat<B> ? 1 : 2 ? true : false;

/** `T` written out as plain object types at every depth (intersections merged), for {@link SameShape}. */
type Flat<T> = T extends object ? { [K in keyof T]: Flat<T[K]> } : T;

// Each line stops compiling (`npm run typecheck`) when the schema and the type drift apart:
// change both sides together. The runtime's output (`machines/event-builders.ts`, stamped by
// `src/events/stamp.ts`) is what both describe.
const factsAreTheModel: SameShape<z.output<typeof swarmFactSchema>, SwarmFact> = true;
const publicEventsAreTheModel: SameShape<z.output<typeof publicSwarmEventSchema>, PublicSwarmEvent> = true;
const internalEventsAreTheModel: SameShape<z.output<typeof internalSwarmEventSchema>, InternalEvent> = true;
const eventsAreTheModel: SameShape<z.output<typeof swarmEventSchema>, SwarmEvent> = true;
void [factsAreTheModel, publicEventsAreTheModel, internalEventsAreTheModel, eventsAreTheModel];
