/**
 * An A2A peer built on `@a2a-js/sdk`'s own server (`DefaultRequestHandler`, `InMemoryTaskStore`,
 * the Express JSON-RPC handler), v1.0 only, on 127.0.0.1: not xswarm's server, so nothing of
 * xswarm's own de-duplication of message ids helps it. It counts every message it executes by
 * its message id, and holds each task working until the test releases it, then completes it
 * with the answer `done: <request>`.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { type AgentCard, type Message, Role, type Task, TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

/** A running SDK peer. */
export interface SdkPeer {
  cardUrl: string;
  /** How many times each message id was executed. */
  readonly received: Map<string, number>;
  /** The request text of each task a client canceled (`CancelTask`), in order. */
  readonly canceled: string[];
  /** Resolves once a message with text `request` is being worked on (a task is open for it). */
  working(request: string): Promise<void>;
  /** Lets the task for `request` complete (now, or as soon as it arrives). */
  release(request: string): void;
  close(): Promise<void>;
}

/** A gate per request text: opened by `release`, awaited by the executor. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let arrive!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  return { opened, open, arrived, arrive };
}

/** Starts a peer whose card has the skill `translate` (and advertises push notifications with `push`: the SDK's own store and sender). */
export async function startSdkPeer(options: { push?: boolean } = {}): Promise<SdkPeer> {
  const received = new Map<string, number>();
  const canceled: string[] = [];
  /** The request text of each task, for `canceled`. */
  const requests = new Map<string, string>();
  const gates = new Map<string, ReturnType<typeof gate>>();
  const gateOf = (request: string) => {
    let g = gates.get(request);
    if (!g) gates.set(request, (g = gate()));
    return g;
  };
  const app = express();
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card: AgentCard = {
    name: 'sdk_translator',
    description: 'Translates (an @a2a-js/sdk peer)',
    supportedInterfaces: [{ url: `${base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: options.push ?? false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [
      {
        id: 'translate',
        name: 'translate',
        description: 'Translates text',
        tags: ['translate'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
  const text = (m: Message | undefined) => (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
  const agentMessage = (taskId: string, contextId: string, value: string): Message => ({
    messageId: `${taskId}:answer`,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  });
  const executor: AgentExecutor = {
    async execute(context, bus) {
      const message = context.userMessage;
      received.set(message.messageId, (received.get(message.messageId) ?? 0) + 1);
      const request = text(message);
      const { taskId, contextId } = context;
      requests.set(taskId, request);
      const task: Task = {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [message],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
      const g = gateOf(request);
      g.arrive();
      await g.opened;
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_COMPLETED, message: agentMessage(taskId, contextId, `done: ${request}`), timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      canceled.push(requests.get(taskId) ?? taskId);
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: '',
          status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
      bus.finished();
    },
  };
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/rpc', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: requestHandler }));
  return {
    cardUrl: `${base}/.well-known/agent-card.json`,
    received,
    canceled,
    working: (request) => gateOf(request).arrived,
    release: (request) => gateOf(request).open(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const g of gates.values()) g.open();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
