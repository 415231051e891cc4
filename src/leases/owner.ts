/**
 * A runtime's identity in a shared store: its owner id and the lease its writes hold. Swarms,
 * teams and the agent registry's record all commit under it.
 *
 * @module
 */
import type { Lease } from '../store/types.js';
import { HOST } from './holder.js';

/** This runtime as the holder of leases. */
export class Owner {
  constructor(
    /** The owner id written into every lease (see `createRuntime({ owner })`). */
    readonly id: string,
    /** How long a lease lasts without renewal. */
    readonly leaseMs: number,
  ) {}

  /** The lease a commit made now holds: it names this process, so a restart on this host can take it over. */
  lease(): Lease {
    return { owner: this.id, until: Date.now() + this.leaseMs, host: HOST, pid: process.pid };
  }
}
