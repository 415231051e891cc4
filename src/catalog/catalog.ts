/**
 * The catalog of a runtime: its swarm definitions, agents and tools, checked together when the
 * runtime is created, and found by id afterwards. Every mistake found here is a
 * {@link DefinitionError} naming the definition and what is wrong with it.
 *
 * @module
 */
import type { SwarmConfig } from '../../machines/swarm.js';
import { BUILTIN_TOOLS, REGISTRY_HANDOFF, REGISTRY_SEARCH } from '../../actors/index.js';
import { DefinitionError } from '../errors.js';
import { type Handoff, handoffTargetId } from '../define/handoff.js';
import { registrySearchTool } from './registry-tools.js';
import type { SwarmCard } from '../define/swarm-registry.js';
import { checkMaxTurns, resolveHandoffs } from './resolve.js';
import { jsonSchemaOf, type Tool, TOOL_NAME } from '../define/tool.js';
import type { Elsewhere } from './elsewhere.js';
import { REGISTRY_RECORD_DEFINITION } from '../define/ids.js';
import type { AgentRegistry } from '../registry/registry.js';
import { defineSwarm, sameSwarm, type SwarmDefinition, type ToolEntry } from '../define/swarm.js';
import type { AgentDefinition } from '../define/agent.js';
import type { Guardrail } from '../define/guardrail.js';
import { agentAsSwarm } from './hosted.js';
import { agentOfHosted } from '../define/ids.js';
import { ADHOC_ID, DEFINITION_ID } from '../define/ids.js';

/** What a runtime is created with (`createRuntime`'s `swarms`, `agents` and `tools`). */
export interface CatalogEntries {
  swarms?: readonly SwarmDefinition<any, any>[] | undefined;
  agents?: readonly AgentDefinition[] | undefined;
  tools?: readonly Tool[] | undefined;
  /** Guardrails known by name: what ad-hoc swarms name, also after a restart. */
  guardrails?: readonly Guardrail<any>[] | undefined;
  /** The agent registry `handoff.toBestAgent(skill)` handoffs choose from. */
  registry?: AgentRegistry | undefined;
}

/** What the catalog reads from the rest of the runtime. */
export interface CatalogServices {
  /** The live swarms' hosts, by id: the registry search reads a swarm's result limit from its configuration. */
  configs?: ReadonlyMap<string, { config(): SwarmConfig }>;
  /** Definitions hosted by other runtimes (with a transport). */
  elsewhere?: Elsewhere | undefined;
}

/** Holds and checks the definitions of one runtime. */
export class Catalog {
  /** The current (highest) version of each swarm definition: what new runs use. */
  private readonly swarms = new Map<string, SwarmDefinition>();
  /** Every registered version of each swarm definition, by id then version (see `docs/deploys.md`). */
  private readonly versions = new Map<string, Map<number, SwarmDefinition>>();
  private readonly agents = new Map<string, AgentDefinition>();
  private readonly tools = new Map<string, Tool>();
  private readonly guardrails = new Map<string, Guardrail<unknown>>();
  /** The agent registry of `handoff.toBestAgent` (undefined: such a handoff is a definition error). */
  readonly registry: AgentRegistry | undefined;

  /**
   * Definitions hosted by other runtimes, when this runtime has a transport to them: handoffs
   * may then name ids that are not registered here, and each agent is also a swarm definition
   * other runtimes can run here (see `hosted.ts`).
   */
  readonly elsewhere: Elsewhere | undefined;

