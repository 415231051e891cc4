/**
 * The user's definitions made controllable for one path run: every tool (the orchestrator's,
 * each agent's, each inline agent's, each child swarm's) counts its executions, fails where the
 * path says, is gated where the path says, runs its override or else the user's own `execute`;
 * the guardrail a path makes reject rejects. Everything else of the definitions is kept as is.
 *
 * @module
 */
import type { AgentDefinition } from '../define/agent.js';
import type { Guardrail } from '../define/guardrail.js';
import type { Handoff } from '../define/handoff.js';
import type { FromInput, SwarmDefinition, ToolEntry } from '../define/swarm.js';
import type { Tool, ToolContext } from '../define/tool.js';
import type { PathRun } from './control.js';
import { isTool } from './shape.js';

/** The least `maxTurns` of the budget path: room for the budget to trip first. */
const BUDGET_PATH_TURNS = 50;

/** Definitions rewritten for one run, each once (handoffs by definition and by id then agree). */
export class Instrumented {
  private readonly done = new Map<object, object>();

  constructor(private readonly run: PathRun) {}

  /** `def` with its tools, handoffs and (for the swarm under test) guardrails instrumented. */
  swarm<D extends SwarmDefinition<any, any>>(def: D, root = false): D {
    const seen = this.done.get(def);
    if (seen) return seen as D;
    const rewritten = Object.freeze({
      ...(root ? this.limits(def) : def),
      tools: mapFromInput(def.tools, (list: readonly ToolEntry[]) => list.map((e) => (isTool(e) ? this.tool(e, def.id) : e))),
      handoffs: mapFromInput(def.handoffs, (list: readonly Handoff[]) => list.map((h) => this.handoff(h))),
      guardrails: root ? this.guardrails(def.guardrails) : def.guardrails,
    }) as D;
    this.done.set(def, rewritten);
    return rewritten;
  }

  /** `agent` with its tools instrumented. */
  agent(agent: AgentDefinition): AgentDefinition {
    const seen = this.done.get(agent);
    if (seen) return seen as AgentDefinition;
    const rewritten = Object.freeze({ ...agent, tools: agent.tools.map((t) => this.tool(t, agent.id)) });
    this.done.set(agent, rewritten);
    return rewritten;
  }

  /** `t`, called by `owner`, instrumented (see the module comment). */
  tool(t: Tool, owner: string): Tool {
    const run = this.run;
    const gated = run.path.control.gated;
    const gate = gated && gated.owner === owner && gated.tool.name === t.name;
    return Object.freeze({
      ...t,
      ...(gate ? { needsApproval: true } : {}),
      execute: async (args: unknown, ctx: ToolContext) => {
        run.ledger.executed(`${owner}/${t.name}`, ctx.idempotencyKey);
        if (run.interruptsTool(owner, t.name)) await run.interrupt(ctx.signal);
        if (run.errs(owner, t.name)) throw new Error(`${t.name} failed (an error the test path makes)`);
        const override = run.overrides[t.name];
        if (!override) return t.execute(args as never, ctx);
        return override(args, { ...ctx, effect: (key?: string) => run.ledger.effect(ctx.idempotencyKey, key) });
      },
    }) as Tool;
  }

  /**
   * The swarm under test with the limit its path does not test out of the way: the `maxTurns`
   * path runs without the budget (else the budget could pause it first), the budget path with
   * at least 50 turns (else `maxTurns` could).
   */
  private limits<D extends SwarmDefinition<any, any>>(def: D): D {
    const loop = this.run.path.control.loop;
    if (loop === 'maxTurns' && def.budget !== undefined) {
      const { budget: _budget, ...rest } = def;
      return rest as D;
    }
    if (loop === 'budget') return { ...def, maxTurns: Math.max(this.run.shape.maxTurns, BUDGET_PATH_TURNS) };
    return def;
  }

  private handoff(h: Handoff): Handoff {
    switch (h.kind) {
      case 'agent':
        return typeof h.agent === 'string' ? h : Object.freeze({ ...h, agent: this.agent(h.agent) });
      case 'swarm':
        return typeof h.swarm === 'string' ? h : Object.freeze({ ...h, swarm: this.swarm(h.swarm) });
      case 'inline':
        return Object.freeze({ ...h, tools: h.tools.map((t) => this.tool(t, h.id)) });
      default:
        return h;
    }
  }

  private guardrails(g: SwarmDefinition['guardrails']): SwarmDefinition['guardrails'] {
    const target = this.run.path.control.guardrail;
    if (!target) return g;
    const list = (g[target.step] ?? []) as readonly Guardrail<unknown>[];
    const replaced = list.map((one, i) => (i === target.index ? { ...one, check: () => `rejected by the test path (${one.name})` } : one));
    return Object.freeze({ ...g, [target.step]: Object.freeze(replaced) });
  }
}

/** A {@link FromInput} with `f` applied to its value, whether given as a value or a function of the input. */
function mapFromInput<T, I>(value: FromInput<T, I>, f: (v: T) => T): FromInput<T, I> {
  if (typeof value === 'function') return (args: { input: I }) => f((value as (a: { input: I }) => T)(args));
  return f(value);
}
