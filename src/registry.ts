/**
 * The registry of a runtime: its swarm definitions, agents and tools, checked together when
 * the runtime is created, and the resolution of a definition for one run.
 *
 * @module
 */
import { z } from 'zod';
import type { ToolSpec } from '../machines/messages.js';
import type { Customization, HandoffTarget, ModelStepInput } from '../machines/round.js';
import type { ResolvedHandoff, SwarmConfig } from '../machines/swarm.js';
import { BUILTIN_TOOLS, REGISTRY_HANDOFF, REGISTRY_SEARCH } from '../actors/index.js';
import {
  type AgentDefinition,
  defineSwarm,
  resolveFromInput,
  type SwarmDefinition,
  type SwarmOverrides,
  type ToolEntry,
} from './define.js';
import { DefinitionError } from './errors.js';
import { type Handoff, handoffToolName } from './handoff.js';
import { fallbackCard, type RemoteCard } from './remote.js';
import { searchCards, type SwarmCard } from './swarm-registry.js';
import { jsonSchemaOf, tool, type Tool, TOOL_NAME, validate } from './tool.js';

const ID = /^[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,127}$/;

/**
 * The definition id ad-hoc swarms run under (reserved).
 *
 * @example
 * registry.swarm(ADHOC_ID)?.name // 'Ad-hoc swarm'
 */
export const ADHOC_ID = 'xswarm.adhoc';

const customizationSchema = z.strictObject({
  additional_instructions: z.string().optional(),
  additional_agents: z.array(z.string()).optional(),
  additional_tools: z.array(z.string()).optional(),
  max_turns_override: z.number().int().min(1).max(1000).optional(),
});

/**
 * What a run resolves a definition with, besides its input.
 *
 * @example
 * const options: ResolveOptions = { overrides: { instructions: 'Be brief.' }, label: { name: 'Weekend planner' } };
 */
export interface ResolveOptions {
  overrides?: SwarmOverrides;
  customization?: Customization;
  /** JSON Schema of an ad-hoc swarm's result. */
  result?: Record<string, unknown>;
  /** Name and description of an ad-hoc swarm. */
  label?: { name?: string; description?: string };
  /** The handoffs already evaluated for this input (so a function of the input runs once). */
  handoffs?: readonly Handoff[];
}

/**
 * Holds and checks definitions. Every mistake found here is a {@link DefinitionError} naming
 * the definition and what is wrong with it.
 *
 * @example
 * const registry = new Registry([planner], [weather], []);
 * registry.swarm('activity-planner');
 */
export class Registry {
  private readonly swarms = new Map<string, SwarmDefinition>();
  private readonly agents = new Map<string, AgentDefinition>();
  private readonly tools = new Map<string, Tool>();
  private readonly specCache = new WeakMap<readonly string[], WeakMap<readonly HandoffTarget[], ToolSpec[]>>();
  private readonly agentSpecCache = new WeakMap<readonly string[], ToolSpec[]>();
  private readonly zodFromJson = new WeakMap<object, z.ZodType>();
  private readonly fixedConfigs = new WeakMap<SwarmDefinition, SwarmConfig>();
  private readonly textResults = new WeakMap<SwarmDefinition, boolean>();
  /** Cards of remote agents, fetched by the runtime before a run resolves its handoffs. */
  readonly remoteCards = new Map<string, RemoteCard>();
  /** The configuration of a live swarm (set by the runtime), for per-swarm tool settings. */
  configOf: (swarmId: string) => SwarmConfig | undefined = () => undefined;

  constructor(swarms: readonly SwarmDefinition[], agents: readonly AgentDefinition[], tools: readonly Tool[]) {
    for (const t of tools) this.addTool(t, 'tools');
    for (const agent of agents) this.addAgent(agent, 'agents');
    for (const swarm of swarms) {
      if (this.swarms.has(swarm.id)) throw new DefinitionError(`Duplicate swarm id "${swarm.id}"`);
      this.addSwarm(swarm, 'swarms');
    }
    this.swarms.set(ADHOC_ID, defineSwarm({ id: ADHOC_ID, name: 'Ad-hoc swarm', instructions: 'Ad-hoc swarm' }));
    this.tools.set(REGISTRY_SEARCH, this.searchTool());
    // Agents and swarms named by definition inside static handoff lists register themselves,
    // and so do the ones those swarms name in turn.
    const pending = [...this.swarms.values()];
    for (let swarm = pending.pop(); swarm; swarm = pending.pop()) {
      if (!Array.isArray(swarm.handoffs)) continue;
      for (const h of swarm.handoffs as readonly Handoff[]) {
        if (h.kind === 'agent' && typeof h.agent !== 'string') this.addAgent(h.agent, `handoffs of swarm "${swarm.id}"`);
        if (h.kind === 'swarm' && typeof h.swarm !== 'string' && this.swarms.get(h.swarm.id) !== h.swarm) {
          this.addSwarm(h.swarm, `handoffs of swarm "${swarm.id}"`);
          pending.push(h.swarm);
        }
      }
    }
    for (const swarm of this.swarms.values()) if (swarm.id !== ADHOC_ID) this.checkStatic(swarm);
  }

