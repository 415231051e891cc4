/**
 * Running remote-agent handoffs through the {@link RemoteAgentClient} (the seam, in
 * `a2a/remote.ts`; its A2A implementation is `a2a/client.ts`): each request, with the questions
 * a remote agent asks the swarm's human (the swarm pauses with the question, and its resume
 * answers every agent that asked, see `questions.ts`). A handoff to the best agent for a skill
 * goes to the runtime's agent registry, which picks the agent when the call runs.
 *
 * @module
 */
import type { PauseReason } from '../../machines/events.js';
import type { RemoteAgentInput } from '../../machines/calls/remote.js';
import type { CallResult } from '../../machines/calls/kind.js';
import type { AgentRegistry } from '../registry/registry.js';
import { registrySkill } from '../catalog/best-agent.js';
import { callBestAgent } from './best-agent.js';
import type { RemoteAgentClient, RemoteHooks } from '../a2a/remote.js';
import { isFinal, type SwarmStatus } from '../store/result.js';
import type { HumanQuestions } from './questions.js';
import { withinDeadline } from '../../actors/call-timeout.js';
import { responseSchemaProblem } from '../define/response-schema.js';

/** What running remote handoffs needs from the runtime. */
export interface RemoteAgentDeps {
  client: RemoteAgentClient;
  /** The swarms live here: a call asks whether its swarm has ended, or is paused. */
  live: { readonly hosts: ReadonlyMap<string, { status(): SwarmStatus }>; readonly closed: boolean };
  questions: HumanQuestions;
  /** Pauses a swarm for its human (a remote agent's question). */
  commands: { pause(swarmId: string, reason: PauseReason): Promise<void> };
  /** Where handoffs to the best agent for a skill find their agent. */
  registry?: AgentRegistry | undefined;
}

/** The remote-agent calls of one runtime. */
export class RemoteAgents {
  constructor(private readonly deps: RemoteAgentDeps) {}

  /**
   * Sends one remote handoff's request and resolves with the agent's answer. A handoff to the
   * best agent for a skill goes to the registry, which picks the agent (`best-agent.ts`);
   * its questions pause the swarm the same way.
   */
  async run(input: RemoteAgentInput, signal: AbortSignal): Promise<CallResult> {
    const hooks: RemoteHooks = {
      askHuman: (question, request) => this.askHuman(input.swarmId, question, request?.responseSchema),
      swarmEnded: this.endedProbe(input.swarmId),
    };
    const skill = registrySkill(input.url);
    // At the handoff's deadline the call's signal aborts with a CallTimeoutError: the remote
    // task is canceled (see the client's abort), and the model reads the timeout.
    return withinDeadline(
      input.timeout,
      signal,
      (bounded) => (skill === undefined ? this.deps.client.send(input, hooks, bounded) : callBestAgent(this.deps.registry, skill, input, hooks, bounded)),
      (e) => ({
        ok: false,
        content: `The remote agent "${input.agentId}" (${input.url}) ${e.message}`,
        ...(input.timeout?.fails ? { failsSwarm: true as const } : {}),
      }),
    );
  }

  /**
   * A probe of whether the swarm, as live here now, has ended (stopped, failed): false once the
   * runtime closed, since the swarm then continues elsewhere.
   */
  private endedProbe(swarmId: string): () => boolean {
    const { live } = this.deps;
    const host = live.hosts.get(swarmId);
    return () => !live.closed && !!host && isFinal(host.status());
  }

  /**
   * Pauses a swarm for a question a remote agent asked; resolves with the human's answer. A
   * response schema the agent sent (and this runtime can check) is the pause's: the resume is
   * checked against it here, before the answer travels.
   */
  private async askHuman(swarmId: string, question: string, responseSchema?: Record<string, unknown>): Promise<string | undefined> {
    const { answer, kept } = this.deps.questions.ask(swarmId);
    // Asked again by a call that re-attached after a passivation: the human already answered.
    if (kept) return answer;
    // A swarm not live here (its runtime closing) is not paused from here.
    const host = this.deps.live.hosts.get(swarmId);
    const typed = responseSchema && !responseSchemaProblem(responseSchema) ? { responseSchema } : {};
    if (host && host.status() !== 'paused') await this.deps.commands.pause(swarmId, { type: 'HITL', message: question, ...typed });
    return answer;
  }
}
