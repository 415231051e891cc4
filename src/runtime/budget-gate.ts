/**
 * The budget gate: the runtime's side of `SwarmPorts.reserveModelCall` / `reserveToolCall`.
 * Before a call is made it reserves the call's worst case against every account the swarm draws
 * from (its own, its parent chain's, its team's, its key's window), in the store's ledger; after,
 * the call settles with what it used. A refused reservation makes no call: the swarm pauses with
 * a `LIMIT` reason (what tripped, what was spent, what is left) and the reservation is tried
 * again once it is resumed — or the call fails, under `onLimit: 'fail'`.
 *
 * @module
 */
import type { BudgetSettle, ModelCallHold } from '../../actors/ports.js';
import { BUDGET_LIMITS, type BudgetCaps, type SwarmBudget, swarmAccount } from '../../machines/budget.js';
import type { ModelStepInput } from '../../machines/contracts.js';
import type { ToolRunInput } from '../../machines/calls/tool.js';
import type { RemoteAgentInput } from '../../machines/calls/remote.js';
import type { UsageByModel } from '../../machines/usage.js';
import type { PauseReason } from '../../machines/events.js';
import type { ToolSpec, Usage } from '../../machines/messages.js';
import { LIMIT_PAUSE } from '../../machines/pause.js';
import type { KeyBudget } from '../define/budget.js';
import { type BudgetAmount, type BudgetLedger, type BudgetRefusal, zeroAmount } from '../store/budgets.js';
import { priceOf, promptTokensAtMost, usdOf } from '../usage/budget-cost.js';
import type { BudgetStatus, Prices } from '../usage/report.js';
import type { SwarmHost } from './host.js';
import { delay } from '../util/abort.js';

/** The output ceiling a budgeted model call is reserved (and asked) with, unless `createRuntime({ maxOutputTokens })` says otherwise. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** How long a reservation holds without its call settling (its holder may have died), unless configured. */
export const DEFAULT_RESERVATION_TTL_MS = 15 * 60_000;

/** How long a refused call waits before reserving again when its swarm could not be paused. */
const RETRY_MS = 50;

/** What the gate needs of a live swarm. */
type GatedHost = Pick<SwarmHost, 'config' | 'status' | 'nextCommit'>;

/** What the gate is built from. */
export interface BudgetGateDeps {
  ledger: BudgetLedger;
  hosts: ReadonlyMap<string, GatedHost>;
  prices: Prices | undefined;
  keyBudgets: Readonly<Record<string, KeyBudget>> | undefined;
  maxOutputTokens: number;
  reservationTtlMs: number;
  /** Pauses a swarm (the runtime's pause command, which pauses its child swarms too). */
  pause(swarmId: string, reason: PauseReason): Promise<void>;
}

type Account = { id: string; caps: BudgetCaps };

/** Reserves calls against budgets before they are made (see the module's note). */
export class BudgetGate {
  /** The model calls in flight here, by call: how many attempts, and the number of the next. */
  private readonly attempts = new Map<string, { inFlight: number; next: number }>();

  constructor(private readonly deps: BudgetGateDeps) {}

  /** See `SwarmPorts.reserveModelCall`: undefined, at once, for a swarm without a budget. */
  reserveModelCall(input: ModelStepInput, model: string, tools: readonly ToolSpec[], signal: AbortSignal): ModelCallHold | Promise<ModelCallHold> | undefined {
    const host = this.deps.hosts.get(input.swarmId);
    const budget = host?.config().budget;
    return host && budget ? this.holdModelCall(host, budget, input, model, tools, signal) : undefined;
  }

  /** See `SwarmPorts.reserveToolCall`: undefined, at once, for a swarm without a budget. */
  reserveToolCall(input: ToolRunInput, signal: AbortSignal): Promise<BudgetSettle> | undefined {
    const host = this.deps.hosts.get(input.swarmId);
    const budget = host?.config().budget;
    if (!host || !budget) return undefined;
    const amount: BudgetAmount = { tokens: 0, usd: 0, modelCalls: 0, toolCalls: 1 };
    const key = `tool|${input.swarmId}|${input.idempotencyKey}`;
    const settle = () => this.settle(key, amount);
    const held = this.hold(host, input.swarmId, key, budget, amount, signal);
    return held === undefined ? Promise.resolve(settle) : held.then(() => settle);
  }

