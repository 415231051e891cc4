/**
 * The commands a client sends a live swarm (pause, resume, stop): each is acknowledged only
 * once recorded, and passed on to whatever waits on the swarm (its child swarms, the remote
 * agents that asked its human a question). A passivated swarm is restored first, and stays in
 * memory while a command is applied to it; a swarm not live here is refused with the precise
 * reason.
 *
 * @module
 */
import type { PauseReason } from '../../machines/events.js';
import type { ResumeOptions, SwarmLimits } from '../client/client.js';
import type { ApprovalCommand } from '../../machines/approvals.js';
import type { ApproveOptions } from '../client/client.js';
import { approvalCommand, checkApprovalId, checkRejectReason, isNotPending, isPendingOn } from './approvals.js';
import type { SwarmCommand } from '../../machines/swarm.js';
import type { OtherRuntimes } from '../distribution/calls.js';
import type { OwnerCommand } from '../distribution/protocol.js';
import { SwarmError } from '../errors.js';
import { checkAnswer, responseSchemaProblem } from '../define/response-schema.js';
import { runningChildSwarms } from '../runners/child-swarm.js';
import type { HumanQuestions } from '../runners/questions.js';
import { isFinal, type SwarmResult } from '../store/result.js';
import { summaryOf } from '../store/summary.js';
import { ownerLost, type SwarmHost } from './host.js';
import type { LiveSwarms } from './live.js';
import type { Rehydration } from './passivation.js';
import type { Reading } from './reading.js';
import { stopThroughStore } from './store-stop.js';
import { type BudgetCaps, swarmAccount } from '../../machines/budget.js';
import { budgetProblem } from '../define/budget.js';
import type { BudgetLedger } from '../store/budgets.js';

/** What the commands need. */
export interface CommandsDeps {
  live: LiveSwarms;
  rehydration: Rehydration;
  /** The questions remote agents wait on a swarm's human for: a resume answers them. */
  questions: Pick<HumanQuestions, 'answer' | 'forget'>;
  /** The result of a child swarm held by another runtime. */
  reading: Pick<Reading, 'result'>;
  /**
   * The other runtimes, when a transport is configured: a command for a swarm held by one of them
   * goes there (a stop reaches it even when its holder is gone, see `OtherRuntimes.stopHeld`).
   */
  others?: Pick<OtherRuntimes, 'send' | 'stopHeld' | 'assertAvailable'> | undefined;
  /** The budget ledger a budget extension raises (absent: budgets cannot be extended). */
  budgets?: Pick<BudgetLedger, 'raise'> | undefined;
}

/** The commands of one runtime. */
export class Commands {
  private readonly live: LiveSwarms;
  private readonly relay: CommandsDeps['others'];

  constructor(private readonly deps: CommandsDeps) {
    this.live = deps.live;
    this.relay = deps.others;
  }

  /** Applies a command another runtime sent for a swarm held here. */
  apply(command: OwnerCommand): Promise<void> {
    if (command.op === 'pause') return this.pause(command.swarmId, command.reason);
    if (command.op === 'resume') {
      const answer = command.answer !== undefined ? command.answer : command.message;
      return this.resume(command.swarmId, answer, command.pauseId === undefined ? {} : { pauseId: command.pauseId });
    }
    if (command.op === 'extend') {
      return this.extend(command.swarmId, {
        ...(command.maxTurns !== undefined ? { maxTurns: command.maxTurns } : {}),
        ...('budget' in command && command.budget ? { budget: command.budget } : {}),
      });
    }
    if (command.op === 'approve') return this.approve(command.swarmId, command.approvalId, command.always ? { always: true } : {});
    if (command.op === 'reject') return this.reject(command.swarmId, command.approvalId, command.reason);
    return this.stop(command.swarmId, command.reason);
  }

  /** Pauses a live swarm, and the child swarms it waits on. */
  async pause(swarmId: string, reason: PauseReason): Promise<void> {
    const problem = reason.responseSchema === undefined ? undefined : responseSchemaProblem(reason.responseSchema);
    if (problem) throw new SwarmError(`Cannot pause swarm "${swarmId}": ${problem}`, 'invalid-input');
    const release = this.deps.rehydration.hold(swarmId);
    try {
      const host = await this.liveHost(swarmId, 'pause', { op: 'pause', swarmId, reason });
      if (!host) return;
      if (host.status() === 'paused') throw new SwarmError(`Swarm "${swarmId}" is already paused`, 'wrong-state');
      await this.command(host, { type: 'PAUSE', reason });
      await this.pauseChildren(swarmId, host, reason);
    } finally {
      release();
    }
  }

