/**
 * Deterministic replay: re-runs a finished swarm's machine from its journal (the recorded
 * `internal:llm-call` and `internal:tool-complete` events) with zero model and tool calls, and
 * checks that it produces exactly the recorded events. The machine is wired as the live one
 * (`wireSwarm`), with actors that answer from the journal; responses are judged again through
 * ports built by the live runtime's wiring (`wiring.ts`).
 *
 * @module
 */
import { createActor, fromPromise } from 'xstate';
import type { SwarmEvent, SwarmEventBody, SwarmFact } from '../../machines/events.js';
import type { PlannedCall } from '../../machines/calls/index.js';
import type { ModelStepInput, ModelStepOutput } from '../../machines/contracts.js';
import type { MadeSummary } from '../../machines/history.js';
import type { AgentDeadlineInput } from '../../machines/agent-deadline.js';
import type { ToolRunInput } from '../../machines/calls/tool.js';
import type { RemoteAgentInput } from '../../machines/calls/remote.js';
import type { ChildSwarmInput } from '../../machines/calls/swarm.js';
import type { CallResult } from '../../machines/calls/kind.js';
import type { SwarmCommand, SwarmContext, SwarmInput } from '../../machines/swarm.js';
import { type SwarmPorts, wireSwarm } from '../../actors/index.js';
import { guardInput } from '../../actors/guardrails.js';
import { judgeStep } from '../../actors/judge-step.js';
import { SwarmError } from '../errors.js';
import { isChunk } from '../events/chunks.js';
import { stampEvent } from '../events/stamp.js';
import { isFinal } from '../store/result.js';
import type { SwarmStore } from '../store/types.js';
import { type PersistedMachineSnapshot, persistedSnapshot } from './persisted.js';
import { createPorts, type PortsDeps, type PortsHost } from './ports.js';

/**
 * The replay produced something other than what was recorded: the code or the definitions
 * changed in a way that changes behaviour.
 */
export class ReplayDivergenceError extends Error {
  override readonly name = 'ReplayDivergenceError';
  constructor(
    readonly swarmId: string,
    readonly seq: number,
    detail: string,
  ) {
    super(`Replay of swarm "${swarmId}" diverged at event ${seq}: ${detail}`);
  }
}

type Deferred<T> = { resolve: (v: T) => void; reject: (e: unknown) => void };

const stepKey = (speaker: string, scope: string, turn: number) => `${speaker}|${scope}|${turn}`;

/** The prefixes the machines give a model call's error (`machines/swarm.ts`, `machines/agent.ts`). */
const MODEL_CALL_FAILED = 'Model call failed: ';
const AGENT_FAILED = 'Agent failed: ';

/**
 * The model call's error a recorded failure repeats: the swarm's `failed` fact of kind
 * `model-call` (recorded with its kind, or, in older recordings, by its reason), or an agent's
 * handoff result failed by its model call (`speaker`: the agent whose step threw).
 */
function failedCall(event: SwarmEvent): { message: string; speaker?: string } | undefined {
  if (event.kind !== 'status-update') return undefined;
  const fact = event.metadata;
  if (fact.type === 'failed' && fact.reason.startsWith(MODEL_CALL_FAILED) && (fact.error === undefined || fact.error.kind === 'model-call')) {
    return { message: fact.reason.slice(MODEL_CALL_FAILED.length) };
  }
  if (fact.type === 'handoff-result' && !fact.ok && fact.content.startsWith(AGENT_FAILED)) {
    return { message: fact.content.slice(AGENT_FAILED.length), ...(fact.from !== undefined ? { speaker: fact.from } : {}) };
  }
  return undefined;
}

/**
 * Whether a swarm was recorded before a turn limit could pause it: its configuration says
 * nothing of `onLimit` and it failed at its limit. Its replay then fails there too, as it did.
 */
function recordedBeforeLimitsPaused(recorded: readonly SwarmEvent[], input: SwarmInput): boolean {
  if (input.config.onLimit !== undefined) return false;
  const last = recorded.at(-1);
  return last?.kind === 'status-update' && last.metadata.type === 'failed' && last.metadata.reason === `maxTurns (${input.config.maxTurns}) reached without a result`;
}