  /**
   * Counts a remote peer's reported usage (its rolled-up usage by model, with its result) against
   * the swarm's budgets: spent elsewhere, so not reserved first; a model without a price counts
   * no USD (none is guessed). Nothing for a swarm without a budget.
   */
  chargeRemote(input: RemoteAgentInput, usage: UsageByModel): void {
    const host = this.deps.hosts.get(input.swarmId);
    const budget = host?.config().budget;
    if (!budget) return;
    const amount = zeroAmount();
    for (const [model, u] of Object.entries(usage)) {
      const price = priceOf(this.deps.prices, model);
      amount.tokens += u.inputTokens + u.outputTokens;
      amount.modelCalls += u.calls;
      if (price) amount.usd = Math.ceil((amount.usd + usdOf(price, u)) * 1e9) / 1e9;
    }
    try {
      const now = Date.now();
      const charging = this.deps.ledger.charge({ accounts: this.accounts(input.swarmId, budget, now), amount, now });
      if (charging) charging.catch(() => undefined);
    } catch {
      // An unknown key: the swarm's next call fails on it, naming it.
    }
  }

  private holdModelCall(
    host: GatedHost,
    budget: SwarmBudget,
    input: ModelStepInput,
    model: string,
    tools: readonly ToolSpec[],
    signal: AbortSignal,
  ): ModelCallHold | Promise<ModelCallHold> {
    const price = priceOf(this.deps.prices, model);
    if (!price && this.accounts(input.swarmId, budget, Date.now()).some((a) => a.caps.usd !== undefined)) {
      // Fail closed: a cost that cannot be known is never guessed, nor let through.
      throw new Error(`model "${model}" has no price in the runtime's price table (createRuntime({ prices })) and a usd budget applies: the call is not made`);
    }
    const maxOutputTokens = this.deps.maxOutputTokens;
    const prompt = promptTokensAtMost(input.messages, tools);
    const worst: BudgetAmount = {
      tokens: prompt + maxOutputTokens,
      // Rounded up to the nano-dollar the ledger counts in: the reservation never falls short.
      usd: price ? Math.ceil(usdOf(price, { inputTokens: prompt, outputTokens: maxOutputTokens }) * 1e9) / 1e9 : 0,
      modelCalls: 1,
      toolCalls: 0,
    };
    const base = `model|${input.swarmId}|${input.speaker}|${input.scope}|${input.turn}`;
    const key = this.attemptKey(base);
    let settled = false;
    const hold: ModelCallHold = {
      maxOutputTokens,
      settle: (usage?: Usage) => {
        if (settled) return;
        settled = true;
        this.attemptEnded(base);
        this.settle(key, usage ? this.used(usage, price) : worst);
      },
    };
    // Refused for good (onLimit: 'fail'), or given up (its step stopped): the attempt ends unsettled.
    const giveUp = (e: unknown) => {
      this.attemptEnded(base);
      throw e;
    };
    let held: Promise<void> | undefined;
    try {
      held = this.hold(host, input.swarmId, key, budget, worst, signal);
    } catch (e) {
      giveUp(e);
    }
    return held === undefined ? hold : held.then(() => hold, giveUp);
  }

  /**
   * The reservation key of a new attempt of the call `base`: `base` itself when no attempt of it
   * is in flight here — so a call made again after a restart finds the reservation its dead
   * attempt left, and it counts once — else `base#n`: an attempt made again in this process
   * while the one before it has not settled yet (cut short by a pause, its abort still on the
   * way) is a second call, and holds a reservation of its own.
   */
  private attemptKey(base: string): string {
    const attempts = this.attempts.get(base);
    if (!attempts) {
      this.attempts.set(base, { inFlight: 1, next: 1 });
      return base;
    }
    attempts.inFlight++;
    return `${base}#${attempts.next++}`;
  }

  private attemptEnded(base: string): void {
    const attempts = this.attempts.get(base);
    if (attempts && --attempts.inFlight === 0) this.attempts.delete(base);
  }

  private used(usage: Usage, price: ReturnType<typeof priceOf>): BudgetAmount {
    return { tokens: usage.inputTokens + usage.outputTokens, usd: price ? usdOf(price, usage) : 0, modelCalls: 1, toolCalls: 0 };
  }

  private settle(key: string, used: BudgetAmount): void {
    // A settle that could not be written leaves the reservation to expire: it then counts at its worst case.
    try {
      const settling = this.deps.ledger.settle(key, used);
      if (settling) settling.catch(() => undefined);
    } catch {
      // As above.
    }
  }

  /** Every budget `budget` draws from, as it stands in the ledger (for `client.usage()`). */
  async statuses(swarmId: string, budget: SwarmBudget, now = Date.now()): Promise<BudgetStatus[]> {
    const statuses: BudgetStatus[] = [];
    let accounts: Account[];
    try {
      accounts = this.accounts(swarmId, budget, now);
    } catch {
      // An unknown key: its runs fail at their first call; the others are reported.
      accounts = this.accounts(swarmId, { ...budget, outer: (budget.outer ?? []).filter((r) => 'id' in r || this.deps.keyBudgets?.[r.key]) }, now);
    }
    for (const { id, caps } of accounts) {
      const a = (await this.deps.ledger.account(id)) ?? { caps, openedAt: now, spent: zeroAmount(), reserved: zeroAmount() };
      const left: BudgetStatus['left'] = {};
      for (const limit of BUDGET_LIMITS) {
        const max = a.caps[limit];
        if (max === undefined) continue;
        left[limit] = limit === 'wallMs' ? Math.max(0, a.openedAt + max - now) : Math.max(0, max - a.spent[limit] - a.reserved[limit]);
      }
      statuses.push({ account: id, caps: a.caps, spent: a.spent, reserved: a.reserved, left });
    }
    return statuses;
  }

