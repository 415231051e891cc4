/**
 * `xswarm pause|resume|stop <id> [reason | message]`, `xswarm extend <id> <maxTurns>`, `xswarm
 * approve <id> <approvalId> [--always]` and `xswarm reject <id> <approvalId> <reason>`: commands a swarm.
 * `resume` may name the pause it answers (`--pause-id P`) and give a typed answer as JSON
 * (`--answer '{"approved":true}'`) instead of the message.
 *
 * Only the process that holds a swarm's lease drives it. So a command is carried out in one of
 * three ways:
 * - with `--url`, it is sent to the `xswarm serve` process at that address over REST;
 * - with `--nats`, when a live process holds the swarm, the runtime relays it to that process
 *   over NATS (whatever it is: `serve`, `worker`, `run`, an application);
 * - else this process takes the swarm over, which works when no live process holds it (the
 *   `xswarm run` that started it has exited, or the process that held it died): it loads the
 *   module that defines the swarm (`--module`), adopts the swarm and its child swarms (nothing
 *   else of the database), commands it, and for `resume` drives it on like `xswarm run`. When
 *   a live process holds it (on SQLite), the command fails naming that process.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { PAUSE_TYPES, type PauseType } from '../../machines/pause.js';
import { lastStoredSeq } from '../events/cursor.js';
import { holderIsGone } from '../leases/holder.js';
import type { PauseReason } from '../../machines/events.js';
import type { SwarmClient, SwarmLimits } from '../client/client.js';
import type { Budget } from '../define/budget.js';
import { isFinal, type SwarmResult } from '../store/result.js';
import { stopThroughStore } from '../runtime/store-stop.js';
import type { SwarmStore, SwarmSummary } from '../store/types.js';
import { assertSwarmId, MAX_DERIVED_SWARM_ID_LENGTH } from '../define/swarm-id.js';
import { CliError, EXIT, loadModule, moduleRuntime, openState, readToken, type State, STATE_OPTIONS, type StateFlags } from './module.js';
import { Progress } from './progress.js';
import { drive } from './run.js';

/** The commands of this module. */
export type SwarmCommandName = 'pause' | 'resume' | 'stop' | 'extend' | 'approve' | 'reject';

/** `xswarm pause|resume|stop|extend`; resolves with the exit code. */
export async function swarmCommand(command: SwarmCommandName, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...STATE_OPTIONS,
      module: { type: 'string' },
      url: { type: 'string' },
      'token-file': { type: 'string' },
      type: { type: 'string' },
      json: { type: 'boolean' },
      'pause-id': { type: 'string' },
      answer: { type: 'string' },
      always: { type: 'boolean' },
      budget: { type: 'string' },
    },
  });
  const approval = approvalArgs(command, positionals, values.always === true);
  const [swarmId, text, ...extra] = approval ? positionals.slice(0, 2) : positionals;
  const what = command === 'resume' ? 'message' : command === 'extend' ? 'maxTurns' : 'reason';
  if (!swarmId) throw new CliError(`which swarm? xswarm ${command} <id> [${what}]`, EXIT.usage);
  if (extra.length > 0) throw new CliError(`unexpected arguments: ${extra.join(' ')} (quote the ${what})`, EXIT.usage);
  assertSwarmId(swarmId, MAX_DERIVED_SWARM_ID_LENGTH);
  const type = (values.type ?? 'HITL') as PauseType;
  if (!PAUSE_TYPES.includes(type) || (values.type !== undefined && command !== 'pause')) {
    throw new CliError(`--type is one of ${PAUSE_TYPES.join(', ')}, for pause only`, EXIT.usage);
  }
  const budget = values.budget === undefined ? undefined : budgetOption(command, values.budget);
  if (command === 'extend' && ((text === undefined && budget === undefined) || (text !== undefined && !/^\d+$/.test(text))))
    throw new CliError('xswarm extend <id> <maxTurns>: the new bound on turns, a whole number', EXIT.usage);
  const request: CommandRequest = {
    command,
    swarmId,
    text,
    type,
    json: values.json === true,
    ...resumeAnswer(command, text, values),
    ...(approval ? { approval } : {}),
    ...(budget ? { budget } : {}),
  };
  if (values.url !== undefined) {
    if (values.nats !== undefined || values.db !== undefined) throw new CliError('--url sends the command to a server: without --db or --nats', EXIT.usage);
    return sendOverRest(values.url, await readToken(undefined, values['token-file']), request);
  }
  return commandHere(request, values.module ?? (process.env.XSWARM_MODULE || undefined), values);
}