  /**
   * Resumes a paused swarm: the answer reaches its model and the remote agents that asked. Strict:
   * refused with nothing recorded when the swarm is not paused, when `pauseId` names another
   * pause than the current one, or when the answer does not match the pause's response schema
   * (see {@link resumeCommand}).
   */
  async resume(swarmId: string, answer: unknown, options: ResumeOptions = {}): Promise<void> {
    const { pauseId } = options;
    const release = this.deps.rehydration.hold(swarmId);
    try {
      // A string travels as `message`, as before typed answers (a runtime of an older version reads it).
      const relayed: OwnerCommand = {
        op: 'resume',
        swarmId,
        ...(answer === undefined ? {} : typeof answer === 'string' ? { message: answer } : { answer }),
        ...(pauseId === undefined ? {} : { pauseId }),
      };
      const host = await this.liveHost(swarmId, 'resume', relayed);
      if (!host) return;
      // Checked now for a clear error, and again right before the command is sent (the state may move meanwhile).
      resumeCommand(host, answer, pauseId);
      const sent = await this.command(host, () => resumeCommand(host, answer, pauseId));
      this.deps.questions.answer(swarmId, sent.type === 'RESUME' ? sent.message : undefined);
      await this.resumeChildren(swarmId, host);
    } finally {
      release();
    }
  }

  /**
   * Stops a live swarm (its running children stop with it). With a transport, a swarm held by
   * a runtime that does not answer (or by nobody) is stopped all the same: the stop is accepted
   * and applied by the runtime hosting its definition that takes it over.
   */
  async stop(swarmId: string, reason: string): Promise<void> {
    const release = this.deps.rehydration.hold(swarmId);
    try {
      const host = await this.liveHost(swarmId, 'stop', { op: 'stop', swarmId, reason });
      if (!host) return;
      await this.command(host, { type: 'STOP', reason });
      this.deps.questions.forget(swarmId);
    } finally {
      release();
    }
  }

  /**
   * Raises a live swarm's limits (`client.extend`): recorded durably as an `extended` fact, so a
   * restart keeps them; a swarm held by another runtime gets the command there.
   */
  async extend(swarmId: string, limits: SwarmLimits): Promise<void> {
    const { maxTurns, budget } = limits ?? {};
    if (maxTurns === undefined && budget === undefined) throw new SwarmError('extend needs a limit to raise: { maxTurns?, budget? }', 'invalid-input');
    if (maxTurns !== undefined && (!Number.isInteger(maxTurns) || maxTurns < 1)) {
      throw new SwarmError(`maxTurns must be a positive whole number, got ${JSON.stringify(maxTurns) ?? String(maxTurns)}`, 'invalid-input');
    }
    const problem = budget === undefined ? undefined : budgetProblem(budget);
    if (problem) throw new SwarmError(problem, 'invalid-input');
    const release = this.deps.rehydration.hold(swarmId);
    try {
      const relayed: OwnerCommand = budget
        ? { op: 'extend', swarmId, ...(maxTurns !== undefined ? { maxTurns } : {}), budget }
        : { op: 'extend', swarmId, maxTurns: maxTurns! };
      const host = await this.liveHost(swarmId, 'extend', relayed);
      if (!host) return;
      const { turn } = host.context();
      if (maxTurns !== undefined && maxTurns <= turn) {
        throw new SwarmError(`maxTurns ${maxTurns} leaves swarm "${swarmId}" no room: it has made ${turn} turns already`, 'invalid-input');
      }
      if (budget) await this.raiseBudget(swarmId, host, budget);
      await this.command(host, { type: 'EXTEND', maxTurns: maxTurns ?? host.config().maxTurns, ...(budget ? { budget } : {}) });
    } finally {
      release();
    }
  }

  /**
   * Approves a gated tool call (`client.approve`): it runs, and with `always` its tool needs no
   * approval for the rest of the run. An approval of a child swarm (at any depth, on any runtime)
   * is answered through its root too. Refused, nothing changed, for an id the swarm (and its
   * children) do not list as pending now.
   */
  async approve(swarmId: string, approvalId: string, options: ApproveOptions = {}): Promise<void> {
    const id = checkApprovalId(approvalId);
    return this.answerApproval(swarmId, { type: 'APPROVE', approvalId: id, ...(options?.always ? { always: true } : {}), at: Date.now() });
  }

  /** Rejects a gated tool call (`client.reject`): the model reads `reason` as its (error) result. See {@link approve}. */
  async reject(swarmId: string, approvalId: string, reason: string): Promise<void> {
    const id = checkApprovalId(approvalId);
    return this.answerApproval(swarmId, { type: 'REJECT', approvalId: id, reason: checkRejectReason(reason) });
  }

