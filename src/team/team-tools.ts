/**
 * The tools a worker's task swarm gets automatically (docs/team-inbox.md): `team_write`,
 * `team_broadcast`, `team_read_inbox` and `team_help_request`. A call finds its team from the
 * calling swarm's id (a task attempt's swarm is `${teamId}:${taskId}:${attempt}`, its child
 * swarms `${that}:…`) among the teams driven in this process, so the tools need no wiring by
 * the user. Every call is keyed by its tool call's idempotency key: a call run again after a
 * restart sends nothing twice and reads the same messages, and a help request asked again
 * waits for the same answer.
 *
 * @module
 */
import { z } from 'zod';
import { derivedSwarm, resolveFromInput, type SwarmDefinition, type ToolEntry } from '../define/swarm.js';
import { tool, type Tool, type ToolContext } from '../define/tool.js';
import type { TeamDefinition } from '../define/team.js';
import { delay } from '../util/abort.js';

/** What the team tools need of a team driven here (a `TeamHost`). */
export interface TeamToolTarget {
  readonly teamId: string;
  /** The worker holding the attempt whose swarm is `swarmId` (or a child of it), with its task. */
  attemptOf(swarmId: string): { workerId: string; taskId: string } | undefined;
  memberWrite(workerId: string, to: string | undefined, text: string, key: string): Promise<number>;
  memberRead(workerId: string, key: string): Promise<{ from: string; type: string; text: string; seq: number }[]>;
  askForHelp(request: { workerId: string; taskId: string; question: string; key: string }, signal: AbortSignal): Promise<string>;
}

/** The teams driven in this process, by team id (the last to drive a team wins). */
const targets = new Map<string, TeamToolTarget>();

/** Makes `target` the one the team tools reach for its team; returns the undo. */
export function registerTeamToolTarget(target: TeamToolTarget): () => void {
  targets.set(target.teamId, target);
  return () => {
    if (targets.get(target.teamId) === target) targets.delete(target.teamId);
  };
}

/** The names of the team tools. */
export const TEAM_TOOL_NAMES = ['team_write', 'team_broadcast', 'team_read_inbox', 'team_help_request'] as const;

/**
 * The team and worker a call comes from. After a restart the swarm may run its call before its
 * team is restored here: it is looked for again for a while (the swarm's own abort ends it).
 */
async function caller(ctx: ToolContext): Promise<{ target: TeamToolTarget; workerId: string; taskId: string }> {
  for (let i = 0; ; i++) {
    for (const [teamId, target] of targets) {
      if (!ctx.swarmId.startsWith(`${teamId}:`)) continue;
      const attempt = target.attemptOf(ctx.swarmId);
      if (attempt) return { target, ...attempt };
    }
    if (i >= 100 || ctx.signal.aborted)
      throw new Error(`swarm ${ctx.swarmId} is not a task attempt of a team running in this process: the team tools work only in a team's task swarms`);
    await delay(100, ctx.signal);
  }
}

const write = tool({
  name: 'team_write',
  description: "Sends a message to one teammate's inbox (the leader is `leader`; workers are `<type>-<n>`).",
  parameters: z.object({ to: z.string().min(1).describe('The member id'), message: z.string().min(1) }),
  execute: async ({ to, message }, ctx) => {
    const { target, workerId } = await caller(ctx);
    const seq = await target.memberWrite(workerId, to, message, ctx.idempotencyKey);
    return { sent: true, to, seq };
  },
});

const broadcast = tool({
  name: 'team_broadcast',
  description: 'Sends a message to every other member of the team (the leader and the other workers).',
  parameters: z.object({ message: z.string().min(1) }),
  execute: async ({ message }, ctx) => {
    const { target, workerId } = await caller(ctx);
    await target.memberWrite(workerId, undefined, message, ctx.idempotencyKey);
    return { sent: true };
  },
});

const readInbox = tool({
  name: 'team_read_inbox',
  description: 'Reads the messages sent to you since your last read (each message is returned once).',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    const { target, workerId } = await caller(ctx);
    return { messages: await target.memberRead(workerId, ctx.idempotencyKey) };
  },
});

const helpRequest = tool({
  name: 'team_help_request',
  description: "Asks the team's leader a question about your task and waits for the answer (the leader may ask the user).",
  parameters: z.object({ question: z.string().min(1) }),
  execute: async ({ question }, ctx) => {
    const { target, workerId, taskId } = await caller(ctx);
    return { answer: await target.askForHelp({ workerId, taskId, question, key: ctx.idempotencyKey }, ctx.signal) };
  },
});

/** The team tools (see the module's comment): what a worker swarm hosted elsewhere lists itself. */
export function teamTools(): Tool[] {
  return [write, broadcast, readInbox, helpRequest] as unknown as Tool[];
}

/**
 * The swarm definitions with the team tools added to those the teams' workers run (a tool of
 * the same name the definition has already is left as it is). Other definitions are returned
 * as they are.
 */
export function withTeamTools(swarms: readonly SwarmDefinition<any, any>[], teams: readonly TeamDefinition[]): SwarmDefinition<any, any>[] {
  const workerSwarms = new Set(teams.flatMap((team) => team.workers.map((w) => (typeof w.swarm === 'string' ? w.swarm : w.swarm.id))));
  return swarms.map((swarm) => {
    if (!workerSwarms.has(swarm.id)) return swarm;
    const own = swarm.tools;
    const add = (list: readonly ToolEntry[]): readonly ToolEntry[] => [
      ...list,
      ...teamTools().filter((t) => !list.some((entry) => entry.kind === 'tool' && entry.name === t.name)),
    ];
    const tools =
      typeof own === 'function' ? (args: { input: unknown }) => add(resolveFromInput(own, args.input) as readonly ToolEntry[]) : add(own as readonly ToolEntry[]);
    // Registered in the original's place: handoffs naming the original reach it.
    return derivedSwarm(swarm, { tools });
  });
}