interface CommandRequest {
  command: SwarmCommandName;
  swarmId: string;
  /** The pause or stop reason, the resume message. */
  text: string | undefined;
  /** `extend --budget '<json>'`: the swarm's budget's new caps. */
  budget?: Budget;
  type: PauseReason['type'];
  json: boolean;
  /** For approve / reject: the approval's id, `always`, the reason. */
  approval?: ApprovalArgs;
  /** `resume --answer`: the typed answer (JSON), instead of the message. */
  answer?: unknown;
  /** `resume --pause-id`: the pause the answer is for. */
  pauseId?: string;
}

/**
 * `resume`'s `--pause-id P` and `--answer JSON` (a typed answer, for a pause with a response
 * schema): refused with a usage error for another command, for JSON that does not parse, and
 * for an answer given both as the message and with `--answer`.
 */
function resumeAnswer(command: SwarmCommandName, text: string | undefined, values: { 'pause-id'?: string; answer?: string }): Pick<CommandRequest, 'answer' | 'pauseId'> {
  const { 'pause-id': pauseId, answer } = values;
  if (command !== 'resume' && (pauseId !== undefined || answer !== undefined)) throw new CliError('--pause-id and --answer are for resume only', EXIT.usage);
  if (pauseId === '') throw new CliError('--pause-id needs the id of the pause (reason.pauseId of the paused swarm)', EXIT.usage);
  if (answer === undefined) return pauseId === undefined ? {} : { pauseId };
  if (text !== undefined) throw new CliError('give the answer either as the message or with --answer, not both', EXIT.usage);
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch (e) {
    throw new CliError(`--answer must be JSON, such as --answer '{"approved":true}': ${(e as Error).message}`, EXIT.usage);
  }
  return { answer: parsed, ...(pauseId === undefined ? {} : { pauseId }) };
}

/** `client.resume`'s arguments for a resume request: the typed answer or the message, and the pause id. */
function resumeArgs(request: CommandRequest): [unknown, { pauseId?: string }] {
  return [request.answer !== undefined ? request.answer : request.text, request.pauseId === undefined ? {} : { pauseId: request.pauseId }];
}

/**
 * Commands the swarm from this process: relayed over NATS to the live process holding it, else
 * taken over here (see the module comment).
 */
