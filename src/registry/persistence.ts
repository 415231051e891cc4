/**
 * A runtime's agent registry kept in the runtime's store (`createRuntime({ registry })`): its
 * {@link AgentRegistry.snapshot} is one record, `swarmId` = `xswarm.registry.<registry id>`,
 * `definitionId` = `xswarm.registry` (no swarm definition can have it, so the runtime never
 * adopts the record as a swarm), written after each change by the same journal as a team's
 * record (`store/records.ts`), under the runtime's lease.
 *
 * At `runtime.start()` the stored snapshot is restored into the registry (agents and tasks it
 * does not have yet; unfinished tasks run again with the same message ids), then the registry
 * is written as it is. The registry's id must therefore be the same across restarts
 * (`createAgentRegistry({ id })`); one live runtime keeps a given registry at a time. A runtime
 * whose write of the record is refused (another runtime took the record: this one's lease ran
 * out) closes the registry with `TeamError('registry-in-use')` (its
 * {@link AgentRegistry.closeReason}, and what its calls throw from then on): its unfinished tasks
 * are left to the runtime that holds the record, so no task runs in both. A write the store could
 * not make because NATS is unreachable is no such refusal: the registry and its tasks go on, and
 * the write is made (or found made) once the store answers again.
 *
 * @module
 */
import { heldByOther } from '../leases/holder.js';
import { REGISTRY_RECORD_DEFINITION } from '../define/ids.js';
import { RecordJournal, type RecordShape, type RecordStorePort } from '../store/records.js';
import { TeamError } from '../errors.js';
import type { AgentRegistry } from './registry.js';
import type { RegistrySnapshot } from './types.js';

/** The store id of the record of the registry with id `registryId`. */
export function registryRecordId(registryId: string): string {
  return `${REGISTRY_RECORD_DEFINITION}.${registryId}`;
}

/** A registry's record reads as a swarm that runs as long as the registry is kept. */
const SHAPE: RecordShape<RegistrySnapshot> = {
  definitionId: REGISTRY_RECORD_DEFINITION,
  machineVersion: 1,
  status: () => 'running',
  result: () => ({ status: 'running', currentTurn: 0, maxTurns: 0 }),
};

/** Keeps one registry in one runtime's store (see the module doc). */
export class RegistryRecord {
  #journal: RecordJournal<RegistrySnapshot> | undefined;
  #unsubscribe: (() => void) | undefined;
  #renewal: ReturnType<typeof setInterval> | undefined;
  /** The start under way or done, shared by concurrent calls (one journal, one renewal timer). */
  #starting: Promise<void> | undefined;

  constructor(
    private readonly registry: AgentRegistry,
    private readonly port: RecordStorePort,
  ) {}

  /**
   * Restores the stored snapshot, if any, and writes the registry after every change from now
   * on. Rejects with `TeamError('registry-in-use')` when another live runtime keeps the record
   * (a later call tries again). Concurrent calls share one start.
   */
  start(): Promise<void> {
    this.#starting ??= this.#start().catch((e: unknown) => {
      this.#starting = undefined;
      throw e;
    });
    return this.#starting;
  }

  async #start(): Promise<void> {
    const id = registryRecordId(this.registry.id);
    const { store } = this.port;
    const record = await store.load(id);
    let from = { revision: 0, seq: 0 };
    if (record) {
      const lease = this.port.lease();
      const takeover = heldByOther(record.lease, lease.owner, Date.now())?.takeover;
      if (!(await store.claim(id, lease, Date.now(), takeover))) {
        throw new TeamError(`The agent registry "${this.registry.id}" is kept by another live runtime (${record.lease?.owner ?? 'unknown'})`, 'registry-in-use');
      }
      this.registry.restore(record.snapshot as RegistrySnapshot);
      from = { revision: record.revision, seq: record.lastSeq };
    }
    const journal = new RecordJournal<RegistrySnapshot>(
      this.port,
      id,
      SHAPE,
      () => ({ snapshot: this.registry.snapshot(), events: [] }),
      (reason) => this.#lose(reason),
      from,
      // An outage of the store is not a lost record: the registry goes on (its tasks with it) and
      // the record is written once the store answers, so no task is sent again after a restart
      // for want of a write NATS could not take.
      { waitForStore: true },
    );
    this.#journal = journal;
    this.#unsubscribe = this.registry.onChange(() => journal.changed());
    // What happened before start (registrations, dispatches) is written now.
    journal.changed();
    await journal.flush();
    // The record is kept as long as the runtime runs, changed or not: its lease is renewed
    // every third of a lease, as the runtime's swarms' and teams' are.
    const first = this.port.lease();
    this.#renewal = setInterval(
      () => {
        const lease = this.port.lease();
        void store.renew(lease.owner, [id], lease.until).catch(() => undefined);
      },
      Math.max(20, (first.until - Date.now()) / 3),
    );
    this.#renewal.unref?.();
  }

  /**
   * A write was refused for good: another runtime took the record (or the store refuses it).
   * Running on would run the same tasks in two runtimes, so the registry closes, with a reason
   * its user sees.
   */
  #lose(reason: string): void {
    clearInterval(this.#renewal);
    const error = new TeamError(`The agent registry "${this.registry.id}" was closed: its record could not be written (${reason})`, 'registry-in-use');
    void this.registry.close(error);
  }

  /**
   * Stops writing once what is scheduled is written (the registry as it is at this call), and
   * releases the record's lease.
   */
  async close(): Promise<void> {
    // A start under way finishes first, so what it sets up is undone here.
    await this.#starting?.catch(() => undefined);
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    clearInterval(this.#renewal);
    if (!this.#journal) return;
    // The write still to come takes the registry now, as a team's does at its close: the
    // registry's own close leaves its tasks as they are (nothing it would write differs), but
    // what the registry does after its record let go of its lease is not this record's.
    this.#journal.seal();
    await this.#journal.flush();
    await this.port.store.release(this.port.lease().owner, [registryRecordId(this.registry.id)]).catch(() => undefined);
  }
}
