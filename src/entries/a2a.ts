/**
 * `xswarm/a2a`: the A2A client behind remote-agent handoffs (`handoff.toRemoteAgent(url)`), to
 * configure it (headers, fetch, what an agent card may make it do: `timeoutMs`, `maxCardBytes`,
 * `allowedHosts`). Needs the optional package @a2a-js/sdk; importing this entry point without it
 * fails.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * import { a2aRemoteAgents } from 'xswarm/a2a';
 * const runtime = createRuntime({ swarms, model, remote: a2aRemoteAgents({ headers: { authorization: 'Bearer T' } }) });
 *
 * @module
 */
export { a2aRemoteAgents } from '../a2a/client.js';
export type { A2ARemoteOptions } from '../a2a/client.js';
export { a2aPushInbox, type A2APushInbox, type PushInboxOptions, type PushInboxSubscription } from '../a2a/push-inbox.js';
