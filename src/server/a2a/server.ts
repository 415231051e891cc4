/**
 * The A2A endpoints of `serve()`: one agent per swarm definition.
 *
 * - `GET /a2a/:definitionId/.well-known/agent-card.json`: the agent card (public; a v0.3 card
 *   for requests without `A2A-Version: 1.0`, the v1.0 card otherwise).
 * - `POST /a2a/:definitionId`: JSON-RPC, v1.0 (`SendMessage`, `SendStreamingMessage`,
 *   `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`) and v0.3 (`message/send`,
 *   `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`).
 *
 * The protocol is the SDK's: its Express `agentCardHandler` and `jsonRpcHandler` (both with
 * `legacyCompat`) run inside our HTTP handler, driving a {@link SwarmRequestHandler} per
 * definition. Around them this module adds what the SDK leaves out: the 1 MiB body limit
 * (413; the body is read here and handed over parsed, so Express's own 100 kB parser never
 * runs), the JSON-RPC parse error for malformed JSON, the checks of `wire.ts` (nesting depth,
 * id and param types) that the SDK lacks, SSE keep-alive comments, stopping a
 * stream's work when its client goes away, and `final: true` on v0.3 input-required updates.
 *
 * v0.3 finality: the SDK's v0.3 translation sets `final` only for terminal states, yet closes
 * the stream at input-required, so a v0.3 client waiting for `final: true` would see the
 * stream end without it. In v0.3, `final` means "the last event of this stream", so an
 * input-required update, after which the stream closes until the client answers, is sent
 * with `final: true`. (v1.0 has no `final`; the stream simply ends.)
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import type { AgentCard } from '@a2a-js/sdk';
import { defaultServerCallContextBuilder, type ServerCallContextBuilder, type User } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { HttpError, readBody, sendJson, type HttpHandler, type ServerContext } from '../../http/http.js';
import { DEFAULT_KEEPALIVE_MS } from '../../http/sse.js';
import { swarmAgentCard } from './card.js';
import { ContextIds, REQUEST_SIGNAL_KEY, SwarmRequestHandler } from './handler.js';
import { keepTraceHeaders } from './trace-context.js';
import { refuseRequest } from './wire.js';
import { PushDelivery, type PushLeaseOptions, type PushRetryOptions } from './push-delivery.js';
import type { AllowedHosts } from '../../a2a/endpoint-policy.js';

const CARD_PATHS = new Set(['/.well-known/agent-card.json', '/.well-known/agent.json']);

/** Options of {@link createA2AHandler}. */
export interface A2AHandlerOptions {
  /** Interval of `: ping` comments on SSE streams (default {@link DEFAULT_KEEPALIVE_MS}). */
  keepAliveMs?: number;
  /** Hosts push-notification webhooks may be on although not public (`serve`'s `allowedPushHosts`; push-policy.ts). */
  allowedPushHosts?: AllowedHosts;
  /** Retries and timeout of push deliveries (`serve`'s `pushRetry`). */
  pushRetry?: PushRetryOptions;
  /** The delivery lease of each webhook (`serve`'s `pushLease`). */
  pushLease?: PushLeaseOptions;
}

