/**
 * Who holds a lease: this process's identity, and whether a holder seen in the store is a
 * process of this host that has died (then its swarms need not wait for its lease to expire).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Lease } from '../store/types.js';

/**
 * This host as a lease names it: the host name plus, on Linux, the process-id namespace, since
 * containers sharing a host name (host networking) do not share process ids.
 */
export const HOST: string = hostKey();

function hostKey(): string {
  try {
    return `${hostname()}#${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return hostname();
  }
}

/**
 * A default owner id: readable in listings (host and pid) and unique per runtime, so that two
 * live processes on one store never share an owner and both write.
 */
export function defaultOwner(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * Whether a lease's holder is known to be dead: a process of this host (same `HOST`), not this
 * one, that no longer exists (or is a zombie). A holder on another host, of unknown pid, or
 * alive (two processes on one store on purpose) is not: its lease must be waited out. A reused
 * pid only makes a dead holder look alive, which is the safe mistake.
 */
export function holderIsGone(lease: Lease): boolean {
  if (lease.host !== HOST || !lease.pid || lease.pid === process.pid) return false;
  try {
    process.kill(lease.pid, 0);
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return isZombie(lease.pid);
}

/** A killed process its parent has not reaped yet still answers signal 0. */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) state …`: comm may contain spaces and parentheses, the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

/**
 * Another owner's live lease, as `owner` sees it at `now`: undefined when nobody else holds the
 * swarm; else that lease, with `takeover` naming its owner when the holder is a dead process of
 * this host (a claim then takes it from that very owner instead of waiting the lease out).
 */
export function heldByOther(lease: Lease | undefined, owner: string, now: number): { lease: Lease; takeover: string | undefined } | undefined {
  if (!lease || lease.owner === owner || lease.until <= now) return undefined;
  return { lease, takeover: holderIsGone(lease) ? lease.owner : undefined };
}
