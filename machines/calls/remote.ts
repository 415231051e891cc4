/**
 * A handoff to an agent served by another process over A2A (or to the registry's best agent for
 * a skill, which plans as one): run by a `remoteAgent` child (`actors/remote-agent.ts`),
 * announced by an `agent-handoff` fact, reported by `handoff-result`.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import { handoffResultEvent, statusUpdate } from '../event-builders.js';
import { type CallKind, type CallResult, type CallTimeout, childIdFor, timeoutOf } from './kind.js';

/** A handoff to a remote agent as the judge planned it. */
export interface PlannedRemoteCall {
  id: string;
  name: string;
  kind: 'remote';
  agentId: string;
  url: string;
  request: string;
  /** The handoff's `timeoutMs`, when it has one. */
  timeoutMs?: number;
  /** The handoff's `onTimeout`, when it is `'fail'` (the timeout fails the swarm). */
  onTimeout?: 'fail';
}

/** A handoff to an agent served over A2A in a round, run by a `remoteAgent` child. */
export interface RemoteRoundCall {
  kind: 'remote';
  id: string;
  name: string;
  childId: string;
  agentId: string;
  /** Where the remote agent's card is. */
  url: string;
  request: string;
  /** Counted from the round's opening; past it the A2A task is canceled and the handoff fails. */
  timeoutMs?: number;
  /** The handoff's `onTimeout`, when it is `'fail'` (the timeout fails the swarm). */
  onTimeout?: 'fail';
  result?: CallResult;
}

/** Input of the `remoteAgent` actor: one request to a remote A2A agent. */
export interface RemoteAgentInput {
  swarmId: string;
  callId: string;
  agentId: string;
  url: string;
  request: string;
  /** Stable across restarts: usable as the A2A message id. */
  key: string;
  /** When the handoff times out, if it has a `timeoutMs`. */
  timeout?: CallTimeout;
}

/** Slot of a handoff to an agent served by another process over A2A; the runtime provides the logic. */
export const remoteAgentSlot = fromPromise<CallResult, RemoteAgentInput>(async () => {
  throw new Error('remoteAgent is provided by the runtime');
});

/** The remote-agent handoff kind. */
export const remoteCall = {
  handoff: true,
  open: ({ id, name, agentId, url, request, timeoutMs, onTimeout }, turn, index) => ({
    id,
    name,
    kind: 'remote',
    childId: childIdFor('remote', turn, index),
    agentId,
    url,
    request,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(onTimeout === 'fail' ? { onTimeout } : {}),
  }),
  announce(speaker, call, events) {
    events.push(statusUpdate('working', { type: 'agent-handoff', from: speaker, to: call.agentId, callId: call.id, request: call.request }));
  },
  run: {
    spawn: (call, site) => {
      const input: RemoteAgentInput = { swarmId: site.swarmId, callId: call.id, agentId: call.agentId, url: call.url, request: call.request, key: site.key };
      const timeout = timeoutOf(site, call.timeoutMs, call.onTimeout);
      if (timeout) input.timeout = timeout;
      return { src: 'remoteAgent', input };
    },
    done: (speaker, call, result, key) => handoffResultEvent(speaker, call, result.agentId ?? call.agentId, result, key),
  },
} satisfies CallKind<PlannedRemoteCall, RemoteRoundCall>;
