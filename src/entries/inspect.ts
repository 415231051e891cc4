/**
 * `xswarm/inspect`: the relay that shows a runtime's actors in the Stately inspector (and to
 * `@statelyai/inspect`'s `createWebSocketReceiver`). Needs the optional packages
 * `@statelyai/inspect` and `ws`; importing this entry point without them fails. Giving
 * `createRuntime({ inspect })` an observer of your own needs neither.
 *
 * @example
 * import { inspectRelay } from 'xswarm/inspect';
 * const relay = await inspectRelay({ port: 4001 });
 * console.log(`open ${relay.url} for the Stately inspector`);
 *
 * @module
 */
export { inspectRelay } from '../inspect/relay.js';
export type { InspectRelay, InspectRelayOptions } from '../inspect/relay.js';
