/**
 * A foreign A2A peer for interop tests: an agent served by `@a2a-js/sdk` 0.3 (installed as
 * `a2a-sdk-v03`) with its own `DefaultRequestHandler`, `InMemoryTaskStore` and Express
 * JSON-RPC handler, the stack the Strands Agents SDK runs on. It answers every message by
 * streaming its answer as appended text chunks of one artifact, then completes the task
 * (with no final status message, as such peers do).
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { AgentCard, Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from 'a2a-sdk-v03';
import { type AgentExecutor, DefaultRequestHandler, type ExecutionEventBus, InMemoryTaskStore, type RequestContext } from 'a2a-sdk-v03/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from 'a2a-sdk-v03/server/express';

/**
 * What the peer's card says about its protocol:
 * - `0.2.0`: `protocolVersion: "0.2.0"`, no `supportedInterfaces` (a Strands server's card);
 * - `unversioned`: no `protocolVersion` and no `supportedInterfaces`;
 * - `claims-1.0`: a v1.0 `supportedInterfaces` entry, although the server speaks only v0.3.
 */
export type ForeignCard = '0.2.0' | 'unversioned' | 'claims-1.0';

/** The chunks the peer streams; together they read {@link FOREIGN_ANSWER}. */
export const FOREIGN_CHUNKS = ['Forecast ', '(Strands) ', 'for ', 'Saturday'];
export const FOREIGN_ANSWER = FOREIGN_CHUNKS.join('');

export interface ForeignPeer {
  cardUrl: string;
  /** The JSON-RPC method of every request the peer received, in order. */
  methods: string[];
  /** The text of every user message the peer executed. */
  inputs: string[];
  close(): Promise<void>;
}

/** Starts a foreign v0.3 peer on 127.0.0.1 with the given card. */
export async function foreignPeer(kind: ForeignCard): Promise<ForeignPeer> {
  const methods: string[] = [];
  const inputs: string[] = [];
  const app = express();
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rpcUrl = `${base}/rpc`;

  const card = cardOf(kind, rpcUrl);
  const executor = new StreamingExecutor(inputs);
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);

  app.use('/rpc', express.json(), (req, _res, next) => {
    methods.push(String((req.body as { method?: unknown } | undefined)?.method));
    next();
  });
  app.use('/rpc', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card }));

  return {
    cardUrl: `${base}/.well-known/agent-card.json`,
    methods,
    inputs,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The card as the peer serves it (cast: two variants are not valid v0.3 cards). */
function cardOf(kind: ForeignCard, url: string): AgentCard {
  const common = {
    name: 'strands_weather',
    description: 'Weather forecasts (a foreign A2A agent)',
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [{ id: 'forecast', name: 'forecast', description: 'Forecasts the weather', tags: ['weather'] }],
  };
  switch (kind) {
    case '0.2.0':
      return { ...common, url, protocolVersion: '0.2.0' } as AgentCard;
    case 'unversioned':
      return { ...common, url } as AgentCard;
    case 'claims-1.0':
      return { ...common, supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] } as unknown as AgentCard;
  }
}

/** Publishes the task, the answer as appended chunks of one artifact, then `completed`. */
class StreamingExecutor implements AgentExecutor {
  constructor(private readonly inputs: string[]) {}

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = ctx;
    this.inputs.push(userMessage.parts.map((p) => (p.kind === 'text' ? p.text : '')).join(''));
    const task: Task = { kind: 'task', id: taskId, contextId, status: { state: 'submitted' }, history: [userMessage as Message] };
    if (!ctx.task) bus.publish(task);
    bus.publish(status(taskId, contextId, 'working', false));
    FOREIGN_CHUNKS.forEach((text, i) => {
      const update: TaskArtifactUpdateEvent = {
        kind: 'artifact-update',
        taskId,
        contextId,
        artifact: { artifactId: 'answer', parts: [{ kind: 'text', text }] },
        append: i > 0,
        lastChunk: i === FOREIGN_CHUNKS.length - 1,
      };
      bus.publish(update);
    });
    bus.publish(status(taskId, contextId, 'completed', true));
    bus.finished();
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.publish(status(taskId, '', 'canceled', true));
    bus.finished();
  }
}

function status(taskId: string, contextId: string, state: 'working' | 'completed' | 'canceled', final: boolean): TaskStatusUpdateEvent {
  return { kind: 'status-update', taskId, contextId, status: { state, timestamp: new Date().toISOString() }, final };
}
