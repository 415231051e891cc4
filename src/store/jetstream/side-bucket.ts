/**
 * A KV bucket of a JetStream store's own beside its main one (the budget ledger's, the push
 * outbox's), opened on first use: created by whichever process uses it first, opened as it is by
 * the others, and tried again at the next use after a failure.
 *
 * @module
 */
import { StorageType } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import type { Setup } from './setup.js';

/** The bucket `name` of the store opened by `setup`, once per success; a failure is `failed(e)`'s error. */
export function sideBucket(setup: Setup, name: string, timeoutMs: number, failed: (e: unknown) => unknown = (e) => e): () => Promise<KV> {
  let bucket: Promise<KV> | undefined;
  return () =>
    (bucket ??= setup
      .ready()
      .then(async (broker) => {
        const kvm = new Kvm(broker.ctx.js);
        return kvm.create(name, { history: 1, storage: StorageType.File, timeout: timeoutMs }).catch(() => kvm.open(name, { allow_direct: true, timeout: timeoutMs }));
      })
      .catch((e: unknown) => {
        bucket = undefined;
        throw failed(e);
      }));
}
