/**
 * A regular tool call: run by a `runTool` child (`actors/run-tool.ts`), announced by a `tool-call`
 * fact and an `internal:tool-start` event, reported by `internal:tool-complete`.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import { statusUpdate } from '../event-builders.js';
import { type CallKind, type CallResult, type CallTimeout, childIdFor, timeoutOf } from './kind.js';

/** A tool call as the model response's judge planned it: raw JSON arguments. */
export interface PlannedToolCall {
  id: string;
  name: string;
  kind: 'tool';
  arguments: string;
  /** The tool's `timeoutMs`, when it has one. */
  timeoutMs?: number;
  /** The tool's `onTimeout`, when it is `'fail'`. */
  onTimeout?: 'fail';
}

/** A regular tool call in a round, run by a `runTool` child. */
export interface ToolRoundCall {
  kind: 'tool';
  id: string;
  name: string;
  /** The spawned actor running it. */
  childId: string;
  /** Raw JSON arguments, as the tool actor receives them. */
  arguments: string;
  /** The tool's `timeoutMs`, when it has one (counted from the round's opening). */
  timeoutMs?: number;
  /** When an approved call (see `gated.ts`) was approved: its deadline counts from then. */
  startedAt?: number;
  /** The tool's `onTimeout`, when it is `'fail'`. */
  onTimeout?: 'fail';
  result?: CallResult;
}

/** Input of the `runTool` actor. `idempotencyKey` is stable across restarts of the same call. */
export interface ToolRunInput {
  swarmId: string;
  agentId: string;
  toolCallId: string;
  name: string;
  arguments: string;
  idempotencyKey: string;
  /** When the call times out, if the tool has a `timeoutMs`. */
  timeout?: CallTimeout;
}

/** Slot of one regular tool call (swarm and agent machines); the runtime provides the logic. */
export const runToolSlot = fromPromise<CallResult, ToolRunInput>(async () => {
  throw new Error('runTool is provided by the runtime');
});

/** The tool call kind. */
export const toolCall = {
  handoff: false,
  open: ({ id, name, arguments: args, timeoutMs, onTimeout }, turn, index) => ({
    id,
    name,
    kind: 'tool',
    childId: childIdFor('tool', turn, index),
    arguments: args,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(onTimeout === 'fail' ? { onTimeout } : {}),
  }),
  announce(speaker, call, events) {
    events.push(statusUpdate('working', { type: 'tool-call', agent: speaker, toolName: call.name, callId: call.id }), {
      kind: 'internal:tool-start',
      agent: speaker,
      toolName: call.name,
      callId: call.id,
      arguments: call.arguments,
    });
  },
  run: {
    spawn: (call, site) => {
      const input: ToolRunInput = {
        swarmId: site.swarmId,
        agentId: site.speaker,
        toolCallId: call.id,
        name: call.name,
        arguments: call.arguments,
        idempotencyKey: site.key,
      };
      const timeout = timeoutOf(call.startedAt === undefined ? site : { ...site, openedAt: call.startedAt }, call.timeoutMs, call.onTimeout);
      if (timeout) input.timeout = timeout;
      return { src: 'runTool', input };
    },
    done: (speaker, call, result, key) => ({
      kind: 'internal:tool-complete',
      agent: speaker,
      toolName: call.name,
      callId: call.id,
      ok: result.ok,
      content: result.content,
      key,
      ...(result.failsSwarm ? { failsSwarm: true as const } : {}),
      ...(result.files ? { files: result.files } : {}),
    }),
  },
} satisfies CallKind<PlannedToolCall, ToolRoundCall>;