  /**
   * Registers and checks `entries`: agents and swarms named by definition inside static handoff
   * lists register themselves.
   */
  constructor(entries: CatalogEntries, services: CatalogServices = {}) {
    this.elsewhere = services.elsewhere;
    const { configs } = services;
    this.registry = entries.registry;
    for (const t of entries.tools ?? []) this.addTool(t, 'tools');
    this.guardrailNames(entries.guardrails ?? [], 'guardrails');
    for (const agent of entries.agents ?? []) this.addAgent(agent, 'agents');
    for (const swarm of entries.swarms ?? []) {
      // Versions of one id may be registered together; one version twice is a duplicate.
      if (this.versions.get(swarm.id)?.has(swarm.version)) throw new DefinitionError(`Duplicate swarm id "${swarm.id}"`);
      this.addSwarm(swarm, 'swarms');
    }
    this.swarms.set(ADHOC_ID, defineSwarm({ id: ADHOC_ID, name: 'Ad-hoc swarm', instructions: 'Ad-hoc swarm' }));
    this.tools.set(
      REGISTRY_SEARCH,
      registrySearchTool(
        () => this.cards(),
        (swarmId) => configs?.get(swarmId)?.config().registryLimit,
      ),
    );
    // The agents and swarms those swarms name in turn register too.
    const pending = this.allVersions();
    for (let swarm = pending.pop(); swarm; swarm = pending.pop()) {
      if (!Array.isArray(swarm.handoffs)) continue;
      for (const h of swarm.handoffs as readonly Handoff[]) {
        if (h.kind === 'agent' && typeof h.agent !== 'string') this.addAgent(h.agent, `handoffs of swarm "${swarm.id}"`);
        if (h.kind === 'swarm' && typeof h.swarm !== 'string' && !this.registered(h.swarm)) {
          this.addSwarm(h.swarm, `handoffs of swarm "${swarm.id}"`);
          pending.push(h.swarm);
        }
      }
    }
    // Older versions are checked too: they serve the runs started on them.
    for (const swarm of this.allVersions()) if (swarm.id !== ADHOC_ID) this.checkStatic(swarm);
    if (this.elsewhere) {
      for (const agent of this.agents.values()) {
        const hosted = agentAsSwarm(agent);
        this.swarms.set(hosted.id, hosted);
      }
    }
  }

  /** Ids of the swarm definitions other runtimes may run here (hosted agents' included). */
  hostedIds(): string[] {
    return [...this.swarms.keys()].filter((id) => id !== ADHOC_ID);
  }

  /** Whether a swarm definition (a hosted agent's included) is registered here. */
  has(definitionId: string): boolean {
    return this.swarms.has(definitionId);
  }

  /**
   * The swarm definition with this id (the ad-hoc one included), or undefined: its current
   * (highest) version, or exactly `version` when given (an older one serves the runs started on it).
   */
  swarm(id: string, version?: number): SwarmDefinition | undefined {
    const current = this.swarms.get(id);
    if (version === undefined || current?.version === version) return current;
    return this.versions.get(id)?.get(version);
  }

  /** The registered versions of a swarm definition, lowest first (none when it is not registered). */
  swarmVersions(id: string): number[] {
    return [...(this.versions.get(id)?.keys() ?? [])].sort((a, b) => a - b);
  }

  /** Every registered version of every swarm definition. */
  private allVersions(): SwarmDefinition[] {
    const all = [...this.swarms.values()].filter((d) => !this.versions.has(d.id));
    for (const versions of this.versions.values()) all.push(...versions.values());
    return all;
  }

  /** The agent with this id, or undefined. */
  agent(id: string): AgentDefinition | undefined {
    return this.agents.get(id);
  }