  private addSwarm(swarm: SwarmDefinition, where: string): void {
    if (!ID.test(swarm.id)) throw new DefinitionError(`Swarm id "${swarm.id}" in ${where} is invalid: use letters, digits, _ . : -`);
    if (swarm.id === ADHOC_ID) throw new DefinitionError(`Swarm id "${ADHOC_ID}" is reserved for ad-hoc swarms`);
    const known = this.swarms.get(swarm.id);
    if (known && known !== swarm) throw new DefinitionError(`Duplicate swarm id "${swarm.id}" in ${where}`);
    this.swarms.set(swarm.id, swarm);
  }

  /** The swarm definition with this id, or undefined. */
  swarm(id: string): SwarmDefinition | undefined {
    return this.swarms.get(id);
  }

  /** The agent with this id, or undefined. */
  agent(id: string): AgentDefinition | undefined {
    return this.agents.get(id);
  }

  /** The tool with this name, or undefined. */
  tool(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  private addAgent(agent: AgentDefinition, where: string): void {
    if (!ID.test(agent.id)) throw new DefinitionError(`Agent id "${agent.id}" in ${where} is invalid: use letters, digits, _ . : -`);
    const known = this.agents.get(agent.id);
    if (known && known !== agent) throw new DefinitionError(`Duplicate agent id "${agent.id}" in ${where}`);
    if (!Number.isInteger(agent.maxTurns) || agent.maxTurns < 1) {
      throw new DefinitionError(`Agent "${agent.id}": maxTurns must be a positive integer`);
    }
    this.agents.set(agent.id, agent);
    for (const t of agent.tools) this.addTool(t, `agent "${agent.id}"`);
  }

  private addTool(t: Tool, where: string): void {
    if (!TOOL_NAME.test(t.name)) {
      throw new DefinitionError(`Tool name "${t.name}" in ${where} is invalid: it must match ${TOOL_NAME.source}`);
    }
    if (
      (BUILTIN_TOOLS as readonly string[]).includes(t.name) ||
      t.name.startsWith('handoff_to_') ||
      t.name.startsWith('swarm_registry_')
    ) {
      throw new DefinitionError(`Tool name "${t.name}" in ${where} is reserved for built-ins and handoffs`);
    }
    const known = this.tools.get(t.name);
    if (known && known !== t) throw new DefinitionError(`Two different tools are named "${t.name}" (${where})`);
    this.tools.set(t.name, t);
  }

  /** Tool names of a tools list, registering the tools; the registry marker adds its two tools. */
  private toolNames(entries: readonly ToolEntry[], where: string): string[] {
    const names: string[] = [];
    for (const entry of entries) {
      if (entry.kind === 'swarm-registry') names.push(REGISTRY_SEARCH, REGISTRY_HANDOFF);
      else {
        this.addTool(entry, where);
        names.push(entry.name);
      }
    }
    if (new Set(names).size !== names.length) throw new DefinitionError(`${where} lists a tool twice`);
    return names;
  }

  private checkStatic(swarm: SwarmDefinition): void {
    if (Array.isArray(swarm.tools)) this.toolNames(swarm.tools as readonly ToolEntry[], `swarm "${swarm.id}"`);
    if (Array.isArray(swarm.handoffs)) this.resolveHandoffs(swarm.id, swarm.handoffs as readonly Handoff[]);
    if (typeof swarm.maxTurns === 'number') checkMaxTurns(swarm.id, swarm.maxTurns);
    if (typeof swarm.instructions === 'string' && swarm.instructions.trim() === '') {
      throw new DefinitionError(`Swarm "${swarm.id}" has empty instructions`);
    }
  }

  private agentHandoff(agent: AgentDefinition, description: string | undefined): ResolvedHandoff {
    return {
      toolName: handoffToolName(agent.id),
      kind: 'agent',
      agentId: agent.id,
      description: description ?? agent.description,
      agent: { instructions: agent.instructions, tools: agent.tools.map((t) => t.name), maxTurns: agent.maxTurns },
    };
  }

  /** Resolves handoffs to what the machine needs; unknown targets are definition errors. */
  resolveHandoffs(swarmId: string, handoffs: readonly Handoff[]): ResolvedHandoff[] {
    const resolved = handoffs.map((h): ResolvedHandoff => {
      switch (h.kind) {
        case 'agent': {
          const id = typeof h.agent === 'string' ? h.agent : h.agent.id;
          const agent = this.agents.get(id);
          if (!agent) throw new DefinitionError(`Swarm "${swarmId}" hands off to unknown agent "${id}"`);
          return this.agentHandoff(agent, h.description);
        }
        case 'inline': {
          if (!ID.test(h.id)) throw new DefinitionError(`Inline agent id "${h.id}" in swarm "${swarmId}" is invalid`);
          return {
            toolName: handoffToolName(h.id),
            kind: 'agent',
            agentId: h.id,
            description: h.description,
            agent: { instructions: h.instructions, tools: this.toolNames(h.tools, `inline agent "${h.id}"`), maxTurns: h.maxTurns },
          };
        }
        case 'remote': {
          const card = this.remoteCards.get(h.url) ?? fallbackCard(h.url);
          return {
            toolName: handoffToolName(card.name),
            kind: 'remote',
            agentId: card.name,
            url: h.url,
            description: h.description ?? card.description,
          };
        }
        case 'swarm': {
          const id = typeof h.swarm === 'string' ? h.swarm : h.swarm.id;
          const child = this.swarms.get(id);
          if (!child || id === ADHOC_ID) throw new DefinitionError(`Swarm "${swarmId}" hands off to unknown swarm "${id}"`);
          return {
            toolName: handoffToolName(id),
            kind: 'swarm',
            definitionId: id,
            description: h.description ?? child.description,
            structured: !(child.input instanceof z.ZodString),
            customizable: h.isCustomizable,
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

  /**
   * Resolves a definition for one (already validated) input into the JSON-safe configuration
   * the machine runs with: overrides replace parts, a customization extends them. Throws a
   * {@link DefinitionError} when something resolves to an invalid value.
   */
  resolve(def: SwarmDefinition, input: unknown, options: ResolveOptions = {}): SwarmConfig {
    // A definition with nothing to compute resolves the same way every time: share the result
    // (configs are never mutated), which also lets the tool-spec caches hit across runs.
    const fixed = isFixed(def) && !options.overrides && !options.customization && !options.result && !options.label;
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
    const config: SwarmConfig = {
      instructions,
      maxTurns,
      tools: this.toolNames(toolEntries, `swarm "${def.id}"`),
      handoffs: this.resolveHandoffs(def.id, options.handoffs ?? resolveFromInput(o.handoffs ?? def.handoffs, input)),
    };
    const registryTools = toolEntries.find((t) => t.kind === 'swarm-registry');
    if (registryTools) config.registryLimit = registryTools.limit;
    if (options.result) config.result = options.result;
    if (options.label) config.label = options.label;
    return options.customization ? this.customize(def.id, config, options.customization) : config;
  }

  /** Extends a configuration with a customization; it never removes anything. */
  private customize(swarmId: string, config: SwarmConfig, c: Customization): SwarmConfig {
    const checked = this.checkCustomization(c);
    if (!checked.ok) throw new DefinitionError(`Invalid customization for swarm "${swarmId}": ${checked.error}`);
    const handoffs = [...config.handoffs];
    for (const id of c.additional_agents ?? []) {
      const h = this.agentHandoff(this.agents.get(id)!, undefined);
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

  /** Validates a customization's shape and that what it adds is registered. */
  checkCustomization(value: unknown): { ok: true; value: Customization } | { ok: false; error: string } {
    const shape = validate(customizationSchema, value);
    if (!shape.ok) return shape;
    const c = shape.value as Customization;
    const unknownAgents = (c.additional_agents ?? []).filter((id) => !this.agents.has(id));
    if (unknownAgents.length > 0) return { ok: false, error: `unknown agents: ${unknownAgents.join(', ')}` };
    const unknownTools = (c.additional_tools ?? []).filter((n) => !this.tools.has(n) || n === REGISTRY_SEARCH);
    if (unknownTools.length > 0) return { ok: false, error: `unknown tools: ${unknownTools.join(', ')}` };
    return { ok: true, value: c };
  }

  /** A swarm handoff's arguments as the child's input, validated. */
  childInput(definitionId: string, args: Record<string, unknown>) {
    const def = this.swarms.get(definitionId);
    if (!def) return { ok: false as const, error: `unknown swarm "${definitionId}"` };
    return validate(def.input, isObjectSchema(def.input) ? args : args.input);
  }

  /** Whether a swarm's result is plain text, so clean text completes it. */
  resultIsText(def: SwarmDefinition, config: SwarmConfig | undefined): boolean {
    if (config?.result) return config.result.type === 'string';
    let text = this.textResults.get(def);
    if (text === undefined) this.textResults.set(def, (text = def.result instanceof z.ZodString));
    return text;
  }

  /** The zod schema a swarm's result is checked with (an ad-hoc swarm's comes from its config). */
  resultSchema(def: SwarmDefinition, config: SwarmConfig | undefined): z.ZodType {
    if (!config?.result) return def.result;
    let schema = this.zodFromJson.get(config.result);
    if (!schema) {
      schema = z.fromJSONSchema(config.result as Parameters<typeof z.fromJSONSchema>[0]);
      this.zodFromJson.set(config.result, schema);
    }
    return schema;
  }

  /** The tool specs a model sees in one step (cached per resolved configuration). */
  toolSpecs(input: ModelStepInput, resultJson: Record<string, unknown> | undefined): ToolSpec[] {
    if (!input.orchestrator) {
      let specs = this.agentSpecCache.get(input.tools);
      if (!specs) {
        specs = input.tools.map((name) => this.toolSpec(name));
        this.agentSpecCache.set(input.tools, specs);
      }
      return specs;
    }
    let byHandoffs = this.specCache.get(input.tools);
    if (!byHandoffs) {
      byHandoffs = new WeakMap();
      this.specCache.set(input.tools, byHandoffs);
    }
    let specs = byHandoffs.get(input.handoffs);
    if (!specs) {
      const def = this.swarms.get(input.definitionId);
      specs = [
        ...input.tools.map((name) => this.toolSpec(name)),
        ...input.handoffs.map((h) => this.handoffSpec(h)),
        ...builtinSpecs(resultJson ?? (def ? jsonSchemaOf(def.result) : { type: 'string' })),
      ];
      byHandoffs.set(input.handoffs, specs);
    }
    return specs;
  }

  private toolSpec(name: string): ToolSpec {
    if (name === REGISTRY_HANDOFF) return registryHandoffSpec();
    const t = this.tools.get(name);
    if (!t) throw new Error(`Tool "${name}" is not registered with this runtime`);
    return { name: t.name, description: t.description, parameters: jsonSchemaOf(t.parameters) };
  }

  private handoffSpec(h: HandoffTarget): ToolSpec {
    if (h.kind === 'agent' || h.kind === 'remote') {
      return { name: h.toolName, description: h.description, parameters: requestParameters(`What you need from ${h.agentId}`) };
    }
    const child = this.swarms.get(h.definitionId)!;
    let parameters: Record<string, unknown>;
    if (!h.structured) parameters = requestParameters(`The task for ${h.definitionId}`);
    else if (isObjectSchema(child.input)) parameters = { ...jsonSchemaOf(child.input) };
    else parameters = { type: 'object', properties: { input: jsonSchemaOf(child.input) }, required: ['input'] };
    if (h.customizable) {
      const properties = { ...(parameters.properties as Record<string, unknown>), customization: customizationJson() };
      parameters = { ...parameters, properties };
    }
    return { name: h.toolName, description: h.description, parameters };
  }

  /** Cards of every registered definition, for the registry search. */
  cards(): SwarmCard[] {
    return [...this.swarms.values()]
      .filter((d) => d.id !== ADHOC_ID)
      .map((d) => ({
        id: d.id,
        name: d.name,
        description: d.description,
        inputSchema: jsonSchemaOf(d.input),
        resultSchema: jsonSchemaOf(d.result),
        capabilities: capabilitiesOf(d),
        customizable: d.customizable,
      }));
  }

  private searchTool(): Tool {
    return tool({
      name: REGISTRY_SEARCH,
      description:
        'Search the registered swarms by keywords. Returns matching swarms with their id, description, input and result schemas, capabilities and whether they can be customized.',
      parameters: z.object({
        query: z.string().describe('Keywords describing the task'),
        capabilities: z.array(z.string()).optional().describe('Capabilities every match must have'),
      }),
      execute: ({ query, capabilities }, ctx) => ({
        matches: searchCards(this.cards(), query, capabilities ?? [], this.configOf(ctx.swarmId)?.registryLimit ?? 5),
      }),
    });
  }
}

/** Whether nothing of a definition depends on its input (remote cards are fetched per run). */
function isFixed(def: SwarmDefinition): boolean {
  return (
    typeof def.instructions === 'string' &&
    typeof def.maxTurns === 'number' &&
    Array.isArray(def.tools) &&
    Array.isArray(def.handoffs) &&
    !(def.handoffs as readonly Handoff[]).some((h) => h.kind === 'remote')
  );
}

function isObjectSchema(schema: z.ZodType): boolean {
  return jsonSchemaOf(schema).type === 'object';
}

function capabilitiesOf(def: SwarmDefinition): string[] {
  const caps: string[] = [];
  if (Array.isArray(def.tools)) {
    for (const t of def.tools as readonly ToolEntry[]) if (t.kind === 'tool') caps.push(t.name);
  }
  if (Array.isArray(def.handoffs)) {
    for (const h of def.handoffs as readonly Handoff[]) {
      if (h.kind === 'agent') caps.push(typeof h.agent === 'string' ? h.agent : h.agent.id);
      else if (h.kind === 'swarm') caps.push(typeof h.swarm === 'string' ? h.swarm : h.swarm.id);
      else if (h.kind === 'inline') caps.push(h.id);
      else caps.push(h.url);
    }
  }
  return caps;
}

function checkMaxTurns(swarmId: string, maxTurns: unknown): void {
  if (typeof maxTurns !== 'number' || !Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new DefinitionError(`Swarm "${swarmId}": maxTurns must be a positive integer, got ${String(maxTurns)}`);
  }
}

function requestParameters(description: string): Record<string, unknown> {
  return {
    type: 'object',
    properties: { request: { type: 'string', description } },
    required: ['request'],
    additionalProperties: false,
  };
}

function customizationJson(): Record<string, unknown> {
  return {
    type: 'object',
    description: 'Optional: extend the child swarm for this run (never removes anything)',
    properties: {
      additional_instructions: { type: 'string' },
      additional_agents: { type: 'array', items: { type: 'string' }, description: 'Ids of registered agents to add' },
      additional_tools: { type: 'array', items: { type: 'string' }, description: 'Names of registered tools to add' },
      max_turns_override: { type: 'integer', minimum: 1 },
    },
    additionalProperties: false,
  };
}

function registryHandoffSpec(): ToolSpec {
  return {
    name: REGISTRY_HANDOFF,
    description:
      'Hand a task to a swarm found with swarm_registry_search (only ids it returned). Give `request` for text-input swarms or `input` for structured ones.',
    parameters: {
      type: 'object',
      properties: {
        swarm_id: { type: 'string' },
        request: { type: 'string' },
        input: { type: 'object' },
        customization: customizationJson(),
      },
      required: ['swarm_id'],
      additionalProperties: false,
    },
  };
}

/**
 * The orchestrator's built-in tools, with `complete` typed by the swarm's result schema.
 *
 * @example
 * builtinSpecs({ type: 'string' }).map((s) => s.name) // ['complete', 'pause', 'fail']
 */
export function builtinSpecs(resultSchema: Record<string, unknown>): ToolSpec[] {
  return [
    {
      name: 'complete',
      description: 'Finish the task with its final result.',
      parameters: { type: 'object', properties: { result: resultSchema }, required: ['result'], additionalProperties: false },
    },
    {
      name: 'pause',
      description: 'Pause and ask a human. The human answer comes back as this tool result.',
      parameters: {
        type: 'object',
        properties: {
          reason: { type: 'string', description: 'The question or reason for the human' },
          context: { type: 'string', description: 'Anything the human needs to know to answer' },
          type: { type: 'string', enum: ['HITL', 'APPROVAL_NEEDED', 'EMERGENCY'] },
        },
        required: ['reason'],
        additionalProperties: false,
      },
    },
    {
      name: 'fail',
      description: 'Give up: the task cannot be done.',
      parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'], additionalProperties: false },
    },
  ];
}