/**
 * `body` as an older recording has it: a pause recorded before pauses had ids carries none, so
 * the id the machine makes today is left out of the comparison (nothing else differs); a named
 * run's task event recorded before it carried the label, likewise.
 */
function asRecordedThen(body: SwarmEventBody, recorded: SwarmEvent): SwarmEventBody {
  // A named run recorded before task events carried the run's label.
  if (body.kind === 'task' && body.metadata.label && recorded.kind === 'task' && !recorded.metadata.label)
    return { ...body, metadata: { definitionId: body.metadata.definitionId } };
  // A failure recorded before failures carried their error's kind.
  if (body.kind === 'status-update' && body.metadata.type === 'failed' && body.metadata.error && recorded.kind === 'status-update') {
    if (recorded.metadata.type === 'failed' && !recorded.metadata.error) {
      const { error: _new, ...fact } = body.metadata;
      return { ...body, metadata: fact };
    }
  }
  if (body.kind !== 'status-update' || body.metadata.type !== 'paused' || recorded.kind !== 'status-update' || recorded.metadata.type !== 'paused') return body;
  if (recorded.metadata.reason.pauseId !== undefined || body.metadata.reason.pauseId === undefined) return body;
  const { pauseId: _new, ...reason } = body.metadata.reason;
  return { ...body, metadata: { ...body.metadata, reason } };
}

/**
 * A journal's judged calls with the recorded approval gates: a call gated when it ran was gated
 * by its tool's `needsApproval` (evaluated once, live) under an id made with a random nonce; the
 * replay keeps that call and its id (a call gated today but not then stays as judged, and the
 * replay diverges, as for any change of behaviour).
 */
function asGatedThen(judged: PlannedCall[], recorded: readonly PlannedCall[]): PlannedCall[] {
  if (!recorded.some((c) => c.kind === 'gated')) return judged;
  return judged.map((c) => {
    const then = recorded.find((r) => r.id === c.id);
    return then?.kind === 'gated' && c.kind === 'tool' ? then : c;
  });
}

/** The command a recorded `approval` fact answered with. */
function approvalOf(fact: Extract<SwarmFact, { type: 'approval' }>): SwarmCommand {
  if (fact.decision === 'rejected') return { type: 'REJECT', approvalId: fact.approvalId, reason: fact.reason ?? '' };
  return { type: 'APPROVE', approvalId: fact.approvalId, ...(fact.always ? { always: true } : {}), ...(fact.at !== undefined ? { at: fact.at } : {}) };
}

/**
 * `body` stamped as the recorded event `like` was (its seq, context and time): a replayed
 * event compares equal to the recorded one, timestamps included, only when the bodies agree.
 */
function stampedLike(body: SwarmEventBody, like: SwarmEvent): SwarmEvent {
  return stampEvent(body, like.seq, { swarmId: like.swarmId, contextId: contextOf(like) }, timeOf(like));
}

function contextOf(event: SwarmEvent): string {
  return 'contextId' in event ? event.contextId : event.swarmId;
}

/** When the runtime recorded an event, in ms (artifact updates carry no time: 0). */
function timeOf(event: SwarmEvent): number {
  if (event.kind === 'task' || event.kind === 'status-update') return Date.parse(event.status.timestamp);
  return event.kind === 'artifact-update' ? 0 : event.timestamp;
}

// Key order differs between a live object and one parsed back from JSON: compare canonically.
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .filter(([, x]) => x !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}

/** The input a swarm was started with, rebuilt from the context of its stored snapshot. */
function inputFromSnapshot(swarmId: string, snapshot: unknown): SwarmInput {
  const context = (snapshot as { context?: SwarmContext } | undefined)?.context;
  if (!context?.config || !Array.isArray(context.messages)) {
    throw new SwarmError(`Cannot replay swarm "${swarmId}": its stored snapshot has no context to start from`);
  }
  return {
    swarmId,
    definitionId: context.definitionId,
    input: context.input,
    ...(context.inputParts ? { inputParts: context.inputParts } : {}),
    contextId: context.contextId,
    userMessage: context.messages[1]?.content ?? '',
    config: context.config,
  };
}

