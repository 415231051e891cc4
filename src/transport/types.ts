/**
 * The transport seam: how runtimes in different processes reach each other — request/reply,
 * publish/subscribe and queue groups over subjects. Two implementations: `localTransport()`
 * (an in-process bus: runtimes of one process, nothing to start) and `natsTransport()` (NATS
 * core through the v3 client). The runtime uses only this interface, so the wire client is
 * named in one file.
 *
 * Subjects are dot-separated tokens (NATS syntax); ids that may hold dots or other characters a
 * token cannot carry go through {@link subjectToken}.
 *
 * @module
 */

/** One message received: its payload, and how to answer it when it was a request. */
export interface TransportMessage {
  readonly subject: string;
  /** The payload as text (JSON, by the runtime's convention). */
  readonly data: string;
  /** The message's headers, when it carries some (a trace context's `traceparent`, `tracestate`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Answers a request; a no-op for a plain publish. Returns false when there was nobody to answer. */
  respond(data: string): boolean;
}

/** A subscription; `unsubscribe` stops delivery at once. */
export interface TransportSubscription {
  unsubscribe(): void;
}

/** Whether the transport can carry messages right now. */
export type TransportStatus = 'connected' | 'disconnected' | 'closed';

/**
 * Why a request got no answer: nobody subscribes to the subject (`no-responders`), nobody
 * answered in time (`timeout`), or the connection is down or closed (`unavailable`).
 */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    message: string,
    readonly code: 'no-responders' | 'timeout' | 'unavailable',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * How a request is sent: its timeout, and headers it carries to the handler (NATS headers; the
 * trace context). A transport that cannot carry headers may drop them: they are never required.
 */
export interface RequestOptions {
  timeoutMs: number;
  headers?: Readonly<Record<string, string>>;
}

/** A message bus between runtimes. */
export interface Transport {
  /**
   * Sends a request and resolves with the first answer. Rejects with a {@link TransportError}:
   * `no-responders` at once when nobody listens, `timeout` after `timeoutMs`, `unavailable`
   * while the connection is down.
   */
  request(subject: string, data: string, options: RequestOptions): Promise<TransportMessage>;
  /**
   * Publishes without waiting (at most once: a publish made while disconnected may be lost, so
   * nothing that must arrive is sent this way alone).
   */
  publish(subject: string, data: string): void;
  /**
   * Delivers every message on `subject` (`*` and `>` wildcards allowed) to `handler`. With
   * `queue`, each message goes to one subscriber of the group: several processes share the load.
   * A handler's rejection is its own business: it never reaches the transport.
   */
  subscribe(subject: string, handler: (message: TransportMessage) => void | Promise<void>, options?: { queue?: string }): TransportSubscription;
  /** Resolves once everything published so far has reached the server (a no-op in process). */
  flush(): Promise<void>;
  /** The connection's state now. */
  status(): TransportStatus;
  /**
   * Calls `listener` at each change of the connection's state (a drop, a reconnection, the
   * close), for logs and metrics; returns the function that stops the calls. Optional: a
   * transport without it (in process) never changes state.
   */
  watchStatus?(listener: (status: TransportStatus) => void): () => void;
  /** Closes the connection (a transport given to a runtime is closed by its owner, not the runtime). */
  close(): Promise<void>;
}

/**
 * A subject token for any id: ids may hold `.`, `*`, `>` or other characters a token cannot
 * carry, so they travel base64url-encoded (reversible, and valid in KV keys too).
 */
export function subjectToken(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

/** The id a {@link subjectToken} encodes. */
export function fromSubjectToken(token: string): string {
  return Buffer.from(token, 'base64url').toString('utf8');
}
