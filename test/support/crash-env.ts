/**
 * What every crash fixture process shares: a runtime configured from the environment the test
 * sets (`OWNER`, `LEASE_MS`), and a log of model calls (`MODEL_LOG`).
 */
import { appendFileSync } from 'node:fs';
import type { Model, ModelRequest } from '../../src/model.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.js';

/** A runtime whose owner id and lease come from `OWNER` and `LEASE_MS` when they are set. */
export function runtimeFromEnv(options: RuntimeOptions): Runtime {
  return createRuntime({
    ...options,
    ...(process.env.LEASE_MS ? { leaseMs: Number(process.env.LEASE_MS) } : {}),
    ...(process.env.OWNER ? { owner: process.env.OWNER } : {}),
  });
}

/** Makes `model` append the label of every call it answers to `file` (when given). */
export function logModelCalls(model: Model, file: string | undefined, label: (req: ModelRequest) => string): void {
  if (!file) return;
  const call = model.call.bind(model);
  (model as { call: Model['call'] }).call = (req) => {
    appendFileSync(file, `${label(req)}\n`);
    return call(req);
  };
}