async function commandHere(request: CommandRequest, modulePath: string | undefined, flags: StateFlags): Promise<number> {
  const { command, swarmId } = request;
  const state = await openState(flags, command);
  const { store } = state;
  try {
    const record = await store.load(swarmId);
    if (!record) throw new CliError(`unknown swarm "${swarmId}" in ${state.where}`, EXIT.notFound);
    if (record.result.status !== 'running' && record.result.status !== 'paused') {
      throw new CliError(`cannot ${command} swarm "${swarmId}": it has ended (${record.result.status})`, EXIT.conflict);
    }
    // A child swarm is driven with its parent, by the runtime that holds the parent.
    const root = await familyRoot(store, swarmId);
    const holder = (await liveHolder(store, swarmId)) ?? (await liveHolder(store, root));
    if (holder && state.distribution.transport) return await relay(request, state, record.definitionId);
    // One SQLite file, no NATS: a stop is left in the file for the holder, which applies it at once.
    if (holder && command === 'stop' && store.notices) return await stopHeld(request, store);
    if (holder) {
      throw new CliError(
        `cannot ${command} swarm "${swarmId}" here: a live process drives it (pid ${holder.pid ?? '?'} on ${(holder.host ?? '?').split('#')[0]}, owner ${holder.owner}). ` +
          'Send the command to that process: for `xswarm serve`, add --url http://127.0.0.1:<port> (with --token-file or XSWARM_TOKEN); ' +
          'an `xswarm run` asks its human in its own terminal and pauses on Ctrl-C.',
        EXIT.conflict,
      );
    }
    if (modulePath === undefined) {
      throw new CliError(
        `swarm "${swarmId}" has no live owner, so this process drives it: name the module that defines "${record.definitionId}" with --module PATH (or XSWARM_MODULE)`,
        EXIT.usage,
      );
    }
    const mod = await loadModule(modulePath);
    const runtime = await moduleRuntime(state, mod, familyStore(store, root), { serve: false });
    try {
      await runtime.start();
      const client = runtime.forSwarm(record.definitionId, swarmId);
      // An answered approval may let the swarm go on: it is driven on, as after a resume.
      if (command !== 'resume' && !request.approval) return report(request, await apply(request, client));
      const rootRecord = root === swarmId ? record : await store.load(root);
      const rootClient = runtime.forSwarm(rootRecord!.definitionId, root);
      const since = await lastStoredSeq(store, rootRecord!);
      if (request.approval) await answer(request.approval, client);
      else await client.resume(...resumeArgs(request));
      return await drive(runtime, rootClient, since, Progress.for(process.stdout, { json: request.json }), { module: modulePath, state: state.args });
    } finally {
      await runtime.close();
    }
  } finally {
    await state.close();
  }
}

/**
 * Sends the command to the live process holding the swarm, over NATS: a runtime of this process
 * that drives nothing relays it to the holder, which applies it and answers once it is recorded.
 */
async function relay(request: CommandRequest, state: State, definitionId: string): Promise<number> {
  const runtime = await moduleRuntime(state, undefined);
  try {
    return report(request, await apply(request, runtime.forSwarm(definitionId, request.swarmId)));
  } finally {
    await runtime.close();
  }
}

/** `--budget '<json>'` of `xswarm extend`: a budget object (the runtime checks its caps). */
function budgetOption(command: SwarmCommandName, text: string): Budget {
  if (command !== 'extend') throw new CliError('--budget is for extend only', EXIT.usage);
  try {
    return JSON.parse(text) as Budget;
  } catch {
    throw new CliError(`--budget takes JSON, e.g. --budget '{"usd":5}': ${text} is not JSON`, EXIT.usage);
  }
}

/** What `xswarm extend` raises: maxTurns, when given, and the budget, when given. */
function limitsOf(request: CommandRequest): SwarmLimits {
  return { ...(request.text !== undefined ? { maxTurns: Number(request.text) } : {}), ...(request.budget ? { budget: request.budget } : {}) };
}

/** Applies the command through a client; resolves with the swarm's state after it. */
async function apply(request: CommandRequest, client: SwarmClient): Promise<SwarmResult> {
  if (request.command === 'pause') await client.pause({ type: request.type, message: request.text ?? 'Paused from the command line' });
  else if (request.command === 'stop') await client.stop(request.text ?? 'Stopped from the command line');
  else if (request.command === 'extend') await client.extend(limitsOf(request));
  else if (request.approval) await answer(request.approval, client);
  else await client.resume(...resumeArgs(request));
  return client.getResult();
}

/**
 * `xswarm stop` of a swarm another process holds on the same SQLite file: the stop request is
 * left in the file (the holder polls it and aborts the call in flight), then the outcome is
 * read back; a holder that has not applied it in time leaves it for whoever holds the swarm next.
 */
