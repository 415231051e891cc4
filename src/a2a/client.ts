/**
 * Remote A2A agents as handoff targets: the runtime's default {@link RemoteAgentClient}.
 *
 * It uses the SDK's `ClientFactory` with `legacyCompat` on the card resolver and on both
 * transport factories, so v1.0 and v0.3 peers work alike, and streams when the card offers it
 * (the SDK client falls back to a blocking send otherwise). It is liberal in what it accepts
 * from peers it did not write: a card that names a protocol older than v0.3, or none, is
 * spoken to in v0.3 (the SDK would speak v1.0 to it); a peer that answers Method-not-found to
 * a v1.0 method is asked again with the v0.3 one, and from then on spoken to in v0.3; and
 * text streamed in appended chunks reads as one text.
 *
 * It is not liberal in what a card may make it do (`./agent-fetch.ts`): the card fetches, the
 * one before a run and the re-read before each call, have one deadline for headers and body
 * (`timeoutMs`) and a byte limit (`maxCardBytes`), and follow redirects only within the card's
 * origin; a card naming an interface the client could call that is not `http(s)` on the card's
 * origin or on `allowedHosts` (`./endpoint-policy.ts`) is refused as soon as it is read. Either
 * way the call is a tool error naming the rule, and nothing is sent where the card pointed.
 *
 * @module
 */
