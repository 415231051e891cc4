/**
 * Resolution: a definition and one run's input become the JSON-safe configuration the machine
 * runs with, and each declared handoff becomes the target the machine calls (an unknown target
 * is a definition error). Overrides replace parts of a definition, a customization extends it.
 *
 * @module
 */
import type { SwarmLabel } from '../../machines/events.js';
import { z } from 'zod';
import type { Customization } from '../../machines/calls/swarm.js';
import type { ResolvedHandoff, SwarmConfig } from '../../machines/swarm.js';
import type { Catalog } from './catalog.js';
import { checkHistory } from '../define/history.js';
import { checkOnLimit, resolveFromInput, type SwarmDefinition, type SwarmOverrides } from '../define/swarm.js';
import type { AgentDefinition } from '../define/agent.js';
import { ADHOC_ID, agentOfHosted, DEFINITION_ID, hostedAgentId } from '../define/ids.js';
import { DefinitionError } from '../errors.js';
import { checkGuardrails, checkStall, type Guardrail } from '../define/guardrail.js';
import type { GuardrailNames, GuardrailStep } from '../../machines/guardrail.js';
import { resolveBestAgent } from './best-agent.js';
import { checkCustomization } from './customization.js';
import { type Handoff, handoffTargetId, handoffToolName } from '../define/handoff.js';
import { fallbackCard } from '../a2a/remote.js';
import type { RemoteCards } from './remote-cards.js';
import type { BudgetAccountRef } from '../../machines/budget.js';
import { swarmBudget } from './budget.js';

/** What a run resolves a definition with, besides its input. */
export interface ResolveOptions {
  overrides?: SwarmOverrides;
  customization?: Customization;
  /** JSON Schema of an ad-hoc swarm's result. */
  result?: Record<string, unknown>;
  /** Name and description of an ad-hoc swarm. */
  label?: SwarmLabel;
  /** The handoffs already evaluated for this input (so a function of the input runs once). */
  handoffs?: readonly Handoff[];
  /** An ad-hoc swarm's guardrails, per step: registered by name, stored as names. */
  guardrails?: AdhocGuardrails;
  /** The budget accounts enclosing the swarm (a child's parent chain, a team's), outermost first. */
  budgetOuter?: readonly BudgetAccountRef[];
}

/** An ad-hoc swarm's guardrails (`adhoc().run({ guardrails })`), per step. */
export type AdhocGuardrails = { [S in GuardrailStep]?: readonly Guardrail<any>[] };

/** Where resolution finds the cards of remote agents (fetched before a run resolves, see `remote-cards.ts`). */
export type CardSource = Pick<RemoteCards, 'card'>;

const NO_CARDS: CardSource = { card: () => undefined };

/** The handoff to a registered agent, as the machine runs it. */
export function agentHandoff(agent: AgentDefinition, description: string | undefined): ResolvedHandoff {
  return {
    toolName: handoffToolName(agent.id),
    kind: 'agent',
    agentId: agent.id,
    description: description ?? agent.description,
    agent: {
      instructions: agent.instructions,
      tools: agent.tools.map((t) => t.name),
      maxTurns: agent.maxTurns,
      ...(agent.history ? { history: agent.history } : {}),
      ...(agent.timeoutMs !== undefined ? { timeoutMs: agent.timeoutMs } : {}),
      ...(agent.onTimeout === 'fail' ? { onTimeout: 'fail' as const } : {}),
    },
  };
}

/**
 * Resolves the handoffs of swarm `swarmId` to what the machine needs; unknown targets, invalid
 * inline ids, and two handoffs with one tool name are definition errors. A remote agent whose
 * card is not known is named from its URL.
 */
