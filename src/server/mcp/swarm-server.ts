/**
 * The MCP surface of a runtime: per swarm definition four tools, a result resource template
 * and an instructions prompt, on an `McpServer` of the v2 SDK (`@modelcontextprotocol/server`).
 *
 * | MCP | does |
 * |---|---|
 * | tool `<name>_run` | starts a swarm; `wait: true` waits for completed / failed / stopped / paused, reporting turns and handoffs as progress |
 * | tool `<name>_get_result` `{ swarmId }` | the {@link SwarmResult} |
 * | tool `<name>_resume` `{ swarmId, message?, answer?, pauseId?, wait? }` | resumes a paused swarm with the human's answer (text, or typed for a pause with a response schema) |
 * | tool `<name>_extend` `{ swarmId, maxTurns?, budget? }` | raises the turn limit or the budget of a swarm paused at it |
 * | tool `<name>_stop` `{ swarmId, reason? }` | stops it |
 * | tools `<name>_approve` / `<name>_reject` | answer a pending approval (see `approval-tools.ts`) |
 * | resource template `swarm://<id>/{swarmId}/result` | the {@link SwarmResult} as `application/json`; in a 2025-era session, subscribable (`./resource-subscriptions.ts`) |
 * | prompt `<name>_instructions` | the swarm's instructions (with an `input` argument when they depend on the input) |
 * | logging | the progress lines of a wait also as `info` messages (`logger: "xswarm"`) |
 * | completion | a result template's `swarmId`: the definition's recent swarm ids (`./completions.ts`) |
 *
 * With `wait`, a pause with a response schema is asked with an MCP elicitation when the client
 * can answer one (see `./answers.ts`): `input_required` on 2026-07-28, an `elicitation/create`
 * request in a 2025-era session.
 *
 * `<name>` is the definition id made a valid tool name ({@link mcpBaseNames}); the resource
 * URI carries the id itself, percent-encoded.
 *
 * Failures a caller can cause (unknown swarm, a swarm of another definition, wrong state,
 * invalid input, an invalid swarm id) come back as `isError: true` tool results, which a model
 * can read and act on; they never become protocol errors or crash the server.
 *
 * @module
 */
import { traceCarrierOf, withCarriedTrace } from '../../util/trace-headers.js';
import { XSWARM_VERSION } from '../../util/version.js';
import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type CallToolResult,
  type InputRequiredResult,
  type ServerContext as McpContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { errorText } from '../../../machines/error-text.js';
import type { SwarmFact } from '../../../machines/events.js';
import { lastStoredSeq } from '../../events/cursor.js';
import { resolveFromInput, type SwarmDefinition } from '../../define/swarm.js';
import { SwarmError } from '../../errors.js';
import type { SwarmResult } from '../../store/result.js';
import type { Runtime } from '../../runtime/types.js';
import { assertSwarmId, MAX_DERIVED_SWARM_ID_LENGTH } from '../../define/swarm-id.js';
import { validate } from '../../define/tool.js';
import { type ElicitedPause, elicitedAnswer, elicitedPause, resultOrElicitation, sessionElicitation } from './answers.js';
import { answerFromContent } from './elicitation.js';
import { mcpBaseNames } from './names.js';
import { registerApprovalTools } from './approval-tools.js';
import { completeSwarmIds } from './completions.js';
import { type InputMode, runInputSchema, splitRunArgs, swarmResultSchema } from './schemas.js';

/** Everything per definition that does not change between requests, computed once. */
interface Entry {
  def: SwarmDefinition;
  name: string;
  run: { schema: ReturnType<typeof runInputSchema>['schema']; mode: InputMode };
  output: ReturnType<typeof swarmResultSchema>;
}

/**
 * What {@link createSwarmMcpServer} serves, computed once per runtime: definitions are fixed
 * when the runtime is created, while the SDK asks for a fresh server on every HTTP request.
 */
export interface SwarmMcpCatalog {
  readonly entries: readonly Entry[];
}

/** Builds the catalog of a runtime's definitions (names, schemas). */
export function swarmMcpCatalog(runtime: Runtime): SwarmMcpCatalog {
  const defs = runtime
    .definitions()
    .map((card) => runtime.definition(card.id))
    .filter((d): d is SwarmDefinition => d !== undefined);
  const names = mcpBaseNames(defs.map((d) => d.id));
  return {
    entries: defs.map((def) => ({ def, name: names.get(def.id)!, run: runInputSchema(def), output: swarmResultSchema(def) })),
  };
}