import { Role, TaskState, type AgentCard, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  type AgentCardResolver,
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { errorText } from '../../machines/error-text.js';
import type { RemoteAgentInput } from '../../machines/calls/remote.js';
import type { CallResult } from '../../machines/calls/kind.js';
import { isUsageByModel, type UsageByModel } from '../../machines/usage.js';
import { abortable, delay } from '../util/abort.js';
import { isCallTimeout } from '../../actors/call-timeout.js';
import { agentFetch, cardLimits, type CardLimits } from './agent-fetch.js';
import { urlOf } from './bounded-fetch.js';
import { type AllowedHosts, refusedInterfaces } from './endpoint-policy.js';
import type { RemoteAgentClient, RemoteCard, RemoteHooks } from './remote.js';
import { partsText, RESULT_ARTIFACT_ID, TERMINAL_STATES, textPart } from './mapping.js';
import { type RemoteRequest, remoteRequestOf } from './pause-request.js';
import type { A2APushInbox } from './push-inbox.js';

/** Options of {@link a2aRemoteAgents}. */
export interface A2ARemoteOptions {
  /**
   * Extra HTTP headers (typically `authorization`) for every request to remote agents, or a
   * function of each request's URL (the agent card's, then the agent's endpoint). Headers the
   * SDK sets itself win.
   */
  headers?: Record<string, string> | ((url: string) => Record<string, string> | undefined);
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * How many times a stream that closes before the task ends or asks for input is picked up
   * again with a resubscribe (default 5). A peer without streaming is polled instead.
   */
  maxResubscribes?: number;
  /** How often a peer without streaming is polled while its task works (default 1000 ms). */
  pollIntervalMs?: number;
  /**
   * How long one agent-card fetch may take, from the request to the last byte of the card
   * (default 5000 ms): the card read before a run, and the one re-read before each call. Past
   * it the request is aborted and the call is a tool error (`… no complete answer within
   * 5000 ms (timeoutMs)`). The call itself (the message and its stream) is bounded only by its
   * caller.
   */
  timeoutMs?: number;
  /**
   * The largest agent card read, in bytes, counted as the body arrives (after decompression);
   * default 1 MiB (1 048 576). A larger card is refused, the request aborted at the limit without
   * buffering more, and the call is a tool error (`the agent card at … is too large: more than
   * 1048576 bytes (maxCardBytes)`).
   */
  maxCardBytes?: number;
  /**
   * Hosts an agent card may point calls at besides its own origin. A card names its service
   * URLs (A2A `supportedInterfaces`, v0.3 `url` and `additionalInterfaces`) and the client sends
   * the call there, with `headers`; so every interface of a binding the client speaks (JSON-RPC,
   * HTTP+JSON) must be an `http:` or `https:` URL (always) and either on the origin of the card
   * URL (same scheme, host and port; `localhost`, `127.0.0.0/8` and `[::1]` counting as one host)
   * or on a host listed here. A card breaking the rule is refused when read, and the call is a
   * tool error naming each such interface; nothing is sent there. Entries: `host` (any port),
   * `host:port`, `[ipv6]`, `[ipv6]:port`, or `*` (any host). Default: none, the card's origin
   * only. Redirects, of the card or of a call, are followed only within the origin asked for
   * (at most 5), whatever this says.
   */
  allowedHosts?: AllowedHosts;
  /**
   * Ask peers for push notifications instead of holding a stream open: with an inbox that our
   * server serves (`serve(runtime, { pushInbox })`, see `./push-inbox.ts` and docs/a2a-push.md),
   * a call to a peer whose card advertises `capabilities.pushNotifications` sends its message
   * with a webhook on our server and returns at once; the task is read (`GetTask`) whenever the
   * peer notifies, and every `fallbackPollMs`. Peers without push are streamed to as before.
   */
  pushInbox?: A2APushInbox;
}

/**
 * What the runtime may tell a remote call besides the human hook: whether the swarm that made
 * the call has ended. When the call's signal aborts, the remote task is canceled only if so
 * (a runtime shutting down aborts in-flight calls too, and the restored swarm re-sends the same
 * message, which then reaches the same remote task). Without this hook every abort cancels.
 */
type Hooks = RemoteHooks & { swarmEnded?(): boolean };

const LEGACY = { enabled: true } as const;

/** The protocol version the SDK's compat transports speak. */
const V03 = '0.3';

/** JSON-RPC "Method not found": what a v0.3-only server answers to a v1.0 method name. */
const METHOD_NOT_FOUND = -32601;

/** How long a cancel after an abort may take, including learning the remote task's id. */
const CANCEL_GRACE_MS = 5000;

/**
 * The A2A client for remote agents: `card(url)` reads an agent card; `send` sends the request
 * (message id = the call's idempotency key), waits for the remote task, and answers with its
 * result as text (text parts as they are, data parts as JSON). A remote `input-required` asks
 * our human through `hooks.askHuman` (which pauses our swarm) and forwards the answer on the
 * same task. An unreachable, failing or canceled remote is `{ ok: false }` with the reason,
 * never a thrown error; an aborted call cancels the remote task (best effort) and rejects. A
 * card breaking one of the rules of `timeoutMs`, `maxCardBytes` and `allowedHosts` is
 * `{ ok: false }` too, naming the rule (and `card(url)` rejects with it).
 *
 * Throws a `TypeError` for a `timeoutMs`, `maxCardBytes` or `allowedHosts` entry that is not
 * valid.
 *
 * @example
 * import { a2aRemoteAgents, createRuntime } from 'xswarm';
 * const runtime = createRuntime({
 *   swarms: [planner], model,
 *   remote: a2aRemoteAgents({ headers: { authorization: `Bearer ${process.env.PEER_TOKEN}` } }),
 * });
 */
export function a2aRemoteAgents(options: A2ARemoteOptions = {}): RemoteAgentClient {
  const limits = cardLimits(options, 'a2aRemoteAgents');
  // Looked up per call, so a fetch installed later (a test double, a proxy agent) is used.
  const baseFetch: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const maxResubscribes = options.maxResubscribes ?? 5;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;

  /**
   * A fetch for the agent whose card is at `cardUrl`, with our headers, bounded and kept where
   * that card may send us (`./agent-fetch.ts`); `signal` (when given) aborts it too.
   */
  const fetchWith = (cardUrl: string, signal?: AbortSignal): typeof fetch => {
    const guarded = agentFetch(cardUrl, baseFetch, limits);
    return async (input, init) => {
      const url = urlOf(input);
      const extra = typeof options.headers === 'function' ? options.headers(url) : options.headers;
      const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
      for (const [k, v] of Object.entries(extra ?? {})) if (!headers.has(k)) headers.set(k, v);
      const signals = [init?.signal, signal].filter((s): s is AbortSignal => !!s);
      const res = await guarded(input, { ...init, headers, ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}) });
      if (res.ok || res.status === 304) return res;
      // JSON-RPC errors (the SDK server sends some with HTTP 500) are the SDK's to read. Any
      // other HTTP error becomes one that names its status: the SDK would mistake a body like
      // `{"error":"…"}` for a JSON-RPC error and report only "An unexpected error occurred."
      const body = await res
        .clone()
        .text()
        .catch(() => '');
      if (/"jsonrpc"\s*:/.test(body)) return res;
      throw new Error(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''} from ${url}${body ? `: ${body.slice(0, 300)}` : ''}`);
    };
  };

  /**
   * Reads the card at `url` (bounded: see the module doc) and refuses it when an interface the
   * client could call breaks the destination rule ({@link checkInterfaces}).
   */
  const readCard = async (url: string, signal?: AbortSignal): Promise<AgentCard> => {
    const card = await new DefaultAgentCardResolver({ fetchImpl: fetchWith(url, signal), legacyCompat: LEGACY }).resolve(url, '');
    checkInterfaces(url, card, limits);
    return card;
  };

  /** Card URLs of peers that turned out to speak only v0.3 although their card said v1.0. */
  const speaksV03 = new Set<string>();

  /**
   * A client for the agent whose card is at `url`; the card fetch honours `signal`. The card's
   * interfaces are read liberally ({@link liberalVersion}), and as v0.3 for a peer known to
   * need it.
   */
  const connect = (url: string, signal: AbortSignal): Promise<Client> => {
    // The factory asks for `url` itself (a full card URL with an empty path, below).
    const cardResolver: AgentCardResolver = {
      resolve: async () => withInterfaceVersions(await readCard(url, signal), speaksV03.has(url)),
    };
    // Transports get no send-wide signal: each call passes its own, and the best-effort
    // cancel after an abort must still go out.
    const transportFetch = fetchWith(url);
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [
          new JsonRpcTransportFactory({ fetchImpl: transportFetch, legacyCompat: LEGACY }),
          new RestTransportFactory({ fetchImpl: transportFetch, legacyCompat: LEGACY }),
        ],
        cardResolver,
      }),
    );
    // A full card URL with an empty path: resolving a path against a base URL without a
    // trailing slash would drop its last segment.
    return factory.createFromUrl(url, '');
  };

  return {
    async card(url, signal): Promise<RemoteCard> {
      const card = await readCard(url, signal);
      if (!card?.name) throw new Error(`The agent card at ${url} has no name`);
      return { name: card.name, description: card.description || card.name };
    },

    async send(input: RemoteAgentInput, hooks: Hooks, signal: AbortSignal): Promise<CallResult> {
      signal.throwIfAborted();
      let client: Client;
      try {
        client = await connect(input.url, signal);
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        return { ok: false, content: `Could not reach the remote agent at ${input.url}: ${reasonOf(e)}` };
      }
      const card = await client.getAgentCard().catch(() => undefined);
      const name = card?.name || input.agentId;
      // Push when both sides can: the peer says so, and our inbox has a URL.
      const push = card?.capabilities?.pushNotifications && options.pushInbox?.ready ? options.pushInbox : undefined;
      const exchangeWith = (c: Client) => new Exchange(c, !!card?.capabilities?.streaming, maxResubscribes, pollIntervalMs, push);
      let exchange = exchangeWith(client);

      // On abort the call returns at once, while the exchange goes on briefly in the
      // background: long enough to learn the remote task's id if it is not known yet, cancel
      // that task, and stop.
      const onAbort = () =>
        queueMicrotask(() => {
          // A call past its deadline is over for good: its remote task is canceled.
          if (hooks.swarmEnded?.() === false && !isCallTimeout(signal.reason)) exchange.stop();
          else exchange.cancel();
        });
      signal.addEventListener('abort', onAbort, { once: true });
      const work = (async (): Promise<CallResult> => {
        try {
          /** Runs the exchange; once per peer, a v1.0 method it does not know is sent again in v0.3. */
          const run = async (message: Message): Promise<void> => {
            try {
              await exchange.run(message);
            } catch (e) {
              // A v0.3-only peer behind a v1.0 card refused the method: nothing started there,
              // so the same message (same id) can go again.
              if (!isMethodNotFound(e) || exchange.started || client.protocolVersion === V03) throw e;
              speaksV03.add(input.url);
              client = await connect(input.url, signal);
              exchange = exchangeWith(client);
              await exchange.run(message);
            }
          };
          let message = userMessage(input.key, input.request, undefined);
          for (let answers = 1; ; answers++) {
            await run(message);
            const state = exchange.state;
            // A peer that reports its usage: counted once in this swarm's, with the result.
            if (state === TaskState.TASK_STATE_COMPLETED) return { ok: true, content: exchange.content(), ...(exchange.usage ? { usage: exchange.usage } : {}) };
            if (state === TaskState.TASK_STATE_INPUT_REQUIRED) {
              const question = exchange.statusText || `The remote agent "${name}" needs more input to continue.`;
              // A structured request (pause-request.ts): our pause carries its schema, the answer goes back as data.
              const request = exchange.request;
              const answer = await abortable(hooks.askHuman(question, request?.responseSchema ? { responseSchema: request.responseSchema } : undefined), exchange.signal);
              message = answerMessage(`${input.key}:answer:${answers}`, answer ?? '', { taskId: exchange.taskId, contextId: exchange.contextId }, request);
              continue;
            }
            return { ok: false, content: failureText(name, state, exchange.statusText) };
          }
        } catch (e) {
          return { ok: false, content: `The remote agent "${name}" (${input.url}) failed: ${reasonOf(e)}` };
        } finally {
          signal.removeEventListener('abort', onAbort);
          exchange.stop();
        }
      })();
      return abortable(work, signal);
    },
  };
}

/**
 * One remote task as this client sees it, fed by stream responses or task snapshots: its ids,
 * its state and status text, its artifacts, or the direct message a peer may answer with.
 */
class Exchange {
  taskId = '';
  contextId = '';
  state: TaskState = TaskState.TASK_STATE_UNSPECIFIED;
  statusText = '';
  /** What the peer's `input-required` status asks for beyond its text (a response schema, its pause id). */
  request: RemoteRequest | undefined;
  /** The peer's usage by model, when its final status update reports one (`metadata.usage`, as xswarm's A2A server does). */
  usage: UsageByModel | undefined;
  private readonly artifacts = new Map<string, Part[]>();
  private reply: Message | undefined;
  /** Aborts every request of this exchange. */
  private readonly controller = new AbortController();
  private cancelWhenKnown = false;
  private answering = false;

  constructor(
    private readonly client: Client,
    private readonly streaming: boolean,
    private readonly maxResubscribes: number,
    private readonly pollIntervalMs: number,
    private readonly push?: A2APushInbox,
  ) {}

  /** Fires when the exchange is stopped. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops every request of this exchange; the remote task is left as it is. */
  stop(): void {
    this.controller.abort(new Error('The call to the remote agent was abandoned'));
  }

  /**
   * Cancels the remote task (best effort) and stops. When its id is not known yet, keeps
   * reading the stream for up to {@link CANCEL_GRACE_MS} to learn it.
   */
  cancel(): void {
    if (this.signal.aborted) return;
    if (this.finished && this.state !== TaskState.TASK_STATE_INPUT_REQUIRED) return this.stop();
    if (!this.taskId) {
      this.cancelWhenKnown = true;
      setTimeout(() => this.stop(), CANCEL_GRACE_MS).unref();
      return;
    }
    void this.client.cancelTask({ tenant: '', id: this.taskId, metadata: undefined }, { signal: AbortSignal.timeout(CANCEL_GRACE_MS) }).catch(() => undefined);
    this.stop();
  }

  /** Whether the peer answered at all: a task or a message. */
  get started(): boolean {
    return this.taskId !== '' || this.reply !== undefined;
  }

  /** Whether the remote task ended, or waits for us (input, auth), or answered with a message. */
  get finished(): boolean {
    return (
      this.reply !== undefined ||
      TERMINAL_STATES.has(this.state) ||
      this.state === TaskState.TASK_STATE_INPUT_REQUIRED ||
      this.state === TaskState.TASK_STATE_AUTH_REQUIRED
    );
  }

  /** Sends `message` and follows the task until {@link finished}. */
  async run(message: Message): Promise<void> {
    this.state = TaskState.TASK_STATE_UNSPECIFIED;
    // The stream of an answer opens with the task as it was: still input-required. That is
    // the question we just answered, not a new one.
    this.answering = message.taskId !== '';
    if (this.push) return this.runWithPush(message, this.push);
    const request = {
      tenant: '',
      message,
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false },
      metadata: undefined,
    };
    for await (const response of this.client.sendMessageStream(request, { signal: this.signal })) this.apply(response);
    // A stream may close before the task ends (a proxy, a server restart): pick the task up
    // again by resubscribing, or by polling a peer that cannot stream (or resubscribe).
    let polling = !this.streaming;
    for (let attempt = 0; !this.finished; attempt++) {
      if (!this.taskId) throw new Error('the remote agent answered with neither a task nor a message');
      if (!polling) {
        if (attempt >= this.maxResubscribes) throw new Error(`the stream of task ${this.taskId} kept closing before the task ended`);
        try {
          for await (const response of this.client.resubscribeTask({ tenant: '', id: this.taskId }, { signal: this.signal })) this.apply(response);
          continue;
        } catch (e) {
          if (this.signal.aborted) throw e;
          // Typically: the task ended meanwhile and cannot be subscribed to. Read it instead.
          polling = true;
        }
      } else if (attempt > 0) {
        await sleep(this.pollIntervalMs, this.signal);
      }
      this.applyTask(await this.client.getTask({ tenant: '', id: this.taskId }, { signal: this.signal }));
    }
  }

  /**
   * {@link run} with push notifications: the message goes with a webhook of our inbox and
   * returns at once; each notification (or the inbox's fallback poll) has the task read again,
   * until it is {@link finished}.
   */
  private async runWithPush(message: Message, inbox: A2APushInbox): Promise<void> {
    const hook = inbox.open();
    try {
      const request = {
        tenant: '',
        message,
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url: hook.url, token: '', authentication: { scheme: 'Bearer', credentials: hook.secret } },
          returnImmediately: true,
        },
        metadata: undefined,
      };
      const answer = await this.client.sendMessage(request, { signal: this.signal });
      if ('messageId' in answer) this.reply = answer;
      else this.applyTask(answer, this.answering);
      this.answering = false;
      while (!this.finished) {
        await hook.wait(this.signal);
        this.applyTask(await this.client.getTask({ tenant: '', id: this.taskId }, { signal: this.signal }));
      }
    } finally {
      hook.close();
    }
  }

  /** The answer: the xswarm `result` artifact, else every artifact, else the status text. */
  content(): string {
    if (this.reply) return partsText(this.reply.parts);
    const result = this.artifacts.get(RESULT_ARTIFACT_ID);
    const chosen = result ? [result] : [...this.artifacts.values()];
    const text = chosen
      .map((parts) => partsText(parts))
      .filter((t) => t !== '')
      .join('\n\n');
    return text || this.statusText;
  }

  private apply(response: StreamResponse): void {
    const payload = response.payload;
    if (!payload) return;
    const answering = this.answering;
    this.answering = false;
    switch (payload.$case) {
      case 'task':
        return this.applyTask(payload.value, answering);
      case 'message':
        this.reply = payload.value;
        return;
      case 'statusUpdate': {
        const u = payload.value;
        this.ids(u.taskId, u.contextId);
        if (u.status) this.applyStatus(u.status.state, u.status.message);
        const usage = (u.metadata as { usage?: unknown } | undefined)?.usage;
        if (isUsageByModel(usage)) this.usage = usage;
        return;
      }
      case 'artifactUpdate': {
        const a = payload.value.artifact;
        this.ids(payload.value.taskId, payload.value.contextId);
        if (!a) return;
        const existing = this.artifacts.get(a.artifactId);
        if (existing && payload.value.append) appendParts(existing, a.parts);
        else this.artifacts.set(a.artifactId, [...a.parts]);
        return;
      }
    }
  }

  /** `answering`: this snapshot opens the stream of our answer (see {@link run}). */
  private applyTask(task: Task, answering = false): void {
    this.ids(task.id, task.contextId);
    this.artifacts.clear();
    for (const a of task.artifacts ?? []) this.artifacts.set(a.artifactId, [...a.parts]);
    if (answering && task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) this.applyStatus(TaskState.TASK_STATE_WORKING, undefined);
    else if (task.status) this.applyStatus(task.status.state, task.status.message);
    // A finished task read whole (sent without streaming, or polled) reports usage in its metadata.
    const usage = (task.metadata as { usage?: unknown } | undefined)?.usage;
    if (isUsageByModel(usage)) this.usage = usage;
  }

  private applyStatus(state: TaskState, message: Message | undefined): void {
    this.state = state;
    this.statusText = message ? partsText(message.parts) : '';
    this.request = message && state === TaskState.TASK_STATE_INPUT_REQUIRED ? remoteRequestOf(message.parts) : undefined;
  }

  private ids(taskId: string, contextId: string): void {
    if (taskId) this.taskId = taskId;
    if (contextId) this.contextId = contextId;
    if (this.cancelWhenKnown && this.taskId) {
      this.cancelWhenKnown = false;
      this.cancel();
    }
  }
}

/**
 * Appends a streamed chunk to an artifact's parts. Text streamed in appended chunks is one
 * text: a chunk's first text part continues the artifact's last text part exactly, with no
 * separator (kept as separate parts, the chunks would read as lines). Its other parts are
 * parts of their own.
 */
function appendParts(parts: Part[], chunk: readonly Part[]): void {
  const [first, ...rest] = chunk;
  const last = parts.at(-1);
  if (first?.content?.$case === 'text' && last?.content?.$case === 'text') {
    parts[parts.length - 1] = { ...last, content: { $case: 'text', value: last.content.value + first.content.value } };
    parts.push(...rest);
  } else {
    parts.push(...chunk);
  }
}

/** The bindings of the client's transports; the SDK matches a card's bindings to them case-insensitively. */
const SPOKEN_BINDINGS = new Set(['JSONRPC', 'HTTP+JSON']);

/**
 * Refuses the card read at `cardUrl` when an interface the client could call (one of a binding
 * it speaks, whatever the case: the SDK picks among those) breaks the destination rule of
 * `./endpoint-policy.ts`: the error names each. The card as the SDK normalized it lists them
 * all, a v0.3 card's `url` and `additionalInterfaces` included. Interfaces of other bindings are
 * never contacted, so not checked.
 */
function checkInterfaces(cardUrl: string, card: AgentCard, limits: CardLimits): void {
  const callable = (card.supportedInterfaces ?? [])
    .filter((i) => SPOKEN_BINDINGS.has((i.protocolBinding ?? '').toUpperCase()))
    .map((i) => ({ url: i.url, binding: i.protocolBinding }));
  const refused = refusedInterfaces(cardUrl, callable, limits.allowedHosts);
  if (refused.length > 0) throw new Error(`the agent card at ${cardUrl} is refused: ${refused.join('; ')}`);
}

/**
 * The card with each interface's protocol version read liberally ({@link liberalVersion}),
 * or with every interface at v0.3 for a peer known to speak only that.
 */
function withInterfaceVersions(card: AgentCard, v03: boolean): AgentCard {
  const supportedInterfaces = (card.supportedInterfaces ?? []).map((i) => ({ ...i, protocolVersion: v03 ? V03 : liberalVersion(i.protocolVersion) }));
  return { ...card, supportedInterfaces };
}

/**
 * The protocol version to speak to an interface that declares `version`. The SDK speaks v0.3
 * only to versions in [0.3, 1.0) and v1.0 to anything else, so a v0.2 card (which Strands
 * servers still send) would get v1.0 method names it cannot know. Versions before 0.3, and
 * unreadable ones, are v0.3 here (the v0.2 JSON-RPC methods are the v0.3 ones); `v1.0` reads
 * as `1.0`.
 */
function liberalVersion(version: string): string {
  const m = /^\s*v?(\d+)(?:\.(\d+))?/i.exec(version ?? '');
  if (!m) return V03;
  const major = Number(m[1]);
  const minor = Number(m[2] ?? 0);
  return major === 0 && minor < 3 ? V03 : `${major}.${minor}`;
}

/** Whether `e` is a JSON-RPC Method-not-found error from the peer. */
function isMethodNotFound(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { envelopeCode?: unknown }).envelopeCode === METHOD_NOT_FOUND;
}

function userMessage(messageId: string, text: string, task: { taskId: string; contextId: string } | undefined): Message {
  return {
    messageId,
    taskId: task?.taskId ?? '',
    contextId: task?.contextId ?? '',
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/**
 * The answer to a peer's `input-required`: to a structured request with a response schema, the
 * answer (JSON text, checked against the schema when our swarm resumed) as a data part naming
 * the peer's pause in `metadata.pauseId`; else a text message.
 */
function answerMessage(messageId: string, text: string, task: { taskId: string; contextId: string }, request: RemoteRequest | undefined): Message {
  const message = userMessage(messageId, text, task);
  if (!request?.responseSchema) return message;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON (an answer the schema did not check): it goes as text, and the peer judges it.
    return message;
  }
  return {
    ...message,
    parts: [{ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' }],
    metadata: request.pauseId === undefined ? undefined : { pauseId: request.pauseId },
  };
}

function failureText(name: string, state: TaskState, statusText: string): string {
  const why = statusText ? `: ${statusText}` : '';
  switch (state) {
    case TaskState.TASK_STATE_FAILED:
      return `The remote agent "${name}" failed${why}`;
    case TaskState.TASK_STATE_CANCELED:
      return `The remote agent "${name}" canceled the task${why}`;
    case TaskState.TASK_STATE_REJECTED:
      return `The remote agent "${name}" rejected the task${why}`;
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return `The remote agent "${name}" requires authentication${why}`;
    default:
      return `The remote agent "${name}" stopped in an unexpected state (${TaskState[state] ?? state})${why}`;
  }
}

/** A readable reason: fetch failures carry the interesting part in `cause`. */
function reasonOf(e: unknown): string {
  if (!(e instanceof Error)) return errorText(e);
  const cause = (e as Error & { cause?: unknown }).cause;
  const detail = cause instanceof Error ? cause.message : typeof cause === 'object' && cause && 'code' in cause ? String(cause.code) : '';
  return detail && !e.message.includes(detail) ? `${e.message} (${detail})` : e.message;
}

/** Waits `ms` (not keeping the process alive), or rejects once `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return abortable(delay(ms, signal, { unref: true }), signal);
}
