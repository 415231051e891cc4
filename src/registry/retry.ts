/**
 * Retry on another agent: what the registry does when the agent a task or handoff went to
 * fails.
 *
 * The rule: a failure is retried on another agent only when the agent is **broken**, and
 * "broken" is what its health check says. The failed agent is checked at once; found
 * unhealthy (its card or its endpoint does not answer, or not in its protocol), the call goes
 * to the next best healthy agent with the skill not yet tried for this call, and so on, each
 * agent at most once. An agent still healthy after failing gave its answer (an A2A task that
 * ended `failed`, `rejected` or `canceled`, a local agent that threw): that failure is the
 * call's outcome, as it would be with one agent. Every agent tried gets the same message key,
 * so a call re-sent after a restart is the same message to whichever agent gets it.
 *
 * @module
 */

/** What one agent answered: its result, or why it failed. */
export type Outcome = { ok: true; result: string } | { ok: false; error: string };

/** The outcome of a call that may have gone to several agents, with the agent that answered last. */
export type RetriedOutcome = Outcome & { agentId?: string };

/** What {@link sendWithRetry} needs from the registry. */
export interface RetryDeps<A> {
  /** The registry's id of an agent. */
  idOf(agent: A): string;
  /** The best agent not in `tried`, or why there is none. */
  choose(tried: ReadonlySet<string>): A | string;
  /** Sends the call to `agent` (rejects only when the caller aborts). */
  send(agent: A): Promise<Outcome>;
  /** Checks `agent`'s health now; resolves with whether it is broken (unhealthy). */
  broken(agent: A): Promise<boolean>;
  /** Called before each agent is tried, with why the previous one was left (if any). */
  trying?(agent: A, previous?: { agentId: string; error: string }): void;
}

/** Sends a call to the best agent, then to the next ones while the agents tried are broken (see the module doc). */
export async function sendWithRetry<A>(deps: RetryDeps<A>): Promise<RetriedOutcome> {
  const tried = new Set<string>();
  const broken: { agentId: string; error: string }[] = [];
  for (;;) {
    const agent = deps.choose(tried);
    if (typeof agent === 'string') {
      if (broken.length === 0) return { ok: false, error: agent };
      const last = broken.at(-1)!;
      const error = broken.length === 1 ? last.error : `Every agent tried failed: ${broken.map((b) => `${b.agentId}: ${b.error}`).join('; ')}`;
      return { ok: false, error, agentId: last.agentId };
    }
    const agentId = deps.idOf(agent);
    tried.add(agentId);
    deps.trying?.(agent, broken.at(-1));
    const outcome = await deps.send(agent);
    if (outcome.ok || !(await deps.broken(agent))) return { ...outcome, agentId };
    broken.push({ agentId, error: outcome.error });
  }
}
