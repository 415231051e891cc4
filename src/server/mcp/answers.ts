/**
 * Answering a typed pause over MCP. When `<name>_run` or `<name>_resume` with `wait` reaches a
 * pause with a response schema, and the client declared the `elicitation` capability on a
 * 2026-07-28 request, the tool call answers `input_required` with one form elicitation (the
 * pause's question, its schema as `requestedSchema`, see `./elicitation.ts`) and a request state
 * naming the swarm and the pause. The client's SDK asks its user and retries the call with the
 * response: `accept` resumes the swarm with the content (checked against the pause's schema;
 * refused as an `isError` result, nothing changed, when it does not match or the pause is gone),
 * `decline` and `cancel` return the paused result.
 *
 * A 2025-era session (`./sessions.ts`) whose client declared `elicitation` at `initialize` is
 * asked the 2025 way instead: an `elicitation/create` request on the tool call's stream
 * ({@link sessionElicitation}; the call answers once the swarm runs on to its next pause or end).
 *
 * Otherwise (no capability, a 2025-era request without a session, which has no stream to
 * receive the client's answer on, or a schema MCP cannot ask for) the tool returns the paused
 * result: its `reason` carries `pauseId` and `responseSchema`, and a second text block says how
 * to answer (`<name>_resume` with `pauseId` and `answer`; for a limit pause, `<name>_extend`).
 *
 * The request state comes back from the client: it is only read as the swarm and pause the
 * client answers, both checked as for `<name>_resume` (a swarm of this definition, the current
 * pause), so it grants nothing a client could not do with that tool.
 *
 * @module
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type ClientCapabilities,
  type ElicitRequestFormParams,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { LIMIT_PAUSE } from '../../../machines/pause.js';
import { SwarmError } from '../../errors.js';
import type { SwarmResult } from '../../store/result.js';
import { answerFromContent, type ElicitationForm, elicitationForm } from './elicitation.js';

/** The key of the one elicitation in an `input_required` result. */
const ANSWER_KEY = 'answer';

/** What the request state of an elicited pause names. */
export interface ElicitedPause {
  swarmId: string;
  pauseId?: string;
  /** The form asked a primitive schema as its `answer` field. */
  wrapped: boolean;
}

/** A tool result: the JSON as text (for models) and as structured content (for programs). */
export function toolResult(value: Record<string, unknown>, note?: string): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }, ...(note ? [{ type: 'text' as const, text: note }] : [])], structuredContent: value };
}

/** Whether the request's client declared it can answer a form elicitation (a 2026-07-28 request). */
function canElicit(ctx: ServerContext): boolean {
  // Only 2026-07-28 requests carry the envelope (its type is open in the SDK).
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: { form?: unknown; url?: unknown } } | undefined;
  return asksForms(caps?.elicitation);
}

/** Whether an `elicitation` capability covers forms. */
function asksForms(e: { form?: unknown; url?: unknown } | undefined): boolean {
  // A bare `elicitation: {}` is form support (the rule from before elicitation had modes).
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}

/** A typed pause asked with a 2025-era `elicitation/create` request (see the module doc). */
export interface SessionElicitation {
  params: ElicitRequestFormParams;
  form: ElicitationForm;
  pauseId?: string;
}

/**
 * The elicitation request asking a swarm's typed pause on a 2025-era request whose client
 * declared `elicitation` (`clientCapabilities`: what its session's `initialize` said; a stateless
 * request has none), or undefined: not paused for a typed answer MCP can ask, a 2026-07-28
 * request (asked with `input_required` instead), or no capability.
 */
export function sessionElicitation(result: SwarmResult, ctx: ServerContext, clientCapabilities: ClientCapabilities | undefined): SessionElicitation | undefined {
  if (result.status !== 'paused' || ctx.mcpReq.envelope !== undefined) return undefined;
  if (!asksForms(clientCapabilities?.elicitation as { form?: unknown; url?: unknown } | undefined)) return undefined;
  const { reason } = result;
  const form = reason.responseSchema ? elicitationForm(reason.responseSchema) : undefined;
  if (!form) return undefined;
  return {
    params: { mode: 'form', message: reason.message, requestedSchema: form.requestedSchema },
    form,
    ...(reason.pauseId !== undefined ? { pauseId: reason.pauseId } : {}),
  };
}