/**
 * A judgement as a run recorded before guardrails rejected (rather than failed) swarms: a
 * guardrail's rejection with the reason the recorded failure gave is that failure.
 */
function asRecordedBefore(judged: Pick<ModelStepOutput, 'calls' | 'verdict'>, recorded: ModelStepOutput['verdict']): Pick<ModelStepOutput, 'calls' | 'verdict'> {
  const v = judged.verdict;
  return v.type === 'reject' && recorded.type === 'fail' && recorded.reason === v.reason ? { calls: judged.calls, verdict: recorded } : judged;
}

/**
 * The input a swarm's replay starts from: its stored snapshot's, with the turn limit it began
 * with (before its first extension) and, for a run recorded before limits could pause, the
 * limit failing the swarm as it did then.
 */
export function replayInput(swarmId: string, snapshot: unknown, recorded: readonly SwarmEvent[]): SwarmInput {
  const stored = inputFromSnapshot(swarmId, snapshot);
  // The snapshot holds the limits as they ended; the run began with those before its first extension.
  const extension = recorded.find((e) => e.kind === 'status-update' && e.metadata.type === 'extended');
  const extended =
    extension?.kind === 'status-update' && extension.metadata.type === 'extended'
      ? { ...stored, config: { ...stored.config, maxTurns: extension.metadata.previousMaxTurns } }
      : stored;
  return recordedBeforeLimitsPaused(recorded, extended) ? { ...extended, config: { ...extended.config, onLimit: 'fail' as const } } : extended;
}

/**
 * Replays a finished swarm from its journal. Resolves with the replayed events, equal to the
 * recorded ones; throws {@link ReplayDivergenceError} at the first difference.
 *
 * With `judge` (ports over today's definitions), every recorded model response is judged
 * again: a tool schema, result schema or guardrail that now decides differently makes the
 * replay diverge, so a recorded run works as a regression test. Without it the recorded
 * verdicts are used (replay needs no definitions at all).
 */
export async function replaySwarm(
  store: SwarmStore,
  swarmId: string,
  judge?: (input: SwarmInput, definitionVersion: number) => SwarmPorts | undefined,
): Promise<SwarmEvent[]> {
  const record = await store.load(swarmId);
  if (!record) throw new SwarmError(`Unknown swarm "${swarmId}"`, 'unknown-swarm');
  if (!isFinal(record.status)) throw new SwarmError(`Cannot replay swarm "${swarmId}": it is ${record.status}, not finished`);
  if (record.problem) throw new SwarmError(`Cannot replay swarm "${swarmId}": ${record.problem}`);
  const recorded = await store.readEvents(swarmId, 0);
  const input = replayInput(swarmId, record.snapshot, recorded);
  return (await replayJournal({ recorded, input, ports: judge?.(input, record.definitionVersion) })).events;
}

/** What {@link replayJournal} replays. */
export interface JournalReplay {
  /** The recorded events, stamped for `input.swarmId` (a fork renames its source's first). */
  recorded: readonly SwarmEvent[];
  /** The input the machine starts from. */
  input: SwarmInput;
  /** Ports judging each recorded response again (see {@link replaySwarm}); none: the recorded verdicts. */
  ports?: SwarmPorts | undefined;
  /**
   * Stop once the machine has produced this many events and waits for what the journal says
   * comes next (a fork's prefix): nothing after them is fed. Default: the whole journal.
   */
  until?: number;
}

/** A call the replayed machine was waiting on where its replay stopped. */
export interface AwaitedCall {
  /** Which actor waits: a tool, a child swarm, a remote agent, or an agent's deadline. */
  kind: 'tool' | 'swarm' | 'remote' | 'deadline';
  /** The call's id, as the model named it (the agent's id for a deadline). */
  callId: string;
  /** The speaker whose call it is, when the actor's input says (tools). */
  agentId?: string;
  /** The idempotency key the replayed machine asks with. */
  key: string;
}