async function stopHeld(request: CommandRequest, store: SwarmStore): Promise<number> {
  await stopThroughStore(store, request.swarmId, request.text ?? 'Stopped from the command line');
  const result = (await store.load(request.swarmId))?.result;
  if (!result || !isFinal(result.status)) {
    throw new CliError(
      `stop of swarm "${request.swarmId}" requested: the process that drives it has not applied it yet; it stops at its next poll, or when another process adopts it`,
      EXIT.conflict,
    );
  }
  return report(request, result);
}

/** The command's outcome: the swarm's state on one line (its result as JSON with `--json`). */
function report(request: CommandRequest, result: SwarmResult): number {
  if (request.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    const reason = result.status === 'paused' ? result.reason.message : result.status === 'failed' || result.status === 'stopped' ? result.reason : undefined;
    process.stdout.write(`swarm ${request.swarmId} ${result.status}${reason ? `: ${reason}` : ''}\n`);
  }
  return EXIT.ok;
}

/**
 * The top-most swarm of the family `swarmId` belongs to: a child swarm's id is its parent's id
 * plus `:t<turn>:<index>`, and the parent is stored.
 */
async function familyRoot(store: SwarmStore, swarmId: string): Promise<string> {
  let root = swarmId;
  for (;;) {
    const parent = /^(.+):t\d+:\d+$/.exec(root)?.[1];
    if (parent === undefined || !(await store.load(parent))) return root;
    root = parent;
  }
}

/** The lease on a swarm when a live process holds it (unexpired, and not a dead process of this host). */
async function liveHolder(store: SwarmStore, swarmId: string): Promise<SwarmSummary['lease']> {
  const record = await store.load(swarmId);
  if (!record) return undefined;
  const lease = (await store.list({ definitionId: record.definitionId })).find((s) => s.swarmId === swarmId)?.lease;
  return lease && lease.until > Date.now() && !holderIsGone(lease) ? lease : undefined;
}

/**
 * The store as a runtime that commands one swarm family sees it: its listings hold only that
 * family, so `start()` adopts those swarms and leaves every other swarm of the file alone.
 */
function familyStore(store: SwarmStore, root: string): SwarmStore {
  const inFamily = (id: string) => id === root || id.startsWith(`${root}:`);
  return {
    ...(store.volatile ? { volatile: true } : {}),
    ...(store.refusesExisting ? { refusesExisting: true } : {}),
    load: (id) => store.load(id),
    commit: (c) => store.commit(c),
    readEvents: (id, since, limit) => store.readEvents(id, since, limit),
    list: async (filter) => (await store.list(filter)).filter((s) => inFamily(s.swarmId)),
    // Readers are woken by the store's own notifications (JetStream: another process committed).
    ...(store.watch ? { watch: (id: string, onChange: () => void) => store.watch!(id, onChange) } : {}),
    ...(store.stats ? { stats: () => store.stats!() } : {}),
    claim: (id, lease, now, takeover) => store.claim(id, lease, now, takeover),
    renew: (owner, ids, until) => store.renew(owner, ids, until),
    release: (owner, ids) => store.release(owner, ids),
    prune: (olderThan) => store.prune(olderThan),
    // The command closes the store itself.
    close: async () => undefined,
  };
}

/**
 * Sends the command to an `xswarm serve` process over REST. The REST paths name the swarm's
 * definition, which the server's listings tell: each definition is asked for the swarm in turn.
 */
