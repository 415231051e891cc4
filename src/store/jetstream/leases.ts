/**
 * Leases on JetStream: claiming a swarm, renewing and releasing an owner's leases. A lease lives
 * in the swarm's KV value beside its record, so each of these is a compare-and-set write of the
 * key (see `./writer.ts`) that keeps the record as it is: a runtime that took the swarm
 * meanwhile makes the write decide again on what it wrote, and a claim then fails.
 *
 * @module
 */
import { isFinal } from '../result.js';
import type { Lease } from '../types.js';
import { unavailable } from './outage.js';
import type { Setup } from './setup.js';
import type { KeyWriter } from './writer.js';

/** Claims, renews and releases leases (see `SwarmStore.claim`, `renew`, `release`). */
export class Leases {
  constructor(
    private readonly setup: Setup,
    private readonly writer: KeyWriter,
  ) {}

  /**
   * Takes `lease` on an unfinished swarm nobody else holds at `now` (or whose holder is
   * `takeover`, known dead); resolves true when granted.
   */
  claim(swarmId: string, lease: Lease, now: number, takeover?: string): Promise<boolean> {
    return this.writer.track(
      (async () => {
        const r = await this.setup.ready().catch((e: unknown) => {
          throw unavailable(e);
        });
        let granted = false;
        await this.writer
          .locked(swarmId, () =>
            this.writer.update(r, swarmId, `Claim of swarm "${swarmId}"`, (cur) => {
              granted = false;
              const value = cur.decoded?.value;
              if (!value || isFinal(value.record.status)) return undefined;
              const holder = value.lease;
              if (holder && holder.owner !== lease.owner && holder.owner !== takeover && holder.until > now) return undefined;
              granted = true;
              // Without the outbox: update() publishes it (unless known published) before replacing the value.
              const { w: _w, outbox: _o, ...rest } = value;
              return { ...rest, lease: { ...lease } };
            }),
          )
          .catch((e: unknown) => {
            throw unavailable(e);
          });
        return granted;
      })(),
    );
  }

  /** Extends `owner`'s leases on these swarms to `until`. */
  async renew(owner: string, swarmIds: readonly string[], until: number): Promise<void> {
    await this.rewrite(owner, swarmIds, 'Renewal', (lease) => ({ ...lease, until }));
  }

  /** Gives up `owner`'s leases on these swarms. */
  async release(owner: string, swarmIds: readonly string[]): Promise<void> {
    await this.rewrite(owner, swarmIds, 'Release', () => undefined);
  }

  /** Rewrites the lease of `owner`'s swarms among `swarmIds` (renew, release). */
  private async rewrite(owner: string, swarmIds: readonly string[], what: string, next: (lease: Lease) => Lease | undefined): Promise<void> {
    const r = await this.setup.ready().catch((e: unknown) => {
      throw unavailable(e);
    });
    await Promise.all(
      swarmIds.map((swarmId) =>
        this.writer.track(
          this.writer.locked(swarmId, () =>
            this.writer.update(r, swarmId, `${what} of swarm "${swarmId}"`, (cur) => {
              const value = cur.decoded?.value;
              if (!value?.lease || value.lease.owner !== owner) return undefined;
              // Without the outbox: update() publishes it (unless known published) before replacing the value.
              const { lease: _l, w: _w, outbox: _o, ...rest } = value;
              const lease = next(value.lease);
              return lease ? { ...rest, lease } : rest;
            }),
          ),
        ),
      ),
    ).catch((e: unknown) => {
      throw unavailable(e);
    });
  }
}
