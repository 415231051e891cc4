/**
 * The questions remote agents ask a swarm's human (A2A `input-required`): the swarm pauses with
 * the question, and the answer its resume gives goes back to every agent that asked. Shared by
 * the remote-agent runner (which asks), the commands (a resume answers, a stop forgets) and
 * passivation (a swarm evicted while agents wait keeps their answer for when it is back).
 *
 * @module
 */

/** The questions waiting on the humans of one runtime's swarms. */
export class HumanQuestions {
  /**
   * Questions remote agents asked a swarm's human: the answer to the swarm's resume goes back to
   * each of them (parallel remote handoffs may ask at once).
   */
  private readonly waiting = new Map<string, ((answer: string | undefined) => void)[]>();
  /**
   * Swarms passivated while remote agents waited on their human, with how many asked: once
   * restored, those calls re-attach to their remote tasks and ask again, and the answer the
   * swarm's resume gave goes to that many of them (see {@link setAside}).
   */
  private readonly setAsideCounts = new Map<string, number>();
  private readonly answers = new Map<string, { answer: string | undefined; remaining: number }>();

  /**
   * Registers a question to the swarm's human and resolves with the answer. `kept` is true when
   * the human already answered it (asked again by a call that re-attached after a passivation):
   * the swarm must not be paused again.
   */
  ask(swarmId: string): { answer: Promise<string | undefined>; kept: boolean } {
    const kept = this.answers.get(swarmId);
    if (kept) {
      if (--kept.remaining <= 0) this.answers.delete(swarmId);
      return { answer: Promise.resolve(kept.answer), kept: true };
    }
    const answer = new Promise<string | undefined>((resolve) => {
      this.waiting.set(swarmId, [...(this.waiting.get(swarmId) ?? []), resolve]);
    });
    return { answer, kept: false };
  }

  /** The swarm was resumed: its human's `answer` goes to every remote agent that asked. */
  answer(swarmId: string, answer: string | undefined): void {
    const waiting = this.waiting.get(swarmId) ?? [];
    this.waiting.delete(swarmId);
    for (const resolve of waiting) resolve(answer);
    const setAside = this.setAsideCounts.get(swarmId);
    if (setAside !== undefined) {
      this.setAsideCounts.delete(swarmId);
      // Calls that re-attached and asked before this resume were just answered.
      const remaining = setAside - waiting.length;
      if (remaining > 0) this.answers.set(swarmId, { answer, remaining });
    }
  }

  /** The swarm ended: nothing kept for it is needed any more. */
  forget(swarmId: string): void {
    this.waiting.delete(swarmId);
    this.setAsideCounts.delete(swarmId);
    this.answers.delete(swarmId);
  }

  /** How many remote agents wait for this swarm's human (the swarm is paused for them). */
  asking(swarmId: string): number {
    return this.waiting.get(swarmId)?.length ?? 0;
  }

  /**
   * The swarm leaves memory (passivation) while remote agents wait on its human: their calls
   * stop and leave the remote tasks running; the answer its next resume gives is kept for the
   * calls that re-attach once it is restored.
   */
  setAside(swarmId: string): void {
    const waiting = this.waiting.get(swarmId);
    if (!waiting) return;
    this.waiting.delete(swarmId);
    this.setAsideCounts.set(swarmId, (this.setAsideCounts.get(swarmId) ?? 0) + waiting.length);
  }
}