  /** The accounts of a swarm's budget at `now`, outermost first, its own last. */
  private accounts(swarmId: string, budget: SwarmBudget, now: number): Account[] {
    const accounts: Account[] = [];
    for (const ref of budget.outer ?? []) {
      if ('id' in ref) {
        accounts.push(ref);
        continue;
      }
      const key = this.deps.keyBudgets?.[ref.key];
      if (!key) throw new Error(`budget key "${ref.key}" is not configured (createRuntime({ keyBudgets })): the call is not made`);
      const window = Math.floor(now / key.windowMs) * key.windowMs;
      accounts.push({ id: `key:${ref.key}@${new Date(window).toISOString()}`, caps: key.budget });
    }
    if (budget.own) accounts.push({ id: swarmAccount(swarmId), caps: budget.own });
    return accounts;
  }

  /**
   * Reserves `amount`: at once (undefined) when a ledger that answers at once grants it — the
   * common case, which costs no promise — else a promise of it (see {@link holdUntilGranted}).
   */
  private hold(host: GatedHost, swarmId: string, key: string, budget: SwarmBudget, amount: BudgetAmount, signal: AbortSignal): Promise<void> | undefined {
    signal.throwIfAborted();
    const now = Date.now();
    const first = this.deps.ledger.reserve({ key, accounts: this.accounts(swarmId, budget, now), amount, now, ttlMs: this.deps.reservationTtlMs });
    return first === undefined ? undefined : this.holdUntilGranted(host, swarmId, key, budget, amount, signal, first);
  }

  /** While refused, pauses the swarm (or fails, under `onLimit: 'fail'`) and tries again once it is resumed. */
  private async holdUntilGranted(
    host: GatedHost,
    swarmId: string,
    key: string,
    budget: SwarmBudget,
    amount: BudgetAmount,
    signal: AbortSignal,
    first: BudgetRefusal | Promise<BudgetRefusal | undefined>,
  ): Promise<void> {
    let answer: BudgetRefusal | Promise<BudgetRefusal | undefined> | undefined = first;
    for (;;) {
      const refusal = await answer;
      if (!refusal) return;
      const reason = limitReason(refusal);
      if (host.config().onLimit === 'fail') throw new Error(reason.message);
      await this.pauseUntilResumed(swarmId, reason, signal);
      signal.throwIfAborted();
      const now = Date.now();
      answer = this.deps.ledger.reserve({ key, accounts: this.accounts(swarmId, budget, now), amount, now, ttlMs: this.deps.reservationTtlMs });
    }
  }

  private async pauseUntilResumed(swarmId: string, reason: PauseReason, signal: AbortSignal): Promise<void> {
    const current = () => this.deps.hosts.get(swarmId);
    // Parallel calls refused together pause the swarm once; the others wait with it.
    if (current()?.status() !== 'paused') await this.deps.pause(swarmId, reason).catch(() => undefined);
    const host = current();
    if (!host) throw new Error(`swarm "${swarmId}" is no longer live here: its call is not made`);
    // Not paused (it could not be, or was resumed at once): a moment passes before trying again,
    // never a busy loop of refusals (nor a wait for a step that may wait on this very call).
    if (host.status() !== 'paused' && !signal.aborted) await delay(RETRY_MS, signal).catch(() => undefined);
    for (let h = current(); h && h.status() === 'paused' && !signal.aborted; h = current()) await h.nextCommit(signal);
    signal.throwIfAborted();
  }
}

/** The `LIMIT` pause reason of a refusal: what tripped, what was spent, what is left. */
export function limitReason(r: BudgetRefusal): PauseReason {
  const round = (n: number) => (r.limit === 'usd' ? Math.round(n * 1e6) / 1e6 : n);
  const owner = r.account.startsWith('swarm:') ? `swarm "${r.account.slice(6)}"` : r.account.startsWith('key:') ? `key "${r.account.slice(4)}"` : r.account;
  const message =
    r.limit === 'wallMs'
      ? `budget wallMs (${r.max} ms) of ${owner} ran out: ${r.spent} ms elapsed; extend the budget to go on, or stop the swarm`
      : `budget ${r.limit} (${r.max}) of ${owner} would be exceeded: ${round(r.spent)} spent, ${round(r.left)} left, the next call needs up to ${round(r.wanted)}; extend the budget to go on, or stop the swarm`;
  return { type: LIMIT_PAUSE, message, limit: { limit: r.limit, max: r.max, spent: round(r.spent), left: round(r.left), account: r.account } };
}
