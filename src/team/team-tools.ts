/**
 * The tools a worker's task swarm gets automatically (docs/team-inbox.md): `team_write`,
 * `team_broadcast`, `team_read_inbox` and `team_help_request`. A call finds its team from the
 * calling swarm's id (a task attempt's swarm is `${teamId}:${taskId}:${attempt}`, its child
 * swarms `${that}:…`) among the teams driven in this process, else (a worker swarm hosted by a
 * runtime over NATS) at the runtime that drives the team, so the tools need no wiring by the
 * user. Every call is keyed by its tool call's idempotency key: a call run again after a
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

/** One call of a team tool, as it travels to the runtime driving the team (see {@link TeamToolRemote}). */
export type TeamToolCall = { swarmId: string; key: string } & (
  | { op: 'write'; to: string; text: string }
  | { op: 'broadcast'; text: string }
  | { op: 'read' }
  | { op: 'help'; question: string }
);

/**
 * How the team tools reach a team driven by another process: a runtime over NATS registers one
 * (`runtime/team-tools-remote.ts`), so a worker swarm it hosts for a team's leader elsewhere gets
 * working tools. `call` resolves with the call's value, or undefined when no runtime it can
 * reach drives a team holding that attempt (looked for again, as a local team is).
 */
export interface TeamToolRemote {
  call(call: TeamToolCall, signal: AbortSignal): Promise<{ value: unknown } | undefined>;
}

/** The remotes of the runtimes of this process (see {@link TeamToolRemote}). */
const remotes = new Set<TeamToolRemote>();

/** Makes the team tools try `remote` for calls whose team is not driven here; returns the undo. */
export function registerTeamToolRemote(remote: TeamToolRemote): () => void {
  remotes.add(remote);
  return () => remotes.delete(remote);
}

/** The team driven here that holds the attempt whose swarm is `swarmId` (or a child of it), with its worker and task. */
function localCaller(swarmId: string): { target: TeamToolTarget; workerId: string; taskId: string } | undefined {
  for (const [teamId, target] of targets) {
    if (!swarmId.startsWith(`${teamId}:`)) continue;
    const attempt = target.attemptOf(swarmId);
    if (attempt) return { target, ...attempt };
  }
  return undefined;
}

/** Runs `call` on the team driven here that holds its attempt; undefined when there is none. */
async function runHere(call: TeamToolCall, signal: AbortSignal): Promise<{ value: unknown } | undefined> {
  const found = localCaller(call.swarmId);
  if (!found) return undefined;
  const { target, workerId, taskId } = found;
  switch (call.op) {
    case 'write':
      return { value: { sent: true, to: call.to, seq: await target.memberWrite(workerId, call.to, call.text, call.key) } };
    case 'broadcast':
      await target.memberWrite(workerId, undefined, call.text, call.key);
      return { value: { sent: true } };
    case 'read':
      return { value: { messages: await target.memberRead(workerId, call.key) } };
    case 'help':
      return { value: { answer: await target.askForHelp({ workerId, taskId, question: call.question, key: call.key }, signal) } };
  }
}

/**
 * Answers a team tool call of a worker swarm hosted by another process (what a runtime serving
 * other runtimes does with one, see {@link TeamToolRemote}): run on the team driven here that
 * holds its attempt, or undefined when none does. A help request not answered within `waitMs`
 * resolves `{ pending: true }`: the caller asks again with the same key, which waits for the
 * same request (a request over NATS cannot wait for a user).
 */
export async function answerTeamToolCall(call: TeamToolCall, waitMs: number): Promise<{ value: unknown } | undefined> {
  if (call.op !== 'help') return runHere(call, new AbortController().signal);
  const waiting = AbortSignal.timeout(waitMs);
  try {
    return await runHere(call, waiting);
  } catch (error) {
    if (waiting.aborted) return { value: { pending: true } };
    throw error;
  }
}

/**
 * Runs a team tool call where its team is driven: in this process, else through a registered
 * remote. After a restart the swarm may run its call before its team is restored (here or
 * elsewhere): it is looked for again for a while (the swarm's own abort ends it).
 */
async function perform(call: TeamToolCall, ctx: ToolContext): Promise<unknown> {
  for (let i = 0; ; i++) {
    const here = await runHere(call, ctx.signal);
    if (here) return here.value;
    for (const remote of remotes) {
      const there = await remote.call(call, ctx.signal);
      if (there) return there.value;
    }
    if (i >= 100 || ctx.signal.aborted) throw new Error(`swarm ${ctx.swarmId} is not a task attempt of a running team: the team tools work only in a team's task swarms`);
    await delay(100, ctx.signal);
  }
}

const write = tool({
  name: 'team_write',
  description: "Sends a message to one teammate's inbox (the leader is `leader`; workers are `<type>-<n>`).",
  parameters: z.object({ to: z.string().min(1).describe('The member id'), message: z.string().min(1) }),
  execute: ({ to, message }, ctx) => perform({ op: 'write', swarmId: ctx.swarmId, key: ctx.idempotencyKey, to, text: message }, ctx),
});

const broadcast = tool({
  name: 'team_broadcast',
  description: 'Sends a message to every other member of the team (the leader and the other workers).',
  parameters: z.object({ message: z.string().min(1) }),
  execute: ({ message }, ctx) => perform({ op: 'broadcast', swarmId: ctx.swarmId, key: ctx.idempotencyKey, text: message }, ctx),
});

const readInbox = tool({
  name: 'team_read_inbox',
  description: 'Reads the messages sent to you since your last read (each message is returned once).',
  parameters: z.object({}),
  execute: (_args, ctx) => perform({ op: 'read', swarmId: ctx.swarmId, key: ctx.idempotencyKey }, ctx),
});

const helpRequest = tool({
  name: 'team_help_request',
  description: "Asks the team's leader a question about your task and waits for the answer (the leader may ask the user).",
  parameters: z.object({ question: z.string().min(1) }),
  execute: ({ question }, ctx) => perform({ op: 'help', swarmId: ctx.swarmId, key: ctx.idempotencyKey, question }, ctx),
});

/**
 * The team tools (see the module's comment): what a worker swarm hosted by another process (a
 * worker runtime over NATS) lists itself; its calls reach the runtime driving the team.
 */
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