export function resolveHandoffs(catalog: Catalog, swarmId: string, handoffs: readonly Handoff[], cards: CardSource = NO_CARDS): ResolvedHandoff[] {
  const resolved = handoffs.map((h): ResolvedHandoff => {
    switch (h.kind) {
      case 'agent': {
        const id = handoffTargetId(h);
        const agent = catalog.agent(id);
        if (agent) return agentHandoff(agent, h.description);
        if (!catalog.elsewhere) throw new DefinitionError(`Swarm "${swarmId}" hands off to unknown agent "${id}"`);
        // Hosted by another runtime: run there as a swarm of its own (see catalog/hosted.ts).
        const definitionId = hostedAgentId(id);
        return {
          toolName: handoffToolName(id),
          kind: 'swarm',
          definitionId,
          description: h.description ?? catalog.elsewhere.card(definitionId)?.description ?? `Agent "${id}"`,
          structured: false,
          customizable: false,
        };
      }
      case 'inline': {
        if (!DEFINITION_ID.test(h.id)) throw new DefinitionError(`Inline agent id "${h.id}" in swarm "${swarmId}" is invalid`);
        checkMaxTurns(h.id, h.maxTurns, 'Inline agent');
        return {
          toolName: handoffToolName(h.id),
          kind: 'agent',
          agentId: h.id,
          description: h.description,
          agent: { instructions: h.instructions, tools: catalog.toolNames(h.tools, `inline agent "${h.id}"`), maxTurns: h.maxTurns },
        };
      }
      case 'remote': {
        const card = cards.card(h.url) ?? fallbackCard(h.url);
        return {
          toolName: handoffToolName(card.name),
          kind: 'remote',
          agentId: card.name,
          url: h.url,
          description: h.description ?? card.description,
          ...(h.timeoutMs !== undefined ? { timeoutMs: h.timeoutMs } : {}),
          ...(h.onTimeout === 'fail' ? { onTimeout: 'fail' as const } : {}),
        };
      }
      case 'best':
        return resolveBestAgent(catalog.registry, swarmId, h);
      case 'swarm': {
        const id = handoffTargetId(h);
        const child = catalog.swarm(id);
        if (id === ADHOC_ID || agentOfHosted(id) !== undefined || (!child && !catalog.elsewhere)) {
          throw new DefinitionError(`Swarm "${swarmId}" hands off to unknown swarm "${id}"`);
        }
        if (!child) {
          const card = catalog.elsewhere!.card(id);
          return {
            toolName: handoffToolName(id),
            kind: 'swarm',
            definitionId: id,
            description: h.description ?? card?.description ?? `Swarm "${id}"`,
            structured: card?.structured ?? false,
            customizable: h.isCustomizable,
            ...(h.timeoutMs !== undefined ? { timeoutMs: h.timeoutMs } : {}),
            ...(h.onTimeout === 'fail' ? { onTimeout: 'fail' as const } : {}),
          };
        }
        const timeoutMs = h.timeoutMs ?? child.timeoutMs;
        const onTimeout = h.onTimeout ?? child.onTimeout;
        return {
          toolName: handoffToolName(id),
          kind: 'swarm',
          definitionId: id,
          description: h.description ?? child.description,
          structured: !(child.input instanceof z.ZodString),
          customizable: h.isCustomizable,
          ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          ...(timeoutMs !== undefined && onTimeout === 'fail' ? { onTimeout: 'fail' as const } : {}),
        };
      }
    }
  });
  const seen = new Set<string>();
  for (const h of resolved) {
    if (h.toolName.length > 64) throw new DefinitionError(`Handoff tool name "${h.toolName}" is longer than 64 characters`);
    if (seen.has(h.toolName)) throw new DefinitionError(`Swarm "${swarmId}" has two handoffs named "${h.toolName}"`);
    seen.add(h.toolName);
  }
  return resolved;
}

/** Resolves definitions for runs, sharing the configuration of a definition that depends on nothing. */
export class Resolver {
  private readonly fixedConfigs = new WeakMap<SwarmDefinition, SwarmConfig>();

  constructor(
    private readonly catalog: Catalog,
    private readonly cards: CardSource,
  ) {}

  /**
   * Resolves a definition for one (already validated) input into the configuration the machine
   * runs with. Throws a {@link DefinitionError} when something resolves to an invalid value.
   */
  resolve(def: SwarmDefinition, input: unknown, options: ResolveOptions = {}): SwarmConfig {
    // A definition with nothing to compute resolves the same way every time: share the result
    // (configs are never mutated), which also lets the tool-spec caches hit across runs.
    const fixed =
      isFixed(def, this.catalog) && !options.overrides && !options.customization && !options.result && !options.label && !options.guardrails && !options.budgetOuter;
    const cached = fixed ? this.fixedConfigs.get(def) : undefined;
    if (cached) return cached;
    const config = this.resolveNow(def, input, options);
    if (fixed) this.fixedConfigs.set(def, config);
    return config;
  }

