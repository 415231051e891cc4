/**
 * The wiring of the actors: the runtime's implementation of the ports through which actors
 * reach definitions, models, tools and the host of each swarm (by the ids in an actor's
 * input). The live runtime and replay both build their machines through it.
 *
 * @module
 */
import { errorText } from '../../machines/error-text.js';
import { lastChunk } from '../events/chunks.js';
import type { Checked, Model, SwarmPorts } from '../../actors/index.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Guardrail } from '../define/swarm.js';
import { guardedToolCall, guardrailsOf, runGuards } from './guards.js';
import { speakingAs } from '../catalog/hosted.js';
import { agentOfHosted } from '../define/ids.js';
import { resultIsText, resultSchema } from '../catalog/result-schema.js';
import { checkCustomization } from '../catalog/customization.js';
import { childInput, type ToolSpecs } from '../catalog/tool-specs.js';
import { validate } from '../define/tool.js';
import { responseSchemaProblem } from '../define/response-schema.js';
import type { CallRunners } from './calls.js';
import type { SwarmHost } from './host.js';
import type { BudgetGate } from './budget-gate.js';
import type { CallGate } from './drain.js';

/** What the ports need from the host of a swarm (a live `SwarmHost`, or a replay's stand-in). */
export type PortsHost = Pick<SwarmHost, 'config' | 'input' | 'publish' | 'durable'> & {
  /** The definition version the swarm runs on (absent: the current one). */
  readonly definitionVersion?: number;
};

/** What the ports are built from. */
export interface PortsDeps {
  catalog: Catalog;
  specs: ToolSpecs;
  model: Model;
  /** The hosts of the swarms live here, by id (the ports find a swarm by the id in an actor's input). */
  hosts: ReadonlyMap<string, PortsHost>;
  /** The runners of child-swarm and remote-agent calls. */
  calls: Pick<CallRunners, 'runChild' | 'runRemote'>;
  /** How long one model call may take (`createRuntime({ modelTimeoutMs })`); undefined: unbounded. */
  modelTimeoutMs?: number | undefined;
  /** The budget gate (live runtimes; a replay makes no calls to reserve). */
  budgets?: Pick<BudgetGate, 'reserveModelCall' | 'reserveToolCall' | 'chargeRemote'> | undefined;
  /** The gate a drain closes (live runtimes): calls are counted, and held once it drains. */
  gate?: CallGate | undefined;
}

