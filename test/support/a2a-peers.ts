/**
 * Helpers for the A2A tests: SDK clients in v1.0 and v0.3 (legacyCompat) mode, stream
 * collection, and models that stream.
 */
import type { AgentCard, StreamResponse } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import type { ModelRequest, ModelResponse } from '../../src/index.js';
import { sleep } from './sleep.js';

export type Mode = 'v1.0' | 'v0.3';
export const MODES: Mode[] = ['v1.0', 'v0.3'];

/** A fetch that adds a bearer token (when given) to every request. */
export function authFetch(token: string | undefined): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

/**
 * An SDK client for the agent card at `cardUrl`.
 *
 * v1.0: the stock `ClientFactory`, resolving the card (it asks for `A2A-Version: 1.0`).
 * v0.3: the card as a v0.3 client reads it (no version header, so the server's v0.3 card),
 * reduced to its v0.3 fields, and a `legacyCompat` factory: the client then speaks v0.3 on the
 * wire (`message/stream`, `kind` fields, `A2A-Version: 0.3`).
 */
export async function sdkClient(cardUrl: string, mode: Mode, token?: string): Promise<Client> {
  const fetchImpl = authFetch(token);
  if (mode === 'v1.0') {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    );
    return factory.createFromUrl(cardUrl, '');
  }
  const legacyCard = (await (await fetch(cardUrl)).json()) as Record<string, unknown>;
  const { supportedInterfaces: _v1, ...v03 } = legacyCard;
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }),
    }),
  );
  return factory.createFromAgentCard(v03 as unknown as AgentCard);
}

/** Collects a stream of responses. */
export async function drain(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const r of stream) out.push(r);
  return out;
}

/** The `$case` of each response: a compact picture of a stream. */
export function cases(responses: readonly StreamResponse[]): string[] {
  return responses.map((r) => r.payload?.$case ?? '?');
}

/** A model step that streams `chunks` (one every `gapMs`, longer than the host's merge window) and then answers `text`. */
export function streamed(chunks: string[], gapMs = 40): (req: ModelRequest) => Promise<ModelResponse> {
  return async (req) => {
    for (const c of chunks) {
      req.onText?.(c);
      await sleep(gapMs, req.signal);
    }
    return { text: chunks.join('') };
  };
}

/** A user message in the SDK's in-memory shape. */
export function userText(messageId: string, text: string, task?: { taskId: string; contextId?: string }) {
  return {
    messageId,
    taskId: task?.taskId ?? '',
    contextId: task?.contextId ?? '',
    role: 1,
    parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A SendMessageRequest for `message`. */
export function sendRequest(message: ReturnType<typeof userText>, configuration: { returnImmediately?: boolean; historyLength?: number } = {}) {
  return {
    tenant: '',
    message,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false, ...configuration },
    metadata: undefined,
  };
}