const SWARM_ID = z.string().min(1).describe('The swarm instance id (what <id>_run returned).');
const GET_RESULT_INPUT = z.object({ swarmId: SWARM_ID });
const RESUME_INPUT = z.object({
  swarmId: SWARM_ID,
  message: z.string().optional().describe("The human's answer as text; it reaches the orchestrator."),
  answer: z
    .unknown()
    .optional()
    .describe(
      'The typed answer to a pause with a response schema (reason.responseSchema): checked against it, and refused with nothing changed when it does not match. Takes precedence over message.',
    ),
  pauseId: z.string().optional().describe('The pause this answers (reason.pauseId): refused when the swarm is no longer paused there.'),
  wait: z.boolean().optional().describe('Wait until the swarm completes, fails, is stopped or pauses again, like <id>_run.'),
});
const EXTEND_INPUT = z.object({
  swarmId: SWARM_ID,
  maxTurns: z.number().int().optional().describe('The new turn limit, above the turns made so far.'),
  budget: z
    .object({ tokens: z.number(), usd: z.number(), modelCalls: z.number(), toolCalls: z.number(), wallMs: z.number() })
    .partial()
    .optional()
    .describe("New caps of the swarm's own budget (raised only; a paused LIMIT reason names the cap that tripped)."),
});
const STOP_INPUT = z.object({ swarmId: SWARM_ID, reason: z.string().optional().describe('Why it is stopped (recorded in the result).') });
const PROMPT_INPUT = z.object({
  input: z.string().describe('The swarm input the instructions are computed for: text, or JSON for a structured input.'),
});

/** The name and version we announce in `initialize` / `server/discover`. */
const SERVER_INFO = { name: 'xswarm', version: XSWARM_VERSION };

/** A fresh `McpServer` exposing a runtime's swarms (one per stateless request, one per 2025-era session). */
export function createSwarmMcpServer(runtime: Runtime, catalog: SwarmMcpCatalog): McpServer {
  const server = new McpServer(SERVER_INFO, {
    // Logging (2025-11-25; deprecated but served in 2026-07-28): a wait's progress lines are
    // also `notifications/message`, for clients that show logs rather than progress.
    capabilities: { logging: {} },
    instructions:
      'Each swarm definition has tools <name>_run, <name>_get_result, <name>_resume, <name>_extend and <name>_stop, ' +
      'the resource template swarm://<id>/{swarmId}/result and the prompt <name>_instructions. ' +
      'Long runs: call <name>_run with wait: true and a progressToken, or poll <name>_get_result.',
  });
  for (const entry of catalog.entries) register(server, runtime, entry);
  return server;
}