  private async answerApproval(swarmId: string, command: ApprovalCommand): Promise<void> {
    const relayed: OwnerCommand =
      command.type === 'APPROVE'
        ? { op: 'approve', swarmId, approvalId: command.approvalId, ...(command.always ? { always: true } : {}) }
        : { op: 'reject', swarmId, approvalId: command.approvalId, reason: command.reason };
    const release = this.deps.rehydration.hold(swarmId);
    try {
      const host = await this.liveHost(swarmId, command.type === 'APPROVE' ? 'approve a call of' : 'reject a call of', relayed);
      if (!host) return;
      if (!isPendingOn(host, command.approvalId)) {
        // Not this swarm's: maybe one of the child swarms it waits on asks (it surfaces here).
        for (const childId of runningChildSwarms(host)) {
          try {
            return await this.answerApproval(childId, command);
          } catch (e) {
            // Not that child's either (or it has just ended): the next one, else this swarm's own refusal.
            if (!isNotPending(e) && !(e instanceof SwarmError && (e.code === 'wrong-state' || e.code === 'unknown-swarm'))) throw e;
          }
        }
      }
      await this.command(host, () => approvalCommand(host, command));
    } finally {
      release();
    }
  }

  /**
   * Raises the swarm's own budget account in the ledger (before the `extended` fact is recorded:
   * a crash in between leaves the caps raised, and extending again is harmless).
   */
  private async raiseBudget(swarmId: string, host: SwarmHost, caps: BudgetCaps): Promise<void> {
    const own = host.config().budget?.own;
    if (!own || !this.deps.budgets) {
      throw new SwarmError(`Swarm "${swarmId}" has no budget of its own to extend: extend the swarm whose budget it draws from (its parent)`, 'invalid-input');
    }
    try {
      await this.deps.budgets.raise(swarmAccount(swarmId), caps, Date.now(), own);
    } catch (e) {
      if (e instanceof RangeError) throw new SwarmError(e.message, 'invalid-input');
      throw e;
    }
  }

  /** Pausing a parent pauses the child swarms it is waiting on (and theirs, recursively). */
  private async pauseChildren(parentId: string, parent: SwarmHost, reason: PauseReason): Promise<void> {
    for (const childId of runningChildSwarms(parent)) {
      const child = this.live.hosts.get(childId) ?? (await this.deps.rehydration.rehydrate(childId));
      const status = child ? child.status() : (await this.heldElsewhere(childId))?.status;
      if (status && status !== 'paused' && !isFinal(status)) {
        await this.pause(childId, { type: reason.type, message: `${pausedWith(parentId)}${reason.message}` });
      }
    }
  }

  /**
   * Children paused from outside resume with their parent; a child waiting for its own human
   * (it called `pause`) keeps waiting for that human.
   */
  private async resumeChildren(parentId: string, parent: SwarmHost): Promise<void> {
    for (const childId of runningChildSwarms(parent)) {
      const child = this.live.hosts.get(childId) ?? (await this.deps.rehydration.rehydrate(childId));
      if (child) {
        // A typed pause waits for its own answer too.
        const pause = child.context().pause;
        if (child.status() === 'paused' && pause?.from !== 'model' && pause?.from !== 'approval' && !pause?.reason.responseSchema) await this.resume(childId, undefined);
        continue;
      }
      // Held by another runtime: only its result is known here, and it says why it paused.
      const result = await this.heldElsewhere(childId);
      if (result?.status === 'paused' && result.reason.message.startsWith(pausedWith(parentId))) await this.resume(childId, undefined);
    }
  }

  /** The result of a child that is not live here but held by another runtime, or undefined. */
  private async heldElsewhere(childId: string): Promise<SwarmResult | undefined> {
    if (!this.relay) return undefined;
    return this.deps.reading.result(childId).catch(() => undefined);
  }

  /**
   * Sends a command and waits until it is recorded (nothing is acknowledged that was not), and
   * returns it. A
   * command given as a function is built (and may be refused) right before it is sent, after
   * the last wait, so what it checked still holds when the swarm takes it.
   */
  private async command(host: SwarmHost, build: SwarmCommand | (() => SwarmCommand)): Promise<SwarmCommand> {
    // With the store's connection down the command could not be recorded: say so now rather
    // than hold the caller until it is back.
    await this.relay?.assertAvailable();
    const command = typeof build === 'function' ? build() : build;
    host.send(command);
    await host.durable().catch(() => undefined);
    const error = host.error;
    if (ownerLost(error)) {
      throw new SwarmError(`Swarm "${host.swarmId}" is now driven by another runtime: ${error.message}`, 'not-live');
    }
    if (error) throw new SwarmError(`Swarm "${host.swarmId}" could not record the ${command.type} command: ${error.message}`, 'store');
    return command;
  }

