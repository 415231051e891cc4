/**
 * Sessions of the 2025-era MCP leg: an `initialize` opens one, with an `Mcp-Session-Id`; the
 * session's own server (an `McpServer` on the SDK's sessionful
 * `WebStandardStreamableHTTPServerTransport`) then answers every request carrying that id, keeps
 * what the client said at `initialize` (its capabilities: elicitation) and later (its
 * `logging/setLevel`), serves the standalone `GET /mcp` stream (resource updates) and resumes a
 * stream from `Last-Event-ID` (a {@link BoundedEventStore} per session). `DELETE /mcp` ends it.
 *
 * Bounded: at most `maxSessions`; at the bound an `initialize` ends the least recently used
 * session that has no request or stream open (its client gets 404 and initializes again), and
 * is refused with 503 when every session is busy. A session with nothing open for
 * `idleTimeoutMs` ends. An unknown or ended session id answers 404 (JSON-RPC -32001), which
 * tells a client to initialize again, as the spec has it. Closing the handler ends them all.
 *
 * Sessions live in the process that opened them; swarm state does not (it is the runtime's).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { type McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { McpSessionOptions } from '../options.js';
import { BoundedEventStore } from './event-store.js';

/** Default of {@link McpSessionOptions.maxSessions}. */
export const DEFAULT_MAX_SESSIONS = 1000;
/** Default of {@link McpSessionOptions.idleTimeoutMs}. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
/** The reconnection delay suggested to clients in the streams' priming events (SSE `retry`). */
const RETRY_MS = 1000;

/** A session's server, and what to stop when the session ends (its subscriptions). */
export interface SessionServer {
  server: McpServer;
  end(): void;
}

interface Session {
  id?: string;
  transport: WebStandardStreamableHTTPServerTransport;
  served: SessionServer;
  lastSeen: number;
  /** Requests and streams of the session being answered: it is not idle while one is. */
  open: number;
  ended: boolean;
}

/** The sessions of one MCP endpoint (see the module doc). */
export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly max: number;
  private readonly idleMs: number;
  /** Initializes under way, counted against the bound before their session exists. */
  private opening = 0;
  private closed = false;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly factory: () => SessionServer,
    private readonly options: McpSessionOptions & { maxRequestBodySize: number },
  ) {
    this.max = Math.max(1, options.maxSessions ?? DEFAULT_MAX_SESSIONS);
    this.idleMs = Math.max(1, options.idleTimeoutMs ?? DEFAULT_SESSION_IDLE_MS);
    // A quarter of the timeout, so a session ends at most 25 % late; at most once a minute.
    this.sweeper = setInterval(() => this.sweep(), Math.min(Math.max(this.idleMs / 4, 10), 60_000));
    this.sweeper.unref();
  }

  /** Sessions held now. */
  get size(): number {
    return this.sessions.size;
  }

  /**
   * Answers a request carrying `Mcp-Session-Id` (404 when no such session), or an `initialize`
   * without it, which opens a session.
   */
  async fetch(request: Request): Promise<Response> {
    const id = request.headers.get('mcp-session-id');
    if (id === null) return this.open(request);
    const session = this.sessions.get(id);
    if (!session) return jsonRpcError(404, -32001, 'Session not found');
    session.lastSeen = Date.now();
    return session.transport.handleRequest(request);
  }

  /**
   * Marks the session `id` busy until the returned function is called (when the HTTP exchange
   * closes: a `GET` stream stays open for long), so it is neither idle nor evicted meanwhile.
   */
  hold(id: string | undefined): () => void {
    const session = id === undefined ? undefined : this.sessions.get(id);
    if (!session) return () => undefined;
    session.open++;
    session.lastSeen = Date.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      session.open--;
      session.lastSeen = Date.now();
    };
  }

  /** Ends every session (their streams close) and stops the idle sweep. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => this.end(s)));
  }

  private async open(request: Request): Promise<Response> {
    if (this.closed) return jsonRpcError(503, -32000, 'The MCP endpoint is closing');
    if (this.sessions.size + this.opening >= this.max && !this.evictOne()) {
      return jsonRpcError(503, -32000, `Too many MCP sessions (${this.max}), all of them busy: try again later`);
    }
    this.opening++;
    let session: Session | undefined;
    try {
      const served = this.factory();
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new BoundedEventStore(),
        retryInterval: RETRY_MS,
        maxRequestBodySize: this.options.maxRequestBodySize,
        onsessioninitialized: (id) => {
          session!.id = id;
          this.sessions.set(id, session!);
        },
        // DELETE /mcp: the transport closes itself after this.
        onsessionclosed: () => void this.end(session!),
      });
      session = { transport, served, lastSeen: Date.now(), open: 0, ended: false };
      await served.server.connect(transport);
      const response = await transport.handleRequest(request);
      // A refused initialize (a second one in a batch, a bad body) opened nothing.
      if (session.id === undefined) await this.end(session);
      return response;
    } catch (e) {
      if (session) await this.end(session);
      throw e;
    } finally {
      this.opening--;
    }
  }

  /** Ends the least recently used session with nothing open; false when all are busy. */
  private evictOne(): boolean {
    let oldest: Session | undefined;
    for (const s of this.sessions.values()) if (s.open === 0 && (!oldest || s.lastSeen < oldest.lastSeen)) oldest = s;
    if (!oldest) return false;
    void this.end(oldest);
    return true;
  }

  private sweep(): void {
    const now = Date.now();
    for (const s of this.sessions.values()) if (s.open === 0 && now - s.lastSeen >= this.idleMs) void this.end(s);
  }

  private async end(session: Session): Promise<void> {
    if (session.ended) return;
    session.ended = true;
    if (session.id !== undefined) this.sessions.delete(session.id);
    session.served.end();
    // Closes the transport too: its open streams end, and later requests with its id get 404.
    await session.served.server.close().catch(() => undefined);
  }
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });
}
