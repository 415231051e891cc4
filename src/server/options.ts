/**
 * The types of `serve()`'s options and handle, apart from the servers: the core entry point
 * exports them (`import type { ServeOptions } from 'xswarm'`), so they name no type of the
 * optional server packages (express, ws, the A2A and MCP SDKs) nor of `node:http`, and the
 * core's declarations type-check in a project that does not install those packages.
 *
 * @module
 */
import type { AgentRegistry } from '../registry/registry.js';
import type { A2APushInbox } from '../a2a/push-inbox.js';

/** Options of `serve(runtime, options)` (`xswarm/server`, or `xswarm` loading it on demand). */
export interface ServeOptions {
  /** Default 0: any free port. */
  port?: number;
  /**
   * Default `127.0.0.1`. A non-loopback address (`0.0.0.0`, a LAN address) is refused without
   * a `token` unless `insecureNoToken` is set.
   */
  host?: string;
  /**
   * Bearer token required on every endpoint except agent cards, `/health` and the inspector
   * page's files (`/inspector/…`; its API needs it). WebSocket upgrades may carry it as the
   * subprotocol `xswarm.bearer.<base64url(token)>` instead of the `Authorization` header.
   */
  token?: string;
  /**
   * Serve a non-loopback `host` without a token: anyone who can reach the address can drive
   * every swarm. A warning is printed to stderr.
   */
  insecureNoToken?: boolean;
  /**
   * Browser origins allowed besides the server's own, e.g. `['http://localhost:5173']`.
   * Requests with any other `Origin` header are refused (403); requests without one pass.
   */
  allowedOrigins?: string[];
  /**
   * `Host` names accepted besides the loopback ones (port ignored). On a loopback bind any
   * other `Host` is refused (403, DNS rebinding); on a non-loopback bind any `Host` is
   * accepted unless this is set.
   */
  allowedHosts?: string[];
  /** Largest request body, default 1 MiB. */
  maxBodyBytes?: number;
  /** Interval of SSE keep-alive comments, default 15 000 ms. */
  keepAliveMs?: number;
  /** Limits of WebSocket event subscribers (buffer size, stall timeout, poll interval). */
  subscribers?: EventSocketOptions;
  /**
   * An agent registry: its tools (`create_task`, `list_agents`, `agent_message`,
   * `get_task_status`, `cancel_task`) are added to the MCP server.
   */
  registry?: AgentRegistry;
  /**
   * Serve `GET /metrics` (the runtime's Prometheus metrics, `createRuntime({ metrics })`)
   * without the bearer token, for a scraper that cannot send one. Default false: it needs the
   * token like every other endpoint.
   */
  publicMetrics?: boolean;
  /**
   * Hosts A2A push-notification webhooks may be on although they are loopback, link-local or
   * private (refused otherwise, against server-side request forgery): `host`, `host:port`,
   * `[v6]` or `*`, e.g. `['127.0.0.1']` for a receiver on this machine. See docs/a2a-push.md.
   */
  allowedPushHosts?: string[];
  /**
   * The inbox of the runtime's remote calls made with push (`a2aRemoteAgents({ pushInbox })`):
   * served at `POST /a2a-push/<id>` (each call's id and HMAC signature authenticate it, not the
   * token). See docs/a2a-push.md.
   */
  pushInbox?: A2APushInbox;
  /**
   * Bounds of the MCP sessions a 2025-era client gets at `initialize` (`Mcp-Session-Id`; the
   * 2026-07-28 leg has none). See docs/mcp.md, "Sessions".
   */
  mcpSessions?: McpSessionOptions;
  /** Retries of A2A push deliveries to a receiver that is down (capped exponential backoff). */
  pushRetry?: {
    /** The wait after the first failed attempt, doubled after each further one. Default 1000 ms. */
    initialDelayMs?: number;
    /** The longest wait between attempts. Default 60 000 ms. */
    maxDelayMs?: number;
    /** How long one attempt waits for the receiver's answer. Default 10 000 ms. */
    timeoutMs?: number;
  };
  /**
   * The delivery lease of each A2A push webhook, for several servers on one store (one SQLite
   * file, one NATS): one server delivers a webhook at a time, renewing its lease every third of
   * `ttlMs`; when it dies another takes over once the lease expired (checked every `scanMs`).
   * Defaults: `ttlMs` 30 000, `scanMs` a third of it. See docs/a2a-push.md.
   */
  pushLease?: {
    ttlMs?: number;
    scanMs?: number;
  };
}

/** Bounds of the 2025-era MCP sessions (`serve(runtime, { mcpSessions })`); unset ones take the default given with each. */
export interface McpSessionOptions {
  /**
   * Sessions held at once. Default 1000. At the bound an `initialize` ends the least recently
   * used session with no request or stream open, or is refused (503) when all are busy.
   */
  maxSessions?: number;
  /** A session with no request or stream open for this long ends (its id then answers 404). Default 30 minutes. */
  idleTimeoutMs?: number;
}

/** A running server. */
export interface SwarmServer {
  /** Base URL, e.g. `http://127.0.0.1:4000`. */
  url: string;
  close(): Promise<void>;
}

/**
 * Options of the WebSocket subscribers at `/events` (`serve(runtime, { subscribers })`); unset
 * ones take the default given with each.
 */
export interface EventSocketOptions {
  /** Frames a subscriber may have unflushed before it overflows (batched frames, `batch=1`: the events in them). Default 1000. */
  maxFrames?: number;
  /** Bytes a subscriber may have unflushed before it overflows. Default 4 MiB. */
  maxBytes?: number;
  /** How long the replay waits for a subscriber that takes nothing. Default 30 000 ms. */
  stallMs?: number;
  /** How often every-swarm mode looks for swarms that started. Default 250 ms. */
  pollMs?: number;
}