  /** The tool with this name, or undefined. */
  tool(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /**
   * Tool names of a tools list, registering its tools (a list computed from a run's input
   * brings tools the runtime did not know yet); the registry marker adds its two tools.
   */
  toolNames(entries: readonly ToolEntry[], where: string): string[] {
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

  /** The guardrail registered with this name, or undefined. */
  guardrail(name: string): Guardrail<unknown> | undefined {
    return this.guardrails.get(name);
  }

  /**
   * Names of a guardrails list, registering each (an ad-hoc swarm's guardrails are stored by
   * name); two different guardrails of one name are a definition error.
   */
  guardrailNames(list: readonly Guardrail<any>[], where: string): string[] {
    return list.map((g) => {
      if (!g || typeof g.name !== 'string' || g.name === '' || typeof g.check !== 'function') {
        throw new DefinitionError(`Each guardrail in ${where} needs a name and a check function`);
      }
      const known = this.guardrails.get(g.name);
      if (known && known !== g) throw new DefinitionError(`Two different guardrails are named "${g.name}" (${where})`);
      this.guardrails.set(g.name, g);
      return g.name;
    });
  }

  /** Cards of every registered definition (the ad-hoc one aside), for the registry search. */
  cards(): SwarmCard[] {
    return [...this.swarms.values()]
      .filter((d) => d.id !== ADHOC_ID && agentOfHosted(d.id) === undefined)
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

  /** Whether `swarm` (or the definition registered in its place, see `derivedSwarm`) is registered. */
  private registered(swarm: SwarmDefinition): boolean {
    const known = this.swarm(swarm.id, swarm.version);
    return known !== undefined && sameSwarm(known, swarm);
  }

  private addSwarm(swarm: SwarmDefinition, where: string): void {
    if (!DEFINITION_ID.test(swarm.id)) throw new DefinitionError(`Swarm id "${swarm.id}" in ${where} is invalid: use letters, digits, _ . : -`);
    if (swarm.id === ADHOC_ID) throw new DefinitionError(`Swarm id "${ADHOC_ID}" is reserved for ad-hoc swarms`);
    if (swarm.id === REGISTRY_RECORD_DEFINITION) throw new DefinitionError(`Swarm id "${swarm.id}" is reserved for the agent registry's record`);
    let versions = this.versions.get(swarm.id);
    const known = versions?.get(swarm.version);
    if (known && !sameSwarm(known, swarm)) throw new DefinitionError(`Duplicate swarm id "${swarm.id}" in ${where}`);
    if (!versions) this.versions.set(swarm.id, (versions = new Map()));
    versions.set(swarm.version, swarm);
    // The highest version is the current one: new runs start on it.
    const current = this.swarms.get(swarm.id);
    if (!current || current.version < swarm.version) this.swarms.set(swarm.id, swarm);
  }

  private addAgent(agent: AgentDefinition, where: string): void {
    if (!DEFINITION_ID.test(agent.id)) throw new DefinitionError(`Agent id "${agent.id}" in ${where} is invalid: use letters, digits, _ . : -`);
    const known = this.agents.get(agent.id);
    if (known && known !== agent) throw new DefinitionError(`Duplicate agent id "${agent.id}" in ${where}`);
    checkMaxTurns(agent.id, agent.maxTurns, 'Agent');
    this.agents.set(agent.id, agent);
    for (const t of agent.tools) this.addTool(t, `agent "${agent.id}"`);
  }

  private addTool(t: Tool, where: string): void {
    if (!TOOL_NAME.test(t.name)) {
      throw new DefinitionError(`Tool name "${t.name}" in ${where} is invalid: it must match ${TOOL_NAME.source}`);
    }
    if ((BUILTIN_TOOLS as readonly string[]).includes(t.name) || t.name.startsWith('handoff_to_') || t.name.startsWith('swarm_registry_')) {
      throw new DefinitionError(`Tool name "${t.name}" in ${where} is reserved for built-ins and handoffs`);
    }
    const known = this.tools.get(t.name);
    if (known && known !== t) throw new DefinitionError(`Two different tools are named "${t.name}" (${where})`);
    this.tools.set(t.name, t);
  }

  /** Checks what a swarm fixes without an input; what depends on the input is checked per run. */
  private checkStatic(swarm: SwarmDefinition): void {
    if (Array.isArray(swarm.tools)) this.toolNames(swarm.tools as readonly ToolEntry[], `swarm "${swarm.id}"`);
    if (Array.isArray(swarm.handoffs)) resolveHandoffs(this, swarm.id, swarm.handoffs as readonly Handoff[]);
    if (typeof swarm.maxTurns === 'number') checkMaxTurns(swarm.id, swarm.maxTurns);
    if (typeof swarm.instructions === 'string' && swarm.instructions.trim() === '') {
      throw new DefinitionError(`Swarm "${swarm.id}" has empty instructions`);
    }
  }
}

/** What a definition can do, for the registry search: its tools' names and its handoff targets. */
function capabilitiesOf(def: SwarmDefinition): string[] {
  const caps: string[] = [];
  if (Array.isArray(def.tools)) {
    for (const t of def.tools as readonly ToolEntry[]) if (t.kind === 'tool') caps.push(t.name);
  }
  if (Array.isArray(def.handoffs)) {
    for (const h of def.handoffs as readonly Handoff[]) {
      if (h.kind === 'agent' || h.kind === 'swarm') caps.push(handoffTargetId(h));
      else if (h.kind === 'inline') caps.push(h.id);
      else if (h.kind === 'best') caps.push(h.skill);
      else caps.push(h.url);
    }
  }
  return caps;
}
