/**
 * The outside world a path's tools act on: a ledger of side effects, de-duplicated by the key
 * each is made under (as a payment API de-duplicates by idempotency key), and a count of every
 * execution of every tool. A crash and restart may run a call again; it must not make a side
 * effect again: the ledger says how many distinct effects each call (its idempotency key) made.
 *
 * @module
 */

/** What a tool override receives besides the call's arguments: the runtime's context, and the ledger. */
export interface TestToolContext {
  swarmId: string;
  agentId: string;
  toolCallId: string;
  idempotencyKey: string;
  signal: AbortSignal;
  /**
   * Records one side effect of this call, made under `key`: effects with the same key count
   * once (pass `ctx.idempotencyKey` for an effect that must happen once per call, whatever
   * re-runs it). Without a key, every call of it is a new effect — a tool that forgets its
   * idempotency key, which a crash path catches.
   */
  effect(key?: string): void;
}

/** The side effects and executions of one run of a path (crashes and restarts included). */
export class EffectLedger {
  /** Distinct effect keys made by each call (by the call's idempotency key). */
  private readonly byCall = new Map<string, Set<string>>();
  private readonly executions = new Map<string, number>();
  private anonymous = 0;

  /** Counts an execution of `tool` for the call with idempotency key `callKey`. */
  executed(tool: string, callKey: string): void {
    const k = `${tool} ${callKey}`;
    this.executions.set(k, (this.executions.get(k) ?? 0) + 1);
  }

  /** Records a side effect of the call `callKey` made under `key` (a fresh key when none). */
  effect(callKey: string, key?: string): void {
    let set = this.byCall.get(callKey);
    if (!set) this.byCall.set(callKey, (set = new Set()));
    set.add(key ?? `anonymous ${++this.anonymous}`);
  }

  /** Per call (idempotency key), how many distinct side effects it made. */
  effects(): Map<string, number> {
    return new Map([...this.byCall].map(([call, keys]) => [call, keys.size]));
  }

  /** Per tool and call, how many times it was executed. */
  runs(): Map<string, number> {
    return new Map(this.executions);
  }
}
