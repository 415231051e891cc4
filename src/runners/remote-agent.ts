/**
 * Running remote-agent handoffs through the {@link RemoteAgentClient} (the seam, in
 * `a2a/remote.ts`; its A2A implementation is `a2a/client.ts`): the agents' cards (fetched before a run resolves its handoffs,
 * so their tools get the cards' names), and each request, with the questions a remote agent
 * asks the swarm's human: the swarm pauses with the question, and its resume answers every
 * agent that asked.
 *
 * @module
 */
import type { PauseReason } from '../../machines/events.js';
import type { CallResult, RemoteAgentInput } from '../../machines/contracts.js';
import { abortable } from '../util/abort.js';
import type { AgentRegistry } from '../registry/registry.js';
import { registrySkill } from '../catalog/best-agent.js';
import type { Handoff } from '../define/handoff.js';
import type { RemoteAgentClient, RemoteCard, RemoteHooks } from '../a2a/remote.js';

/** How long fetching one agent card may take before the swarm starts without it. */
const CARD_TIMEOUT_MS = 10_000;

/** What running remote handoffs needs from the runtime. */
export interface RemoteAgentDeps {
  client: RemoteAgentClient;
  /**
   * A probe of whether the swarm, as live here now, has ended (stopped, failed): false once the
   * runtime closed, since the swarm then continues elsewhere.
   */
  endedProbe(swarmId: string): () => boolean;
  /** Whether the swarm is paused right now. */
  isPaused(swarmId: string): boolean | undefined;
  pause(swarmId: string, reason: PauseReason): Promise<void>;
  /** Where handoffs to the best agent for a skill find their agent. */
  registry?: AgentRegistry | undefined;
}

/** The remote agents of one runtime. */
export class RemoteAgents {
  private readonly cards = new Map<string, RemoteCard>();
  /**
   * Questions remote agents asked a swarm's human: the answer to the swarm's resume goes back to
   * each of them (parallel remote handoffs may ask at once).
   */
  private readonly questions = new Map<string, ((answer: string | undefined) => void)[]>();
  /**
   * Swarms passivated while remote agents waited on their human, with how many asked: once
   * restored, those calls re-attach to their remote tasks and ask again, and the answer the
   * swarm's resume gave goes to that many of them (see {@link setAside}).
   */
  private readonly setAsideQuestions = new Map<string, number>();
  private readonly answers = new Map<string, { answer: string | undefined; remaining: number }>();

  constructor(private readonly deps: RemoteAgentDeps) {}

  /** The card fetched for `url`, if any (see {@link fetchCards}). */
  card(url: string): RemoteCard | undefined {
    return this.cards.get(url);
  }

  /** Fetches (once) the agent cards of remote handoffs; an unreachable one is left out. */
  async fetchCards(handoffs: readonly Handoff[]): Promise<void> {
    for (const h of handoffs) {
      if (h.kind !== 'remote' || this.cards.has(h.url)) continue;
      try {
        this.cards.set(h.url, await this.deps.client.card(h.url, AbortSignal.timeout(CARD_TIMEOUT_MS)));
      } catch {
        // Unreachable now: the swarm still runs; calls to this agent report the problem.
      }
    }
  }

  /**
   * Sends one remote handoff's request and resolves with the agent's answer. A handoff to the
   * best agent for a skill goes to the registry, which picks the agent (see `best-agent.ts`);
   * its questions pause the swarm the same way.
   */
  async run(input: RemoteAgentInput, signal: AbortSignal): Promise<CallResult> {
    const swarmEnded = this.deps.endedProbe(input.swarmId);
    const hooks: RemoteHooks = { askHuman: (question) => this.askHuman(input.swarmId, question), swarmEnded };
    const skill = registrySkill(input.url);
    if (skill === undefined) return this.deps.client.send(input, hooks, signal);
    // A swarm restored by a runtime created without the registry it was started with.
    const { registry } = this.deps;
    if (!registry) return { ok: false, content: `No agent registry is available to find the best agent for "${skill}"` };
    try {
      return await registry.callBest(skill, input, hooks, signal);
    } catch (e) {
      if (signal.aborted || registry.closeReason === undefined) throw e;
      // The registry was closed under a live swarm (its runtime closes next): the call was
      // interrupted, not answered. Failing it would be recorded for good, so it waits to be
      // stopped with the swarm instead; the swarm's record keeps it running, and after a restart
      // it runs again with the same message id (re-attaching to the agent's task).
      return await abortable(new Promise<never>(() => undefined), signal);
    }
  }

  /** The swarm was resumed: its human's `answer` goes to every remote agent that asked. */
  answer(swarmId: string, answer: string | undefined): void {
    const waiting = this.questions.get(swarmId) ?? [];
    this.questions.delete(swarmId);
    for (const resolve of waiting) resolve(answer);
    const setAside = this.setAsideQuestions.get(swarmId);
    if (setAside !== undefined) {
      this.setAsideQuestions.delete(swarmId);
      // Calls that re-attached and asked before this resume were just answered.
      const remaining = setAside - waiting.length;
      if (remaining > 0) this.answers.set(swarmId, { answer, remaining });
    }
  }

  /** The swarm ended: nothing kept for it is needed any more. */
  forget(swarmId: string): void {
    this.questions.delete(swarmId);
    this.setAsideQuestions.delete(swarmId);
    this.answers.delete(swarmId);
  }

  /** How many remote agents wait for this swarm's human (the swarm is paused for them). */
  asking(swarmId: string): number {
    return this.questions.get(swarmId)?.length ?? 0;
  }

  /**
   * The swarm leaves memory (passivation) while remote agents wait on its human: their calls
   * stop and leave the remote tasks running; the answer its next resume gives is kept for the
   * calls that re-attach once it is restored.
   */
  setAside(swarmId: string): void {
    const waiting = this.questions.get(swarmId);
    if (!waiting) return;
    this.questions.delete(swarmId);
    this.setAsideQuestions.set(swarmId, (this.setAsideQuestions.get(swarmId) ?? 0) + waiting.length);
  }

  /** Pauses a swarm for a question a remote agent asked; resolves with the human's answer. */
  private async askHuman(swarmId: string, question: string): Promise<string | undefined> {
    // Asked again by a call that re-attached after a passivation: the human already answered.
    const kept = this.answers.get(swarmId);
    if (kept) {
      if (--kept.remaining <= 0) this.answers.delete(swarmId);
      return kept.answer;
    }
    const answer = new Promise<string | undefined>((resolve) => {
      this.questions.set(swarmId, [...(this.questions.get(swarmId) ?? []), resolve]);
    });
    if (this.deps.isPaused(swarmId) === false) await this.deps.pause(swarmId, { type: 'HITL', message: question });
    return answer;
  }
}
