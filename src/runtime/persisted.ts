/**
 * A swarm actor's persisted snapshot, built without walking its conversations.
 *
 * XState's `getPersistedSnapshot()` of a machine walks its whole context (and each child
 * machine's) looking for actor references to replace: for a swarm that is every message of
 * every conversation, at every committed step, and the walk always returned the context
 * itself, because the swarm and agent machines never keep an actor in their context (their
 * children are spawned or invoked, and live in `snapshot.children`). {@link persistedSnapshot}
 * builds the same object without that walk: the same fields, the context as it is, each child
 * persisted the way XState persists it. test/machines/swarm-machine.model.test.ts checks it equals
 * XState's own in every state and transition the model-based paths reach.
 *
 * @module
 */
import { type AnyActorRef, type AnyMachineSnapshot, StateMachine } from 'xstate';

/** What XState's persisted machine snapshot holds (a JSON-able object; see {@link persistedSnapshot}). */
export interface PersistedMachineSnapshot {
  status: AnyMachineSnapshot['status'];
  output: unknown;
  error: unknown;
  value: AnyMachineSnapshot['value'];
  historyValue: Record<string, { id: string }[]>;
  context: unknown;
  children: Record<string, { snapshot: unknown; src: string; systemId: string | undefined; syncSnapshot: boolean | undefined }>;
}

/** An actor as XState's persistence reads it: its logic, `src`, `systemId` and snapshot sync flag. */
interface ChildActor {
  logic: unknown;
  src: unknown;
  systemId: string | undefined;
  _syncSnapshot?: boolean;
  getSnapshot(): unknown;
  getPersistedSnapshot(): unknown;
}

/**
 * `actor.getPersistedSnapshot()` of a swarm actor (or any machine actor whose contexts hold no
 * actor references), equal to XState's, without the walk over its contexts (see the module
 * comment). Children that are machines are persisted the same way; other children (promise
 * and callback actors) by their own logic.
 */
export function persistedSnapshot(actor: AnyActorRef): PersistedMachineSnapshot {
  return persistMachine(actor.getSnapshot() as AnyMachineSnapshot);
}

function persistMachine(snapshot: AnyMachineSnapshot): PersistedMachineSnapshot {
  const children: PersistedMachineSnapshot['children'] = {};
  const refs = snapshot.children as Record<string, ChildActor | undefined>;
  for (const id in refs) {
    const child = refs[id]!;
    if (typeof child.src !== 'string') throw new Error('An inline child actor cannot be persisted.');
    children[id] = {
      snapshot: child.logic instanceof StateMachine ? persistMachine(child.getSnapshot() as AnyMachineSnapshot) : child.getPersistedSnapshot(),
      src: child.src,
      systemId: child.systemId,
      syncSnapshot: child._syncSnapshot,
    };
  }
  return {
    status: snapshot.status,
    output: snapshot.output,
    error: snapshot.error,
    value: snapshot.value,
    historyValue: persistHistory(snapshot.historyValue as Record<string, readonly { id: string }[]> | undefined),
    context: snapshot.context,
    children,
  };
}

/** A history value as XState persists it: the ids of the remembered state nodes. */
function persistHistory(historyValue: Record<string, readonly { id: string }[]> | undefined): Record<string, { id: string }[]> {
  const out: Record<string, { id: string }[]> = {};
  if (!historyValue) return out;
  for (const key in historyValue) {
    const nodes = historyValue[key];
    if (Array.isArray(nodes)) out[key] = nodes.map((n: { id: string }) => ({ id: n.id }));
  }
  return out;
}