/**
 * The tool's answer for a swarm's result: for a typed pause, an elicitation when the client can
 * answer one and `ask` (see the module doc), else the result, with how to answer a pause.
 */
export function resultOrElicitation(name: string, swarmId: string, result: SwarmResult, ctx: ServerContext, ask = true): CallToolResult | InputRequiredResult {
  const value = { swarmId, ...result };
  if (result.status !== 'paused') return toolResult(value);
  const { reason } = result;
  const schema = reason.responseSchema;
  const form = schema ? elicitationForm(schema) : undefined;
  if (ask && form && canElicit(ctx)) {
    const state: ElicitedPause = { swarmId, ...(reason.pauseId !== undefined ? { pauseId: reason.pauseId } : {}), wrapped: form.wrapped };
    return inputRequired({
      inputRequests: { [ANSWER_KEY]: inputRequired.elicit({ mode: 'form', message: reason.message, requestedSchema: form.requestedSchema }) },
      requestState: JSON.stringify(state),
    });
  }
  const id = reason.pauseId !== undefined ? `, pauseId: ${JSON.stringify(reason.pauseId)}` : '';
  if (reason.type === LIMIT_PAUSE) {
    const tripped = reason.limit?.limit;
    // A struggling swarm has no limit to raise: a human's word (or a stop) is what it needs.
    if (tripped === 'struggling') return toolResult(value, `Paused, struggling: answer with ${name}_resume { swarmId${id}, message }, or stop it.`);
    const raise = tripped === undefined || tripped === 'maxTurns' ? 'maxTurns' : `budget: { ${tripped} }`;
    return toolResult(
      value,
      `Paused at a limit: raise it with ${name}_extend { swarmId, ${raise} }, then answer with ${name}_resume { swarmId${id}, message }, or stop it.`,
    );
  }
  if (!schema) return toolResult(value, `Paused: answer with ${name}_resume { swarmId${id}, message }.`);
  const why = form ? '' : ' (its schema is not a flat object of primitives, so it cannot be asked with MCP elicitation)';
  return toolResult(value, `Paused for a typed answer${why}: answer with ${name}_resume { swarmId${id}, answer } where answer matches reason.responseSchema.`);
}

/** The elicited pause a retried call answers (from its request state), or undefined for a first call. */
export function elicitedPause(ctx: ServerContext): ElicitedPause | undefined {
  const raw = ctx.mcpReq.requestState<unknown>();
  if (raw === undefined) return undefined;
  let state: unknown;
  try {
    state = typeof raw === 'string' ? JSON.parse(raw) : raw;
  } catch {
    state = undefined;
  }
  const s = state as Partial<ElicitedPause> | undefined;
  if (!s || typeof s.swarmId !== 'string' || (s.pauseId !== undefined && typeof s.pauseId !== 'string') || typeof s.wrapped !== 'boolean') {
    throw new SwarmError('The request state of this retried call is not one this server sent', 'invalid-input');
  }
  return { swarmId: s.swarmId, ...(s.pauseId !== undefined ? { pauseId: s.pauseId } : {}), wrapped: s.wrapped };
}

/**
 * The client's response to an elicited pause: the answer to resume with when it accepted, or
 * undefined when it declined or canceled (the pause stays). Throws when the retried call carries
 * no response.
 */
export function elicitedAnswer(pause: ElicitedPause, ctx: ServerContext): { answer: unknown } | undefined {
  const view = inputResponse(ctx.mcpReq.inputResponses, ANSWER_KEY);
  if (view.kind !== 'elicit') throw new SwarmError(`The retried call carries no answer to the elicitation of swarm "${pause.swarmId}"`, 'invalid-input');
  if (view.action !== 'accept') return undefined;
  return { answer: answerFromContent(pause, view.content) };
}