async function sendOverRest(base: string, token: string | undefined, request: CommandRequest): Promise<number> {
  const { command, swarmId, text } = request;
  const url = base.replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const call = async (method: string, path: string, body?: unknown) => {
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    } catch (e) {
      throw new CliError(`cannot reach ${url}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`);
    }
    const data = (await res.json().catch(() => undefined)) as { error?: string } | undefined;
    return { status: res.status, data };
  };
  const definitions = await call('GET', '/swarms');
  if (definitions.status !== 200) throw restError(url, definitions);
  let definitionId: string | undefined;
  for (const card of definitions.data as unknown as { id: string }[]) {
    const found = await call('GET', `/swarms/${encodeURIComponent(card.id)}/${encodeURIComponent(swarmId)}`);
    if (found.status === 200) {
      definitionId = card.id;
      break;
    }
    if (found.status !== 404) throw restError(url, found);
  }
  if (definitionId === undefined) throw new CliError(`unknown swarm "${swarmId}" at ${url}`, EXIT.notFound);
  const body = request.approval
    ? approvalBody(request.approval)
    : command === 'extend'
      ? limitsOf(request)
      : command === 'resume'
        ? {
            ...(request.answer !== undefined ? { answer: request.answer } : text === undefined ? {} : { message: text }),
            ...(request.pauseId === undefined ? {} : { pauseId: request.pauseId }),
          }
        : { ...(text === undefined ? {} : { reason: text }), ...(command === 'pause' ? { type: request.type } : {}) };
  const done = await call('POST', `/swarms/${encodeURIComponent(definitionId)}/${encodeURIComponent(swarmId)}/${command}`, body);
  if (done.status !== 200) throw restError(url, done);
  return report(request, (done.data as unknown as { result: SwarmResult }).result);
}

/** A refused REST request as a CLI error: the server's message, the exit code of its status. */
function restError(url: string, response: { status: number; data: { error?: string } | undefined }): CliError {
  const { status, data } = response;
  const code = status === 400 ? EXIT.usage : status === 404 ? EXIT.notFound : status === 409 ? EXIT.conflict : EXIT.failed;
  const hint = status === 401 ? ' (give the token with --token-file or XSWARM_TOKEN)' : '';
  return new CliError(`${url} answered ${status}: ${data?.error ?? 'no error message'}${hint}`, code);
}

/** What `xswarm approve|reject` says: the approval's id, `--always`, the rejection's reason. */
interface ApprovalArgs {
  approvalId: string;
  always?: boolean;
  reason?: string;
}

/** The approval arguments of `approve` / `reject` (undefined for the other commands), or a usage error. */
function approvalArgs(command: SwarmCommandName, positionals: string[], always: boolean): ApprovalArgs | undefined {
  if (command !== 'approve' && command !== 'reject') {
    if (always) throw new CliError('--always is for approve only', EXIT.usage);
    return undefined;
  }
  const [swarmId, approvalId, ...rest] = positionals;
  const usage = command === 'approve' ? 'xswarm approve <id> <approvalId> [--always]' : 'xswarm reject <id> <approvalId> <reason>';
  if (!swarmId || !approvalId) throw new CliError(`${usage}: the swarm and the approval id (its paused result lists pendingApprovals)`, EXIT.usage);
  if (command === 'approve') {
    if (rest.length > 0) throw new CliError(`unexpected arguments: ${rest.join(' ')} (${usage})`, EXIT.usage);
    return { approvalId, ...(always ? { always: true } : {}) };
  }
  if (always) throw new CliError('--always is for approve only', EXIT.usage);
  const reason = rest.join(' ').trim();
  if (!reason) throw new CliError(`${usage}: the model reads the reason as the call's result`, EXIT.usage);
  return { approvalId, reason };
}

/** Answers an approval through a client. */
async function answer(approval: ApprovalArgs, client: SwarmClient): Promise<void> {
  if (approval.reason !== undefined) await client.reject(approval.approvalId, approval.reason);
  else await client.approve(approval.approvalId, approval.always ? { always: true } : {});
}

/** The REST body of an approval command. */
function approvalBody(approval: ApprovalArgs): Record<string, unknown> {
  return approval.reason !== undefined
    ? { approvalId: approval.approvalId, reason: approval.reason }
    : { approvalId: approval.approvalId, ...(approval.always ? { always: true } : {}) };
}
