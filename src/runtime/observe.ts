/**
 * Wires a runtime's logs and metrics to what it already reports: its durable events (the
 * swarm lifecycle, model and tool calls) and its transport's state changes (NATS drops and
 * reconnections). Nothing is wired for what was not asked: a runtime with neither a logger nor
 * metrics adds no listener.
 *
 * @module
 */
import type { Reach } from '../distribution/reach.js';
import type { Logger } from '../util/logger.js';
import { eventLogger } from './event-log.js';
import type { LiveSwarms } from './live.js';
import type { RuntimeMetrics } from './metrics.js';

/** What {@link observeRuntime} wires. */
export interface ObservedParts {
  live: LiveSwarms;
  reach: Reach | undefined;
  logger: Logger | undefined;
  metrics: RuntimeMetrics | undefined;
}

/** Subscribes the logs and metrics to the runtime's events and transport; returns the function that unsubscribes them. */
export function observeRuntime({ live, reach, logger, metrics }: ObservedParts): () => void {
  const stops: (() => void)[] = [];
  const definitionOf = (swarmId: string) => live.hosts.get(swarmId)?.definitionId;
  if (metrics) stops.push(live.subscribe((e) => metrics.event(e)));
  if (logger) stops.push(live.subscribe(eventLogger(logger, definitionOf)));
  if (reach && (logger || metrics)) {
    let stopped = false;
    reach.transport.then(
      (transport) => {
        if (stopped || !transport.watchStatus) return;
        stops.push(
          transport.watchStatus((status) => {
            if (status === 'closed') return;
            const connected = status === 'connected';
            metrics?.link(connected);
            if (connected) logger?.info({ prefix: reach.prefix }, 'NATS reconnected');
            else logger?.warn({ prefix: reach.prefix }, 'NATS disconnected: calls to other runtimes fail until it reconnects');
          }),
        );
      },
      // The first call that needs the transport reports its failure.
      () => undefined,
    );
    stops.push(() => {
      stopped = true;
    });
  }
  return () => {
    for (const stop of stops) stop();
  };
}
