/**
 * The registry of a runtime: its swarm definitions, agents and tools, checked together when
 * the runtime is created, and the resolution of a definition for one input.
 *
 * @module
 */
import type { ToolSpec } from '../machines/messages.js';
import type { HandoffTarget, ModelStepInput } from '../machines/round.js';
import type { ResolvedHandoff, SwarmConfig } from '../machines/swarm.js';
import { BUILTIN_TOOLS } from '../actors/index.js';
import { type AgentDefinition, resolveFromInput, type SwarmDefinition } from './define.js';
import { DefinitionError } from './errors.js';
import { type Handoff, handoffToolName } from './handoff.js';
import { jsonSchemaOf, type Tool, TOOL_NAME } from './tool.js';

const ID = /^[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,127}$/;

/**
 * Holds and checks definitions. Every mistake found here is a {@link DefinitionError} naming
 * the definition and what is wrong with it.
 *
 * @example
 * const registry = new Registry([planner], [weather]);
 * registry.swarm('activity-planner');
 */
export class Registry {
  private readonly swarms = new Map<string, SwarmDefinition>();
  private readonly agents = new Map<string, AgentDefinition>();
  private readonly tools = new Map<string, Tool>();
  private readonly specCache = new WeakMap<readonly string[], WeakMap<readonly HandoffTarget[], ToolSpec[]>>();
  private readonly agentSpecCache = new WeakMap<readonly string[], ToolSpec[]>();

  constructor(swarms: readonly SwarmDefinition[], agents: readonly AgentDefinition[]) {
    for (const agent of agents) this.addAgent(agent, 'agents');
    for (const swarm of swarms) {
      if (!ID.test(swarm.id)) throw new DefinitionError(`Swarm id "${swarm.id}" is invalid: use letters, digits, _ . : -`);
      if (this.swarms.has(swarm.id)) throw new DefinitionError(`Duplicate swarm id "${swarm.id}"`);
      this.swarms.set(swarm.id, swarm);
    }
    // Agents named by definition inside static handoff lists register themselves.
    for (const swarm of swarms) {
      if (Array.isArray(swarm.handoffs)) {
        for (const h of swarm.handoffs as readonly Handoff[]) {
          if (typeof h.agent !== 'string') this.addAgent(h.agent, `handoffs of swarm "${swarm.id}"`);
        }
      }
    }
    for (const swarm of swarms) this.checkStatic(swarm);
  }

  /** The swarm definition with this id, or undefined. */
  swarm(id: string): SwarmDefinition | undefined {
    return this.swarms.get(id);
  }

  /** All registered swarm definitions. */
  allSwarms(): SwarmDefinition[] {
    return [...this.swarms.values()];
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
    if ((BUILTIN_TOOLS as readonly string[]).includes(t.name) || t.name.startsWith('handoff_to_')) {
      throw new DefinitionError(`Tool name "${t.name}" in ${where} is reserved for built-ins and handoffs`);
    }
    const known = this.tools.get(t.name);
    if (known && known !== t) throw new DefinitionError(`Two different tools are named "${t.name}" (${where})`);
    this.tools.set(t.name, t);
  }

  private checkStatic(swarm: SwarmDefinition): void {
    if (Array.isArray(swarm.tools)) for (const t of swarm.tools as readonly Tool[]) this.addTool(t, `swarm "${swarm.id}"`);
    if (Array.isArray(swarm.handoffs)) this.resolveHandoffs(swarm.id, swarm.handoffs as readonly Handoff[]);
    if (typeof swarm.maxTurns === 'number') checkMaxTurns(swarm.id, swarm.maxTurns);
    if (typeof swarm.instructions === 'string' && swarm.instructions.trim() === '') {
      throw new DefinitionError(`Swarm "${swarm.id}" has empty instructions`);
    }
  }

  private resolveHandoffs(swarmId: string, handoffs: readonly Handoff[]): ResolvedHandoff[] {
    const seen = new Set<string>();
    return handoffs.map((h) => {
      const id = typeof h.agent === 'string' ? h.agent : h.agent.id;
      const agent = this.agents.get(id);
      if (!agent) throw new DefinitionError(`Swarm "${swarmId}" hands off to unknown agent "${id}"`);
      const toolName = handoffToolName(id);
      if (toolName.length > 64) throw new DefinitionError(`Handoff tool name "${toolName}" is longer than 64 characters`);
      if (seen.has(toolName)) throw new DefinitionError(`Swarm "${swarmId}" has two handoffs named "${toolName}"`);
      seen.add(toolName);
      return {
        toolName,
        kind: 'agent' as const,
        agentId: id,
        description: h.description ?? agent.description,
        agent: { instructions: agent.instructions, tools: agent.tools.map((t) => t.name), maxTurns: agent.maxTurns },
      };
    });
  }

  /**
   * Resolves a definition for one (already validated) input into the JSON-safe configuration
   * the machine runs with. Throws a {@link DefinitionError} when a function-valued part
   * yields something invalid.
   */
  resolve(def: SwarmDefinition, input: unknown): SwarmConfig {
    const instructions = resolveFromInput(def.instructions, input);
    if (typeof instructions !== 'string' || instructions.trim() === '') {
      throw new DefinitionError(`Swarm "${def.id}": instructions resolved to an empty value`);
    }
    const maxTurns = resolveFromInput(def.maxTurns, input);
    checkMaxTurns(def.id, maxTurns);
    const tools = resolveFromInput(def.tools, input);
    for (const t of tools) this.addTool(t, `swarm "${def.id}"`);
    const handoffs = this.resolveHandoffs(def.id, resolveFromInput(def.handoffs, input));
    const names = new Set(tools.map((t) => t.name));
    if (names.size !== tools.length) throw new DefinitionError(`Swarm "${def.id}" lists a tool twice`);
    return { instructions, maxTurns, tools: [...names], handoffs };
  }

  /** The tool specs a model sees in one step (cached per resolved configuration). */
  toolSpecs(input: ModelStepInput): ToolSpec[] {
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
        ...input.handoffs.map(handoffSpec),
        ...builtinSpecs(def ? jsonSchemaOf(def.result) : { type: 'string' }),
      ];
      byHandoffs.set(input.handoffs, specs);
    }
    return specs;
  }

  private toolSpec(name: string): ToolSpec {
    const t = this.tools.get(name);
    if (!t) throw new Error(`Tool "${name}" is not registered with this runtime`);
    return { name: t.name, description: t.description, parameters: jsonSchemaOf(t.parameters) };
  }
}

function checkMaxTurns(swarmId: string, maxTurns: unknown): void {
  if (typeof maxTurns !== 'number' || !Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new DefinitionError(`Swarm "${swarmId}": maxTurns must be a positive integer, got ${String(maxTurns)}`);
  }
}

function handoffSpec(h: HandoffTarget): ToolSpec {
  return {
    name: h.toolName,
    description: h.description,
    parameters: {
      type: 'object',
      properties: { request: { type: 'string', description: `What you need from ${h.agentId}` } },
      required: ['request'],
      additionalProperties: false,
    },
  };
}

/** The orchestrator's built-in tools, with `complete` typed by the swarm's result schema. */
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