  /**
   * The host driving a swarm here (a passivated one restored); undefined when the command went
   * to the runtime holding it elsewhere (`relayed`, with a relay); else a SwarmError saying
   * precisely why there is none.
   */
  private async liveHost(swarmId: string, verb: string, relayed: OwnerCommand): Promise<SwarmHost | undefined> {
    const host = this.live.hosts.get(swarmId) ?? (await this.deps.rehydration.rehydrate(swarmId));
    // A host that failed stays here only while its failure is being recorded.
    if (host?.error) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it has ended (failed)`, 'wrong-state');
    if (host) return host;
    const problem = this.live.unrestorable.get(swarmId);
    if (problem) throw new SwarmError(`Cannot ${verb}: ${problem}`, 'wrong-state');
    // Refused at once while the store cannot be read (NATS down), not after a read's timeout.
    await this.relay?.assertAvailable();
    const record = await summaryOf(this.live.store, swarmId);
    if (!record) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": unknown swarm`, 'unknown-swarm');
    if (record.problem && record.result.status === 'failed') throw new SwarmError(`Cannot ${verb}: ${record.result.reason}`, 'wrong-state');
    if (isFinal(record.status)) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it has ended (${record.status})`, 'wrong-state');
    const owner = record.lease && record.lease.until > Date.now() ? record.lease.owner : undefined;
    if (this.relay && relayed.op === 'stop') {
      await this.relay.stopHeld(owner, record.definitionId, relayed);
      return undefined;
    }
    if (this.relay && owner !== undefined) {
      await this.relay.send(owner, relayed);
      return undefined;
    }
    // A store shared without a transport (one SQLite file): the stop is left there for its holder.
    if (relayed.op === 'stop' && this.live.store.notices) {
      await stopThroughStore(this.live.store, swarmId, relayed.reason);
      return undefined;
    }
    // Waiting for a definition version this runtime lacks: say which, not that someone else owns it.
    const waiting = owner === undefined ? this.live.waiting.get(swarmId) : undefined;
    if (waiting) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": ${waiting.reason}`, 'not-live');
    throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it is not running in this runtime (another runtime owns it)`, 'not-live');
  }
}

/**
 * The RESUME command for `answer` to the swarm's current pause, or a SwarmError saying why it
 * is refused: the swarm is not paused (`wrong-state`); `pauseId` is not its pause's
 * (`wrong-state`, stale); it is paused at its limit, so resuming would only pause it again
 * (`wrong-state`); the answer does not match the pause's response schema, or is not text for a
 * pause without one (`invalid-input`). With a schema, the model reads the answer as JSON.
 */
function resumeCommand(host: SwarmHost, answer: unknown, pauseId: string | undefined): SwarmCommand {
  const swarmId = host.swarmId;
  if (host.status() !== 'paused') throw new SwarmError(`Swarm "${swarmId}" is ${host.status()}, not paused`, 'wrong-state');
  const { pause, turn, config } = host.context();
  const reason = pause?.reason;
  // A pause stored before pauses had ids has none to check against.
  if (pauseId !== undefined && reason?.pauseId !== undefined && pauseId !== reason.pauseId) {
    throw new SwarmError(`Swarm "${swarmId}" is not paused at "${pauseId}" (a stale pause id): its current pause is "${reason.pauseId}"`, 'wrong-state');
  }
  if (pause?.from === 'approval') {
    throw new SwarmError(`Swarm "${swarmId}" waits for approvals, not for a resume: approve or reject each (client.approve / client.reject)`, 'wrong-state');
  }
  // Resumed at its limit it would only pause again: say what to do instead.
  if (pause?.from === 'limit' && turn >= config.maxTurns) {
    throw new SwarmError(
      `Swarm "${swarmId}" is paused at its limit of ${config.maxTurns} turns: extend it (client.extend({ maxTurns })) before resuming, or stop it`,
      'wrong-state',
    );
  }
  const schema = reason?.responseSchema;
  if (schema) {
    if (answer === undefined) throw new SwarmError(`Swarm "${swarmId}" waits for an answer matching its response schema: resume(answer) with one`, 'invalid-input');
    const checked = checkAnswer(schema, answer);
    if (!checked.ok) throw new SwarmError(`The answer does not match the response schema of swarm "${swarmId}"'s pause: ${checked.error}`, 'invalid-input');
    return { type: 'RESUME', message: checked.text };
  }
  if (answer === undefined) return { type: 'RESUME' };
  if (typeof answer !== 'string') {
    throw new SwarmError(
      `Swarm "${swarmId}"'s pause has no response schema: answer with text, not ${Array.isArray(answer) ? 'an array' : typeof answer}`,
      'invalid-input',
    );
  }
  return { type: 'RESUME', message: answer };
}

/** How the pause of a child paused with its parent begins. */
function pausedWith(parentId: string): string {
  return `Parent swarm "${parentId}" paused: `;
}