/** Builds the ports the actors use. */
export function createPorts(deps: PortsDeps): SwarmPorts {
  const { catalog } = deps;
  // A swarm's own definition is the version it runs on (an older one serves runs started on it).
  const swarm = (id: string, swarmId?: string) => {
    const version = swarmId === undefined ? undefined : deps.hosts.get(swarmId)?.definitionVersion;
    const def = catalog.swarm(id, version);
    if (!def) throw new Error(`Swarm definition "${id}"${version === undefined ? '' : ` version ${version}`} is not registered with this runtime`);
    return def;
  };
  const hostedModels = new Map<string, Model>();
  return {
    ...(deps.modelTimeoutMs !== undefined ? { modelTimeoutMs: deps.modelTimeoutMs } : {}),
    modelFor(definitionId, speaker) {
      if (speaker !== definitionId) return catalog.agent(speaker)?.model ?? deps.model;
      // An agent run for another runtime speaks as that agent, through its own model.
      const agentId = agentOfHosted(definitionId);
      const agent = agentId === undefined ? undefined : catalog.agent(agentId);
      if (!agent) return deps.model;
      let model = hostedModels.get(agent.id);
      if (!model) hostedModels.set(agent.id, (model = speakingAs(agent.id, agent.model ?? deps.model)));
      return model;
    },
    toolSpecs(input) {
      const host = deps.hosts.get(input.swarmId);
      return deps.specs.forStep(input, host?.config().result, host?.definitionVersion);
    },
    checkToolArgs(name, args): Checked {
      const t = catalog.tool(name);
      if (!t) return { ok: false, error: `Tool "${name}" is not registered` };
      return validate(t.parameters, args);
    },
    checkResult: (definitionId, swarmId, value) => validate(resultSchema(swarm(definitionId, swarmId), deps.hosts.get(swarmId)?.config()), value),
    resultIsText: (definitionId, swarmId) => resultIsText(swarm(definitionId, swarmId), deps.hosts.get(swarmId)?.config()),
    childInput: (definitionId, args) => childInput(catalog, definitionId, args),
    checkCustomization: (value) => checkCustomization(catalog, value),
    responseSchemaProblem,
    toolTimeoutMs: (name) => catalog.tool(name)?.timeoutMs,
    approvalRule(name) {
      const rule = catalog.tool(name)?.needsApproval;
      if (rule === undefined || rule === false) return undefined;
      return rule === true ? () => true : (rule as (args: unknown, ctx: { swarmId: string; agentId: string; toolCallId: string }) => boolean | Promise<boolean>);
    },
    toolOnTimeout: (name) => catalog.tool(name)?.onTimeout,
    swarmTimeoutMs: (definitionId) => catalog.swarm(definitionId)?.timeoutMs,
    swarmOnTimeout: (definitionId) => catalog.swarm(definitionId)?.onTimeout,
    isCustomizable: (definitionId) => (catalog.swarm(definitionId) ?? catalog.elsewhere?.card(definitionId))?.customizable ?? false,
    // A draining runtime starts no child: the call waits, its step durable, for the adopter.
    runChild: (input, signal) => (deps.gate?.draining ? deps.gate.held() : deps.calls.runChild(input, signal)),
    runRemote: deps.budgets ? budgetedRemote(deps.calls, deps.budgets) : (input, signal) => deps.calls.runRemote(input, signal),
    guardInput(definitionId, swarmId) {
      const guardrails = swarm(definitionId, swarmId).guardrails.input;
      return guardrails.length === 0 ? undefined : runGuardrails(guardrails, deps.hosts.get(swarmId)?.input(), swarmId);
    },
    guardOutput(definitionId, swarmId, result) {
      const guardrails = swarm(definitionId, swarmId).guardrails.output;
      return guardrails.length === 0 ? undefined : runGuardrails(guardrails, result, swarmId);
    },
    guard(step, site, value) {
      const host = deps.hosts.get(site.swarmId);
      const guardrails = guardrailsOf(catalog, step, site, host?.config().guardrails, host?.definitionVersion);
      if (guardrails.length === 0) return undefined;
      return runGuards(guardrails, step === 'input' ? host?.input() : step === 'toolCall' ? guardedToolCall(value) : value, site.swarmId);
    },
    async executeTool(input, args, signal) {
      const t = catalog.tool(input.name);
      if (!t) throw new Error(`Tool "${input.name}" is not registered`);
      // `args` passed the tool's own schema in checkToolArgs.
      return t.execute(args as Record<string, unknown>, {
        swarmId: input.swarmId,
        agentId: input.agentId,
        toolCallId: input.toolCallId,
        idempotencyKey: input.idempotencyKey,
        signal,
      });
    },
    onText(swarmId, speaker, turn, chunk, first) {
      deps.hosts.get(swarmId)?.publish({
        kind: 'artifact-update',
        artifact: { artifactId: `stream:${speaker}:${turn}`, name: 'stream', parts: [{ kind: 'text', text: chunk }] },
        // A re-issued call (after a pause or a restart) starts its text afresh.
        append: !first,
        lastChunk: false,
        metadata: { agent: speaker, turn },
      });
    },
    onTextEnd(swarmId, speaker, turn) {
      deps.hosts.get(swarmId)?.publish(lastChunk(speaker, turn));
    },
    durable(swarmId) {
      const host = deps.hosts.get(swarmId);
      if (!host) return Promise.reject(new Error(`Swarm "${swarmId}" is not live in this runtime`));
      return deps.gate ? deps.gate.pass(host.durable()) : host.durable();
    },
    ...(deps.gate ? { callBegins: (_swarmId: string) => deps.gate!.begins() } : {}),
    ...(deps.budgets ? budgetPorts(deps.budgets) : {}),
  };
}

/** Remote calls whose peer's reported usage counts against the swarm's budgets, with their result. */
function budgetedRemote(calls: PortsDeps['calls'], gate: NonNullable<PortsDeps['budgets']>): SwarmPorts['runRemote'] {
  return async (input, signal) => {
    const result = await calls.runRemote(input, signal);
    if (result.usage) gate.chargeRemote(input, result.usage);
    return result;
  };
}

/** The budget ports, bound to the gate. */
function budgetPorts(gate: NonNullable<PortsDeps['budgets']>): Pick<SwarmPorts, 'reserveModelCall' | 'reserveToolCall'> {
  return {
    reserveModelCall: (input, model, tools, signal) => gate.reserveModelCall(input, model, tools, signal),
    reserveToolCall: (input, signal) => gate.reserveToolCall(input, signal),
  };
}

/** The first rejection of `guardrails` for `value` (a throwing check rejects with its error). */
async function runGuardrails<T>(guardrails: readonly Guardrail<T>[], value: T, swarmId: string): Promise<string | undefined> {
  for (const g of guardrails) {
    let verdict: true | string;
    try {
      verdict = await g.check(value, { swarmId });
    } catch (e) {
      verdict = errorText(e);
    }
    if (verdict !== true) return `${g.name}: ${typeof verdict === 'string' && verdict ? verdict : 'rejected'}`;
  }
  return undefined;
}