function register(server: McpServer, runtime: Runtime, { def, name, run, output }: Entry): void {
  const label = def.name === def.id ? `"${def.id}"` : `"${def.name}" (${def.id})`;
  // defineSwarm defaults the description to the name or id: do not repeat it.
  const about = def.description === def.id || def.description === def.name ? '' : `: ${def.description.replace(/\.\s*$/, '')}`;

  server.registerTool(
    `${name}_run`,
    {
      title: `Run ${def.name}`,
      description:
        `Starts swarm ${label}${about}. Returns its swarmId at once, or with wait: true its result ` +
        '(completed, failed, stopped, or paused waiting for a human: answer with ' +
        `${name}_resume).`,
      inputSchema: run.schema,
      outputSchema: output,
    },
    (args, ctx) =>
      safely(async () => {
        // A retry carrying the answer to the elicitation of a pause (./answers.ts): the swarm runs already.
        const elicited = elicitedPause(ctx);
        if (elicited) return continueElicited(runtime, def.id, name, elicited, ctx);
        const { input, swarmId, wait } = splitRunArgs(args as Record<string, unknown>, run.mode);
        const client = runtime.forSwarm(def.id, swarmId);
        // A `_meta.traceparent` (W3C trace context, as MCP clients propagate it) makes the swarm's span the caller's child.
        await withCarriedTrace(traceCarrierOf(ctx.mcpReq._meta), () => client.run(input));
        if (!wait) return answer({ swarmId: client.swarmId, ...(await client.getResult()) });
        return answerFollowed(server, runtime, def.id, name, client.swarmId, await follow(runtime, def.id, client.swarmId, 0, ctx), ctx);
      }),
  );

  server.registerTool(
    `${name}_get_result`,
    {
      title: `Result of a ${def.name} swarm`,
      description: `The current result of a swarm ${label}: running (turn, agent), paused (why), completed (the result), failed or stopped (the reason).`,
      inputSchema: GET_RESULT_INPUT,
      outputSchema: output,
      annotations: { readOnlyHint: true },
    },
    ({ swarmId }) => safely(async () => answer(await resultOf(runtime, def.id, swarmId))),
  );

  server.registerTool(
    `${name}_resume`,
    {
      title: `Resume a ${def.name} swarm`,
      description:
        `Resumes a paused swarm ${label}: message is the human's answer to its question, answer a typed answer ` +
        '(for a pause with reason.responseSchema), pauseId the pause it answers (reason.pauseId).',
      inputSchema: RESUME_INPUT,
      outputSchema: output,
    },
    ({ swarmId, message, answer: typed, pauseId, wait }, ctx) =>
      safely(async () => {
        const elicited = elicitedPause(ctx);
        if (elicited) return continueElicited(runtime, def.id, name, elicited, ctx);
        await ownSwarm(runtime, def.id, swarmId);
        // While paused nothing is appended, so this is where the resumed run's events start.
        const since = await lastSeq(runtime, swarmId);
        await runtime.forSwarm(def.id, swarmId).resume(typed !== undefined ? typed : message, pauseId === undefined ? {} : { pauseId });
        if (!wait) return answer({ swarmId, ...(await runtime.forSwarm(def.id, swarmId).getResult()) });
        return answerFollowed(server, runtime, def.id, name, swarmId, await follow(runtime, def.id, swarmId, since, ctx), ctx);
      }),
  );

  server.registerTool(
    `${name}_extend`,
    {
      title: `Extend a ${def.name} swarm`,
      description: `Raises the turn limit or the budget of a swarm ${label} paused at a limit (reason.type LIMIT, reason.limit says which); then answer with ${name}_resume.`,
      inputSchema: EXTEND_INPUT,
      outputSchema: output,
    },
    ({ swarmId, maxTurns, budget }) =>
      safely(async () => {
        await ownSwarm(runtime, def.id, swarmId);
        const client = runtime.forSwarm(def.id, swarmId);
        // The runtime checks the values (a maxTurns above the turns made, caps that are not lowered).
        await client.extend({ ...(maxTurns !== undefined ? { maxTurns } : {}), ...(budget ? { budget } : {}) });
        return answer({ swarmId, ...(await client.getResult()) });
      }),
  );

  server.registerTool(
    `${name}_stop`,
    {
      title: `Stop a ${def.name} swarm`,
      description: `Stops a running or paused swarm ${label} and everything it runs.`,
      inputSchema: STOP_INPUT,
      outputSchema: output,
      annotations: { destructiveHint: true, idempotentHint: false },
    },
    ({ swarmId, reason }) =>
      safely(async () => {
        await ownSwarm(runtime, def.id, swarmId);
        const client = runtime.forSwarm(def.id, swarmId);
        await client.stop(reason ?? 'stopped by MCP client');
        return answer({ swarmId, ...(await client.getResult()) });
      }),
  );

  // <name>_approve and <name>_reject (approval-tools.ts).
  registerApprovalTools(server, runtime, { def, name, output }, { safely, answer, ownSwarm, follow, lastSeq });

  const uriPrefix = `swarm://${encodeURIComponent(def.id)}/`;
  server.registerResource(
    `${name}_result`,
    new ResourceTemplate(`${uriPrefix}{swarmId}/result`, {
      // The most recent swarms of this definition, so clients can browse results.
      list: async () => ({
        resources: (await runtime.list({ definitionId: def.id, limit: 50 })).map((s) => ({
          uri: `${uriPrefix}${encodeURIComponent(s.swarmId)}/result`,
          name: `${def.id} ${s.swarmId}`,
          description: `Result of swarm ${s.swarmId} (${s.status})`,
          mimeType: 'application/json',
        })),
      }),
      // completion/complete on the template: the ids of this definition's recent swarms.
      complete: { swarmId: (value) => completeSwarmIds(runtime, def.id, value) },
    }),
    { title: `Results of ${def.name} swarms`, description: `The SwarmResult JSON of a swarm ${label}.`, mimeType: 'application/json' },
    async (uri, variables) => {
      const raw = variables.swarmId;
      const swarmId = decode(Array.isArray(raw) ? raw[0] : raw);
      let result: SwarmResult;
      try {
        result = await resultOf(runtime, def.id, swarmId ?? '');
      } catch (e) {
        if (e instanceof SwarmError && e.code === 'invalid-id') throw new ProtocolError(ProtocolErrorCode.InvalidParams, e.message);
        if (e instanceof SwarmError) throw new ResourceNotFoundError(uri.href, e.message);
        throw e;
      }
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(result) }] };
    },
  );

  const description = `The instructions of swarm ${label}.`;
  if (typeof def.instructions === 'function') {
    server.registerPrompt(`${name}_instructions`, { title: `${def.name} instructions`, description, argsSchema: PROMPT_INPUT }, ({ input }) =>
      prompt(resolveFromInput(def.instructions, promptInput(def, input))),
    );
  } else {
    const text = def.instructions;
    server.registerPrompt(`${name}_instructions`, { title: `${def.name} instructions`, description }, () => prompt(text));
  }
}

