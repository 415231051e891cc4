/**
 * A handoff to a child swarm: run by a `childSwarm` child (`actors/child-swarm.ts`), which starts
 * (or re-attaches to) a swarm of its own with a new session; announced by a `swarm-handoff`
 * fact, reported by `handoff-result` naming the child.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import { handoffResultEvent, statusUpdate } from '../event-builders.js';
import { type CallKind, type CallResult, type CallTimeout, childIdFor, timeoutOf } from './kind.js';

/**
 * How a parent's model may extend a customizable child swarm for one run. It only ever adds
 * to the child's own configuration.
 */
export interface Customization {
  additional_instructions?: string;
  additional_agents?: string[];
  additional_tools?: string[];
  max_turns_override?: number;
}

/** A handoff to a child swarm as the judge planned it: the child's input, checked. */
export interface PlannedSwarmCall {
  id: string;
  name: string;
  kind: 'swarm';
  definitionId: string;
  input: unknown;
  customization?: Customization;
  /** The handoff's (or the child definition's) `timeoutMs`, when it has one. */
  timeoutMs?: number;
  /** The handoff's `onTimeout`, when it is `'fail'` (the timeout fails the swarm). */
  onTimeout?: 'fail';
}

/** A handoff to a child swarm in a round, run by a `childSwarm` child. */
export interface SwarmRoundCall {
  kind: 'swarm';
  id: string;
  name: string;
  childId: string;
  definitionId: string;
  /** The child swarm's id, derived from the parent's snapshot (see {@link swarmCall}'s `open`). */
  childSwarmId: string;
  input: unknown;
  customization?: Customization;
  /** Counted from the round's opening; past it the child is stopped and the handoff fails. */
  timeoutMs?: number;
  /** The handoff's `onTimeout`, when it is `'fail'` (the timeout fails the swarm). */
  onTimeout?: 'fail';
  result?: CallResult;
}

/** Input of the `childSwarm` actor: everything needed to start (or re-attach to) the child. */
export interface ChildSwarmInput {
  parentId: string;
  callId: string;
  /** The call's idempotency key (stable across restarts). */
  key: string;
  childSwarmId: string;
  definitionId: string;
  input: unknown;
  customization?: Customization;
  /** When the handoff times out, if it has a `timeoutMs`. */
  timeout?: CallTimeout;
}

/**
 * Slot of a handoff to a child swarm. A child swarm is a swarm of its own (own id, store record,
 * events, client); this actor starts or re-attaches to it and resolves with its outcome as the
 * handoff's result. The runtime provides the logic.
 */
export const childSwarmSlot = fromPromise<CallResult, ChildSwarmInput>(async () => {
  throw new Error('childSwarm is provided by the runtime');
});

/** The child-swarm handoff kind. */
export const swarmCall = {
  handoff: true,
  open: (call, turn, index, swarmId) => ({
    id: call.id,
    name: call.name,
    kind: 'swarm',
    childId: childIdFor('swarm', turn, index),
    definitionId: call.definitionId,
    // Derived from the parent's snapshot, so a restored parent finds the same child.
    childSwarmId: `${swarmId}:t${turn}:${index}`,
    input: call.input,
    ...(call.customization ? { customization: call.customization } : {}),
    ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}),
    ...(call.onTimeout === 'fail' ? { onTimeout: call.onTimeout } : {}),
  }),
  announce(speaker, call, events) {
    events.push(
      statusUpdate('working', {
        type: 'swarm-handoff',
        from: speaker,
        to: call.definitionId,
        childSwarmId: call.childSwarmId,
        callId: call.id,
        input: call.input,
      }),
    );
  },
  run: {
    spawn: (call, site) => {
      const input: ChildSwarmInput = {
        parentId: site.swarmId,
        callId: call.id,
        key: site.key,
        childSwarmId: call.childSwarmId,
        definitionId: call.definitionId,
        input: call.input,
        ...(call.customization ? { customization: call.customization } : {}),
      };
      const timeout = timeoutOf(site, call.timeoutMs, call.onTimeout);
      if (timeout) input.timeout = timeout;
      return { src: 'childSwarm', input };
    },
    done: (speaker, call, result, key) => handoffResultEvent(speaker, call, call.definitionId, result, key),
  },
} satisfies CallKind<PlannedSwarmCall, SwarmRoundCall>;
