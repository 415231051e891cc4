/**
 * A handoff to an agent served by another process over A2A (or to the registry's best agent for
 * a skill, which plans as one): run by a `remoteAgent` child (`actors/remote-agent.ts`),
 * announced by an `agent-handoff` fact, reported by `handoff-result`.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import { handoffResultEvent, statusUpdate } from '../event-builders.js';
import { type CallKind, type CallResult, childIdFor } from './kind.js';

/** A handoff to a remote agent as the judge planned it. */
export interface PlannedRemoteCall {
  id: string;
  name: string;
  kind: 'remote';
  agentId: string;
  url: string;
  request: string;
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
}

/** Slot of a handoff to an agent served by another process over A2A; the runtime provides the logic. */
export const remoteAgentSlot = fromPromise<CallResult, RemoteAgentInput>(async () => {
  throw new Error('remoteAgent is provided by the runtime');
});

/** The remote-agent handoff kind. */
export const remoteCall = {
  handoff: true,
  open: ({ id, name, agentId, url, request }, turn, index) => ({ id, name, kind: 'remote', childId: childIdFor('remote', turn, index), agentId, url, request }),
  announce(speaker, call, events) {
    events.push(statusUpdate('working', { type: 'agent-handoff', from: speaker, to: call.agentId, callId: call.id, request: call.request }));
  },
  run: {
    spawn: (call, site) => ({
      src: 'remoteAgent',
      input: { swarmId: site.swarmId, callId: call.id, agentId: call.agentId, url: call.url, request: call.request, key: site.key } satisfies RemoteAgentInput,
    }),
    done: (speaker, call, result, key) => handoffResultEvent(speaker, call, result.agentId ?? call.agentId, result, key),
  },
} satisfies CallKind<PlannedRemoteCall, RemoteRoundCall>;