/** A tool result: the JSON as text (for models) and as structured content (for programs). */
function answer(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** Runs a tool body; any error becomes an `isError` result the caller (often a model) can read. */
async function safely<R extends CallToolResult | InputRequiredResult>(body: () => Promise<R>): Promise<R | CallToolResult> {
  try {
    return await body();
  } catch (e) {
    return { isError: true, content: [{ type: 'text', text: errorText(e) }] };
  }
}

/**
 * Throws unless the swarm exists and belongs to this definition: `<a>_stop` must not stop a
 * swarm of definition `<b>`.
 */
async function ownSwarm(runtime: Runtime, definitionId: string, swarmId: string): Promise<void> {
  assertSwarmId(swarmId, MAX_DERIVED_SWARM_ID_LENGTH);
  const record = await runtime.store.load(swarmId);
  if (!record || record.definitionId !== definitionId) throw new SwarmError(`Unknown swarm "${swarmId}" of definition "${definitionId}"`);
}

async function resultOf(runtime: Runtime, definitionId: string, swarmId: string): Promise<SwarmResult> {
  await ownSwarm(runtime, definitionId, swarmId);
  return runtime.forSwarm(definitionId, swarmId).getResult();
}

/**
 * A retried `<name>_run`/`<name>_resume` answering the elicitation of a pause: resumes the swarm
 * with the accepted answer and follows it again (to its next pause, which may be asked too); a
 * declined or canceled one returns the paused result.
 */
async function continueElicited(
  runtime: Runtime,
  definitionId: string,
  name: string,
  pause: ElicitedPause,
  ctx: McpContext,
): Promise<CallToolResult | InputRequiredResult> {
  const { swarmId } = pause;
  await ownSwarm(runtime, definitionId, swarmId);
  const client = runtime.forSwarm(definitionId, swarmId);
  const response = elicitedAnswer(pause, ctx);
  if (!response) return resultOrElicitation(name, swarmId, await client.getResult(), ctx, false);
  const since = await lastSeq(runtime, swarmId);
  const refused = await resumeWith(client, name, response.answer, pause.pauseId);
  if (refused) return refused;
  return resultOrElicitation(name, swarmId, await follow(runtime, definitionId, swarmId, since, ctx), ctx);
}

/**
 * Resumes a swarm with an elicited answer; an answer the pause refuses (it does not match the
 * schema, or the pause is gone) changes nothing and comes back as an `isError` result.
 */
async function resumeWith(client: SwarmClientOf, name: string, answer: unknown, pauseId: string | undefined): Promise<CallToolResult | undefined> {
  try {
    await client.resume(answer, pauseId === undefined ? {} : { pauseId });
    return undefined;
  } catch (e) {
    if (!(e instanceof SwarmError) || e.code !== 'invalid-input') throw e;
    // Refused, nothing changed: say so, and how to answer again.
    const at = pauseId === undefined ? '' : ` at "${pauseId}"`;
    return { isError: true, content: [{ type: 'text', text: `${errorText(e)}. The swarm stays paused${at}: answer again with ${name}_resume.` }] };
  }
}

type SwarmClientOf = ReturnType<Runtime['forSwarm']>;

/**
 * The answer of a `<name>_run` / `<name>_resume` that followed its swarm. On a 2025-era session
 * whose client declared `elicitation`, each typed pause MCP can ask is asked with an
 * `elicitation/create` request on the call's own stream, and an accepted answer resumes the
 * swarm, followed again (to its next pause or its end); a declined or canceled one, or a client
 * that cannot answer, returns the paused result. Otherwise `resultOrElicitation` (`./answers.ts`).
 */
async function answerFollowed(
  server: McpServer,
  runtime: Runtime,
  definitionId: string,
  name: string,
  swarmId: string,
  followed: SwarmResult,
  ctx: McpContext,
): Promise<CallToolResult | InputRequiredResult> {
  let result = followed;
  for (;;) {
    // The client's capabilities as its session's `initialize` declared them (none without a session).
    const ask = sessionElicitation(result, ctx, server.server.getClientCapabilities());
    if (!ask) return resultOrElicitation(name, swarmId, result, ctx);
    const reply = await ctx.mcpReq.elicitInput(ask.params).catch(() => undefined);
    if (reply?.action !== 'accept') return resultOrElicitation(name, swarmId, result, ctx, false);
    const since = await lastSeq(runtime, swarmId);
    const refused = await resumeWith(runtime.forSwarm(definitionId, swarmId), name, answerFromContent(ask.form, reply.content), ask.pauseId);
    if (refused) return refused;
    result = await follow(runtime, definitionId, swarmId, since, ctx);
  }
}

/** The sequence number of a swarm's latest stored event. */
async function lastSeq(runtime: Runtime, swarmId: string): Promise<number> {
  const record = await runtime.store.load(swarmId);
  if (!record) return 0;
  return lastStoredSeq(runtime.store, record);
}

/**
 * Follows a swarm's events after `since` until it pauses or ends, sending each turn and
 * handoff as a `notifications/progress` when the client asked for progress, then returns the
 * result. The swarm keeps running if the client cancels: it is durable, and `<id>_get_result`
 * finds it later.
 */
async function follow(runtime: Runtime, definitionId: string, swarmId: string, since: number, ctx: McpContext): Promise<SwarmResult> {
  const client = runtime.forSwarm(definitionId, swarmId);
  const token = ctx.mcpReq._meta?.progressToken;
  const signal = ctx.mcpReq.signal;
  let progress = 0;
  let childAsks = false;
  // The request's signal ends the iteration at once when the client cancels or goes away.
  for await (const event of client.events({ since, signal })) {
    if (event.kind !== 'status-update') continue;
    const message = progressMessage(event.metadata);
    if (message !== undefined) {
      // A client that went away must not stop the swarm or fail the wait.
      if (token !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: ++progress, message } }).catch(() => undefined);
      }
      // The SDK applies the client's level (logging/setLevel, or the 2026 envelope's, without which it sends none).
      await ctx.mcpReq.log('info', { swarmId, message }, 'xswarm').catch(() => undefined);
    }
    if (event.final || event.metadata.type === 'paused') break;
    // A child swarm asks for approvals (its input-required relayed here): the swarm, still
    // running, waits for a human too, and its result lists them (`pendingApprovals`).
    if (event.status.state === 'input-required') {
      childAsks = true;
      break;
    }
  }
  return signal.aborted || childAsks ? client.getResult() : client.wait();
}