  private resolveNow(def: SwarmDefinition, input: unknown, options: ResolveOptions): SwarmConfig {
    const o = options.overrides ?? {};
    const instructions = resolveFromInput(o.instructions ?? def.instructions, input);
    if (typeof instructions !== 'string' || instructions.trim() === '') {
      throw new DefinitionError(`Swarm "${def.id}": instructions resolved to an empty value`);
    }
    const maxTurns = resolveFromInput(o.maxTurns ?? def.maxTurns, input);
    checkMaxTurns(def.id, maxTurns);
    const toolEntries = resolveFromInput(o.tools ?? def.tools, input);
    const handoffs = options.handoffs ?? resolveFromInput(o.handoffs ?? def.handoffs, input);
    const config: SwarmConfig = {
      instructions,
      maxTurns,
      tools: this.catalog.toolNames(toolEntries, `swarm "${def.id}"`),
      handoffs: resolveHandoffs(this.catalog, def.id, handoffs, this.cards),
    };
    const registryTools = toolEntries.find((t) => t.kind === 'swarm-registry');
    if (registryTools) config.registryLimit = registryTools.limit;
    if (options.result) config.result = options.result;
    if (options.label) config.label = options.label;
    // Stored only when it differs from the default (pause), so configurations stay as they were.
    if (checkOnLimit(o.onLimit ?? def.onLimit, `Swarm "${def.id}"`) === 'fail') config.onLimit = 'fail';
    const stall = checkStall(o.stall ?? def.stall, `Swarm "${def.id}"`);
    if (stall) config.stall = stall;
    if (options.guardrails) config.guardrails = this.guardrailNames(def.id, options.guardrails);
    const budget = swarmBudget(def, o, options.budgetOuter);
    if (budget) config.budget = budget;
    const history = checkHistory(o.history ?? def.history, `Swarm "${def.id}"`);
    if (history) config.history = history;
    return options.customization ? this.customize(def.id, config, options.customization) : config;
  }

  /** An ad-hoc swarm's guardrails, checked and registered, as the names its configuration stores. */
  private guardrailNames(swarmId: string, guardrails: AdhocGuardrails): GuardrailNames {
    const names: GuardrailNames = {};
    for (const step of ['input', 'response', 'toolCall', 'output'] as const) {
      const list = checkGuardrails(guardrails[step], step, `Swarm "${swarmId}"`);
      if (list.length > 0) names[step] = this.catalog.guardrailNames(list, `the guardrails of swarm "${swarmId}"`);
    }
    return names;
  }

  /** Extends a configuration with a customization; it never removes anything. */
  private customize(swarmId: string, config: SwarmConfig, c: Customization): SwarmConfig {
    const checked = checkCustomization(this.catalog, c);
    if (!checked.ok) throw new DefinitionError(`Invalid customization for swarm "${swarmId}": ${checked.error}`);
    const handoffs = [...config.handoffs];
    for (const id of c.additional_agents ?? []) {
      const h = agentHandoff(this.catalog.agent(id)!, undefined);
      if (!handoffs.some((x) => x.toolName === h.toolName)) handoffs.push(h);
    }
    const tools = [...config.tools];
    for (const name of c.additional_tools ?? []) if (!tools.includes(name)) tools.push(name);
    return {
      ...config,
      instructions: c.additional_instructions ? `${config.instructions}\n\n${c.additional_instructions}` : config.instructions,
      handoffs,
      tools,
      maxTurns: c.max_turns_override ?? config.maxTurns,
    };
  }
}

/**
 * Whether nothing of a definition depends on its input (the cards of remote agents and of
 * definitions hosted elsewhere are had per run: one missing at first may answer later; so are
 * the skill descriptions of the registry's agents).
 */
function isFixed(def: SwarmDefinition, catalog: Catalog): boolean {
  return (
    typeof def.instructions === 'string' &&
    typeof def.maxTurns === 'number' &&
    Array.isArray(def.tools) &&
    Array.isArray(def.handoffs) &&
    !(def.handoffs as readonly Handoff[]).some((h) => h.kind === 'remote' || h.kind === 'best' || hostedTarget(catalog, h) !== undefined)
  );
}

/**
 * The definition id a handoff reaches in another runtime, or undefined when its target is
 * registered here (or it is not an agent or swarm handoff).
 */
export function hostedTarget(catalog: Catalog, h: Handoff): string | undefined {
  if (!catalog.elsewhere) return undefined;
  if (h.kind === 'agent') {
    const id = handoffTargetId(h);
    return catalog.agent(id) ? undefined : hostedAgentId(id);
  }
  if (h.kind === 'swarm') {
    const id = handoffTargetId(h);
    return catalog.swarm(id) ? undefined : id;
  }
  return undefined;
}

/** Throws a {@link DefinitionError} unless `maxTurns` is a positive integer. */
export function checkMaxTurns(id: string, maxTurns: unknown, what: 'Swarm' | 'Agent' | 'Inline agent' = 'Swarm'): void {
  if (typeof maxTurns !== 'number' || !Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new DefinitionError(`${what} "${id}": maxTurns must be a positive integer, got ${String(maxTurns)}`);
  }
}