/** Creates the A2A handler of a server. */
export function createA2AHandler(ctx: ServerContext, options: A2AHandlerOptions = {}): HttpHandler {
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS;
  const apps = new Map<string, Express>();
  const contexts = new ContextIds();
  // One outbox delivery for the server's every definition; its backlog resumes on first use.
  const push = new PushDelivery(ctx.runtime, {
    ...(options.allowedPushHosts ? { allowedPushHosts: options.allowedPushHosts } : {}),
    ...(options.pushRetry ? { retry: options.pushRetry } : {}),
    ...(options.pushLease ? { lease: options.pushLease } : {}),
    ...(ctx.runtime.logger ? { logger: ctx.runtime.logger } : {}),
  });
  // The SDK builds a call context from the request headers only; this is how a request's
  // "client went away" signal reaches the request handler.
  const signals = new WeakMap<object, AbortSignal>();
  const contextBuilder: ServerCallContextBuilder = (options) => {
    const context = defaultServerCallContextBuilder(options);
    const signal = signals.get(options.headers);
    if (signal) context.state.set(REQUEST_SIGNAL_KEY, signal);
    keepTraceHeaders(context, options.headers as Readonly<Record<string, unknown>>);
    return context;
  };
  // Requests reach the JSON-RPC endpoint only after the server checked the bearer token.
  const user: User = { isAuthenticated: true, userName: 'bearer-token-holder' };
  const userBuilder = ctx.token ? async () => user : UserBuilder.noAuthentication;

  const appFor = (definitionId: string): Express | undefined => {
    const existing = apps.get(definitionId);
    if (existing) return existing;
    if (!ctx.runtime.definition(definitionId)) return undefined;
    let card: AgentCard | undefined;
    const requestHandler = new SwarmRequestHandler({
      runtime: ctx.runtime,
      definitionId,
      // Built on first use: the base URL is known only once the server listens.
      card: () => (card ??= swarmAgentCard(ctx.runtime, definitionId, ctx.baseUrl(), ctx.token)!),
      contexts,
      push,
    });
    const app = express();
    app.disable('x-powered-by');
    app.use('/card', agentCardHandler({ agentCardProvider: requestHandler, cache: { maxAge: 60 }, legacyCompat: { enabled: true } }));
    app.use('/rpc', jsonRpcHandler({ requestHandler, userBuilder, legacyCompat: { enabled: true }, contextBuilder }));
    apps.set(definitionId, app);
    return app;
  };

  // A restarted server delivers the backlog of its store's outbox without waiting for a request.
  push.resume();
  return {
    close: () => push.close(),
    async handle(req, res, url) {
      const match = /^\/a2a\/([^/]+)(\/.*)?$/.exec(url.pathname);
      if (!match) return false;
      const rest = match[2] ?? '';
      const isCard = CARD_PATHS.has(rest);
      if (!isCard && rest !== '' && rest !== '/') return false;
      let definitionId: string;
      try {
        definitionId = decodeURIComponent(match[1]!);
      } catch {
        throw new HttpError(400, 'Malformed definition id in the path');
      }
      const app = appFor(definitionId);
      if (!app) throw new HttpError(404, `Unknown swarm definition "${definitionId}"`);

      if (isCard) {
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.setHeader('allow', 'GET, HEAD');
          throw new HttpError(405, `${req.method} is not allowed on an agent card`);
        }
        req.url = `/card${url.search}`;
        return dispatch(app, req, res);
      }

      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        throw new HttpError(405, `The A2A endpoint takes JSON-RPC over POST, not ${req.method}`);
      }
      // Our limit (413 past it), not Express's: the SDK's router would parse with a 100 kB one.
      const raw = (await readBody(req, ctx.maxBodyBytes)).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        // What the SDK answers for bad JSON (JSON-RPC errors travel with HTTP 200).
        sendJson(res, 200, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Invalid JSON payload.' } });
        return true;
      }
      // What the SDK would answer with an internal error (or a crash): see wire.ts.
      const refused = refuseRequest(body, speaksV03(req));
      if (refused) {
        sendJson(res, 200, refused);
        return true;
      }
      // body-parser skips a request whose stream was consumed and leaves `body` as set here.
      (req as IncomingMessage & { body?: unknown }).body = body;
      req.url = '/rpc';
      const gone = new AbortController();
      res.once('close', () => gone.abort());
      signals.set(req.headers, gone.signal);
      decorateEventStream(req, res, keepAliveMs);
      return dispatch(app, req, res);
    },
  };
}

/** Runs an Express app on a request and resolves once the response is over. */
function dispatch(app: Express, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  return new Promise((resolve, reject) => {
    res.once('close', () => resolve(true));
    // An Express app is a (req, res, next) function; `next` runs when no route answered.
    (app as unknown as (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void)(req, res, (err) =>
      reject(err ?? new HttpError(404, `No A2A endpoint at ${req.method} ${req.url}`)),
    );
  });
}

/**
 * Adds to SSE responses what the SDK's stream writer lacks: periodic `: ping` comments, and
 * for v0.3 clients, `final: true` on an input-required status update (see the module notes).
 */
function decorateEventStream(req: IncomingMessage, res: ServerResponse, keepAliveMs: number): void {
  const legacy = speaksV03(req);
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  let keepAlive: NodeJS.Timeout | undefined;
  res.write = ((chunk: unknown, ...rest: unknown[]): boolean => {
    if (!keepAlive && String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) {
      keepAlive = setInterval(() => {
        if (!res.writableEnded && !res.destroyed) write(': ping\n\n');
      }, keepAliveMs);
      keepAlive.unref();
    }
    return write(legacy && typeof chunk === 'string' ? finalOnInputRequired(chunk) : chunk, ...rest);
  }) as typeof res.write;
  res.once('close', () => clearInterval(keepAlive));
}

/** The SDK's own routing rule: no version header (or 0.3) goes to the v0.3 compat layer. */
function speaksV03(req: IncomingMessage): boolean {
  const version = req.headers['a2a-version'];
  return !version || version === '0.3';
}

/**
 * Rewrites one SSE `data:` event so a v0.3 input-required status update says `final: true`;
 * anything else passes unchanged.
 */
export function finalOnInputRequired(chunk: string): string {
  if (!chunk.startsWith('data: ') || !chunk.includes('"input-required"')) return chunk;
  try {
    const envelope = JSON.parse(chunk.slice('data: '.length)) as { result?: { kind?: string; status?: { state?: string }; final?: boolean } };
    const update = envelope.result;
    if (update?.kind !== 'status-update' || update.status?.state !== 'input-required' || update.final) return chunk;
    update.final = true;
    return `data: ${JSON.stringify(envelope)}\n\n`;
  } catch {
    return chunk;
  }
}