/** The human-readable progress line of a fact, or undefined when it is not reported. */
function progressMessage(fact: SwarmFact): string | undefined {
  switch (fact.type) {
    case 'turn-completed':
      return `Turn ${fact.turn}/${fact.maxTurns} completed (active agent: ${fact.activeAgent})`;
    case 'agent-handoff':
      return `${fact.from} handed off to agent ${fact.to}: ${clip(fact.request)}`;
    case 'swarm-handoff':
      return `${fact.from} handed off to swarm ${fact.to} (child swarm ${fact.childSwarmId})`;
    case 'child-swarm':
      return `Child swarm ${fact.definitionId} (${fact.childSwarmId}) ${fact.lifecycle}${fact.reason ? `: ${clip(fact.reason)}` : ''}`;
    default:
      return undefined;
  }
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function decode(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The swarm input a prompt's `input` argument stands for: the text itself when the swarm
 * accepts it, else the text parsed as JSON.
 */
function promptInput(def: SwarmDefinition, text: string): unknown {
  const direct = validate(def.input, text);
  if (direct.ok) return direct.value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid input for swarm "${def.id}": ${direct.error}`);
  }
  const structured = validate(def.input, parsed);
  if (!structured.ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid input for swarm "${def.id}": ${structured.error}`);
  return structured.value;
}

function prompt(text: string) {
  return { messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }] };
}
