/**
 * The JetStream store while NATS is unreachable (a server restarting, a network cut): which
 * failures may pass once it is back, how reads report them (a `SwarmError` code `unavailable`,
 * within `timeoutMs`), and {@link Outages}, which follows the connection's status and retries
 * writes through an outage for up to `outageMs`. Writes wait where reads fail because the
 * runtime holds a swarm's next step until its commit lands: failing it would fail the swarm.
 *
 * @module
 */
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwarmError } from '../../errors.js';
import { delay } from '../../util/abort.js';

/**
 * Whether NATS is reachable, and retrying writes until it is. `opening` gives the store's
 * connection as it is being set up (undefined when no setup is under way or done): a retry
 * does not wait for a connection that is closed for good.
 */
export class Outages {
  /** False from a `disconnect` status of the connection until the `reconnect` after it. */
  connected = true;
  /** Set when the store begins to close: writes retrying through an outage give up instead of holding it. */
  closing = false;
  /** Called when the connection is back after a `disconnect`. */
  reconnected: (() => void) | undefined;
  private stopStatus: (() => void) | undefined;

  constructor(
    private readonly outageMs: number,
    private readonly opening: () => Promise<{ nc: NatsConnection }> | undefined,
  ) {}

  /** Tracks whether the connection is up, so retries wait for it instead of timing out. */
  follow(nc: NatsConnection): void {
    const it = nc.status();
    this.stopStatus = () => (it as { stop?: () => void }).stop?.();
    void (async () => {
      for await (const s of it) {
        if (s.type === 'disconnect') this.connected = false;
        else if (s.type === 'reconnect') {
          this.connected = true;
          this.reconnected?.();
        }
      }
    })().catch(() => undefined);
  }

  /**
   * Runs `attempt` until it succeeds, waiting out transient failures (connection down, timeouts,
   * JetStream not answering yet after a server restart) up to `outageMs`; then fails with a
   * `SwarmError` code `unavailable` whose message starts with `what`.
   */
  retry<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    // The first attempt without an async frame of its own: it is the one nearly every write
    // makes (every commit goes through here up to three times), the loop below only after a failure.
    const started = Date.now();
    let first: Promise<T>;
    try {
      first = attempt();
    } catch (e) {
      first = Promise.reject(e);
    }
    return first.catch((e: unknown) => this.retryAfter(what, attempt, e, started + this.outageMs));
  }

  /** {@link Outages.retry} after the first attempt failed with `failure`: waits, tries again, up to `deadline`. */
  private async retryAfter<T>(what: string, attempt: () => Promise<T>, failure: unknown, deadline: number): Promise<T> {
    for (let i = 0; ; i++) {
      if (i > 0) {
        try {
          return await attempt();
        } catch (e) {
          failure = e;
        }
      }
      const e = failure;
      // Closing during an outage: one more try, then the commit fails instead of holding close() for minutes.
      if (!isTransient(e) || (this.closing && i > 0)) throw e;
      if (Date.now() >= deadline) {
        throw new SwarmError(`${what}: NATS has been unreachable for ${Math.round(this.outageMs / 1000)} s (${(e as Error).message})`, 'unavailable');
      }
      const r = await this.opening()?.catch(() => undefined);
      while (!this.connected && !this.closing && Date.now() < deadline && !r?.nc.isClosed()) await delay(50);
      await delay(Math.min(1000, 25 * 2 ** Math.min(i, 6)));
    }
  }

  /** Stops following the connection's status (the store is closed). */
  stop(): void {
    this.stopStatus?.();
  }
}

/**
 * Whether a failure may pass once NATS is reachable again (so the operation is retried). A read's
 * consumer that is not found any more is one: the store's consumers are ephemeral, kept in the
 * server's memory, so a server restart in the middle of a read takes its consumer away, and the
 * read made again makes a new one.
 */
export function isTransient(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (e.name === 'ClosedConnectionError') return false;
  if (e instanceof JetStreamApiError) return e.status === 503 || e.code === JetStreamApiCodes.ConsumerNotFound;
  return /Timeout|Request|NoResponders|Connection|JetStreamNotEnabled/.test(e.name) || /disconnect|no responders|timeout|consumer not found/i.test(e.message);
}

/** A compare-and-set that lost: the key's revision is not the expected one. */
export function isWrongSequence(e: unknown): boolean {
  return e instanceof JetStreamApiError && (e.code === JetStreamApiCodes.StreamWrongLastSequence || e.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
}

/** A transient failure of a read, as the error callers see: NATS is unreachable right now. */
export function unavailable(e: unknown): unknown {
  if (!isTransient(e)) return e;
  return new SwarmError(`The JetStream store is unavailable: ${(e as Error).message}`, 'unavailable');
}
