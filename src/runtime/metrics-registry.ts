/**
 * The registry a runtime's metrics are written to, as xswarm's declarations name it: a
 * structural type that prom-client's `Registry` satisfies, so that the core's types do not
 * depend on prom-client (an optional peer, loaded only with `createRuntime({ metrics })`).
 *
 * @module
 */

/** A Prometheus registry: prom-client's `Registry` (or one like it), read by `GET /metrics`. */
export interface MetricsRegistry {
  /** Adds a metric (prom-client calls it for every metric made with `registers: [registry]`). */
  registerMetric(metric: never): void;
  /** Every metric of the registry in the Prometheus text format. */
  metrics(): Promise<string>;
  /** The content type of {@link metrics}'s text. */
  readonly contentType: string;
}