/** Where {@link replayJournal} stopped. */
export interface ReplayedJournal {
  /** The events the machine produced, equal to the recorded ones. */
  events: SwarmEvent[];
  /** The machine's persisted snapshot there (what a host restores to continue from it). */
  snapshot: PersistedMachineSnapshot;
  /** The calls whose results it was waiting on. */
  awaiting: AwaitedCall[];
  /** Whether the machine had reached a final state. */
  ended: boolean;
}

type Awaiting<T> = Deferred<T> & { call?: AwaitedCall };

/**
 * Drives the swarm machine through a journal with zero model and tool calls (see the module
 * comment): to its end, or to the first `until` events. Throws {@link ReplayDivergenceError}
 * at the first event that differs from the recorded one.
 */
export function replayJournal({ recorded, input, ports, until }: JournalReplay): Promise<ReplayedJournal> {
  const swarmId = input.swarmId;
  const goal = until ?? recorded.length;

  // The journal: every model step and tool result, by the key the replay actors ask with.
  const steps = new Map<string, ModelStepOutput>();
  // Results of tools, child swarms and remote agents, by idempotency key.
  const results = new Map<string, CallResult>();
  // Summary calls (a 'summarize' history policy), by the key of the step they were made for.
  const summaries = new Map<string, MadeSummary>();
  for (const e of recorded) {
    if (e.kind === 'internal:llm-call' && e.summary) {
      const made: MadeSummary = { text: e.response.text ?? '', upTo: e.summary.upTo, model: e.model ?? '', durationMs: e.durationMs };
      if (e.usage) made.usage = e.usage;
      summaries.set(stepKey(e.agent, e.scope, e.turn), made);
    } else if (e.kind === 'internal:llm-call') {
      const summary = summaries.get(stepKey(e.agent, e.scope, e.turn));
      steps.set(stepKey(e.agent, e.scope, e.turn), {
        ...(summary ? { summary } : {}),
        response: e.response,
        calls: e.calls,
        verdict: e.verdict,
        durationMs: e.durationMs,
        ...(e.model !== undefined ? { model: e.model } : {}),
        at: e.timestamp,
      });
    } else if (e.kind === 'internal:tool-complete' && e.key) {
      results.set(e.key, { ok: e.ok, content: e.content, ...(e.failsSwarm ? { failsSwarm: true as const } : {}), ...(e.files ? { files: e.files } : {}) });
    } else if (e.kind === 'status-update' && e.metadata.type === 'handoff-result') {
      // `from` names the agent that answered, which the live call's result carried.
      // A child's rolled-up usage counts again exactly as it did live: with this result.
      results.set(e.metadata.key, {
        ok: e.metadata.ok,
        content: e.metadata.content,
        agentId: e.metadata.from,
        ...(e.metadata.usage ? { usage: e.metadata.usage } : {}),
        ...(e.metadata.failsSwarm ? { failsSwarm: true as const } : {}),
      });
    }
  }

  const pendingSteps = new Map<string, Deferred<ModelStepOutput>>();
  const pendingResults = new Map<string, Awaiting<CallResult>>();
  const wait = <T>(map: Map<string, Awaiting<T>>, key: string, signal: AbortSignal, call?: AwaitedCall) =>
    new Promise<T>((resolve, reject) => {
      map.set(key, { resolve, reject, ...(call ? { call } : {}) });
      signal.addEventListener('abort', () => {
        map.delete(key);
        reject(signal.reason);
      });
    });
  // Replay actors answer only when the journal says their answer came next: parallel calls
  // complete in the recorded order, and nothing ever reaches a model or a tool.
  const modelStep = fromPromise<ModelStepOutput, ModelStepInput>(async ({ input: i, signal }) => {
    const step = await wait(pendingSteps, stepKey(i.speaker, i.scope, i.turn), signal);
    if (!ports) return step;
    // Judge the recorded response again, exactly as a live step would.
    const guarded = await guardInput(i, ports);
    const judged = asRecordedBefore(guarded ?? (await judgeStep(step.response, i, ports)), step.verdict);
    return { ...step, ...judged, calls: asGatedThen(judged.calls, step.calls) };
  });
  const runTool = fromPromise<CallResult, ToolRunInput>(({ input: i, signal }) =>
    wait(pendingResults, i.idempotencyKey, signal, { kind: 'tool', callId: i.toolCallId, agentId: i.agentId, key: i.idempotencyKey }),
  );
  const childSwarm = fromPromise<CallResult, ChildSwarmInput>(({ input: i, signal }) =>
    wait(pendingResults, i.key, signal, { kind: 'swarm', callId: i.callId, key: i.key }),
  );
  const remoteAgent = fromPromise<CallResult, RemoteAgentInput>(({ input: i, signal }) =>
    wait(pendingResults, i.key, signal, { kind: 'remote', callId: i.callId, key: i.key }),
  );
  // An agent's deadline answers when the journal says its handoff ended with no answer of the agent's own (it timed out).
  const agentDeadline = fromPromise<CallResult, AgentDeadlineInput>(({ input: i, signal }) =>
    wait(pendingResults, i.key, signal, { kind: 'deadline', callId: i.agentId, key: i.key }),
  );
  const logic = wireSwarm({ modelStep, runTool, childSwarm, remoteAgent, agentDeadline });

  const produced: SwarmEvent[] = [];
  return new Promise<ReplayedJournal>((resolve, reject) => {
    let failed = false;
    const fail = (seq: number, detail: string) => {
      if (failed) return;
      failed = true;
      actor.stop();
      reject(new ReplayDivergenceError(swarmId, seq, detail));
    };
    const finish = (ended: boolean) => {
      failed = true;
      const snapshot = persistedSnapshot(actor);
      const awaiting = [...pendingResults.values()].flatMap((d) => (d.call ? [d.call] : []));
      if (!ended) actor.stop();
      resolve({ events: produced, snapshot, awaiting, ended });
    };
    const accept = (body: SwarmEventBody) => {
      const expected = recorded[produced.length];
      const seq = produced.length + 1;
      if (!expected) return fail(seq, `produced an extra ${body.kind} event`);
      const replayed = canonical(stampedLike(asRecordedThen(body, expected), expected));
      if (replayed !== canonical(expected)) return fail(seq, `expected ${canonical(expected)}, produced ${replayed}`);
      produced.push(expected);
    };
    const actor = createActor(logic, { input, systemId: swarmId });
    actor.on('swarm.events', (e) => e.events.forEach(accept));

    // Feeds the machine whatever the journal says happened next from outside its own steps.
    const pump = (): boolean => {
      for (;;) {
        if (failed) return true;
        // Nothing past the goal is fed: a fork's prefix stops there.
        if (produced.length >= goal) return false;
        const next = recorded[produced.length];
        if (!next) return false;
        // Published from outside the machine: streamed chunks, child swarms' lifecycle, a fork's origin.
        // A migration (after a deploy) is the runtime's, too: the replay runs on the migrated configuration.
        const outside = next.kind === 'status-update' && (next.metadata.type === 'child-swarm' || next.metadata.type === 'forked' || next.metadata.type === 'migrated');
        if (isChunk(next) || outside) {
          produced.push(next);
          continue;
        }
        if (next.kind === 'internal:checkpoint' && next.step === 'stop') {
          // The stop action records its checkpoint before the final `stopped` update.
          const stopped = recorded.slice(produced.length).find((e) => e.kind === 'status-update' && e.metadata.type === 'stopped');
          const reason = stopped?.kind === 'status-update' && stopped.metadata.type === 'stopped' ? stopped.metadata.reason : 'stopped';
          return (actor.send({ type: 'STOP', reason }), true);
        }
        if (next.kind === 'status-update') {
          const fact = next.metadata;
          const state = actor.getSnapshot().value;
          if (fact.type === 'paused' && state !== 'paused') return (actor.send({ type: 'PAUSE', reason: fact.reason }), true);
          if (fact.type === 'resumed') return (actor.send(fact.message === undefined ? { type: 'RESUME' } : { type: 'RESUME', message: fact.message }), true);
          if (fact.type === 'stopped') return (actor.send({ type: 'STOP', reason: fact.reason }), true);
          if (fact.type === 'extended') return (actor.send({ type: 'EXTEND', maxTurns: fact.maxTurns, ...(fact.budget ? { budget: fact.budget } : {}) }), true);
          if (fact.type === 'approval') return (actor.send(approvalOf(fact)), true);
        }
        // A model call that threw left no `internal:llm-call`: the failure it caused comes next
        // (the swarm's `failed` fact, or an agent's failed handoff result), so the step waiting
        // with nothing recorded fails again with the recorded error.
        const threw = failedCall(next);
        if (threw) {
          const key = [...pendingSteps.keys()].find((k) => !steps.has(k) && (threw.speaker === undefined || k.startsWith(`${threw.speaker}|`)));
          if (key) {
            const waiting = pendingSteps.get(key)!;
            pendingSteps.delete(key);
            waiting.reject(new Error(threw.message));
            return true;
          }
        }
        if (next.kind === 'internal:llm-call') {
          const key = stepKey(next.agent, next.scope, next.turn);
          const waiting = pendingSteps.get(key);
          if (!waiting) return false;
          pendingSteps.delete(key);
          waiting.resolve(steps.get(key)!);
          return true;
        }
        const key = next.kind === 'internal:tool-complete' ? next.key : next.kind === 'status-update' && next.metadata.type === 'handoff-result' ? next.metadata.key : '';
        const waiting = key ? pendingResults.get(key) : undefined;
        if (!waiting) return false;
        pendingResults.delete(key);
        waiting.resolve(results.get(key)!);
        return true;
      }
    };
    let idle = 0;
    const check = () => {
      if (failed) return;
      if (actor.getSnapshot().status !== 'active') {
        if (produced.length < goal) pump();
        if (produced.length < goal) return fail(produced.length + 1, `the swarm ended before ${recorded[produced.length]!.kind}`);
        return finish(true);
      }
      if (pump()) {
        idle = 0;
        return;
      }
      // Nothing to feed and nothing moving: the journal and the machine disagree, or a
      // prefix replay has reached its goal (the machine waits for what comes after it).
      setImmediate(() => {
        if (failed || actor.getSnapshot().status !== 'active') return;
        if (++idle > 3) {
          if (until !== undefined && produced.length >= until) return finish(false);
          return fail(produced.length + 1, `stalled waiting for ${canonical(recorded[produced.length] ?? produced.at(-1)!)}`);
        }
        check();
      });
    };
    actor.subscribe({ next: () => queueMicrotask(check), error: (e) => fail(produced.length + 1, String(e)) });
    actor.start();
  });
}

/**
 * Ports that judge a replayed swarm's responses with today's definitions, wired as the live
 * runtime's are, or undefined when its definition is not registered (the recorded verdicts are
 * used then; `definitionVersion`: the version it ran on, else the current one). Nothing in them reaches a model, a tool or another swarm: every answer comes
 * from the journal.
 */
export function judgingPorts(deps: Pick<PortsDeps, 'catalog' | 'specs'>, input: SwarmInput, definitionVersion?: number): SwarmPorts | undefined {
  if (!deps.catalog.swarm(input.definitionId, definitionVersion)) return undefined;
  const replaying: PortsHost = {
    ...(definitionVersion !== undefined ? { definitionVersion } : {}),
    config: () => input.config,
    input: () => input.input,
    publish: () => undefined,
    durable: async () => undefined,
  };
  const refuse = () => Promise.reject(new Error('a replay makes no calls'));
  return createPorts({
    ...deps,
    model: { name: 'replay', call: refuse },
    hosts: new Map([[input.swarmId, replaying]]),
    calls: { runChild: refuse, runRemote: refuse },
  });
}
