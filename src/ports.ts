/**
 * The runtime's implementation of the actor ports: definitions, validation, tools, models and
 * the host of each swarm, reached by the ids in an actor's input.
 *
 * @module
 */
import type { Checked, Model, SwarmPorts } from '../actors/index.js';
import type { Guardrail } from './define.js';
import type { SwarmHost } from './host.js';
import type { Registry } from './registry.js';
import { validate } from './tool.js';

/**
 * What the ports need from the host of a swarm (a live `SwarmHost`, or a replay's stand-in).
 *
 * @example
 * const host: PortsHost = { config: () => input.config, input: () => input.input,
 *   publish: () => undefined, gate: async () => undefined };
 */
export type PortsHost = Pick<SwarmHost, 'config' | 'input' | 'publish' | 'gate'>;

/**
 * What the ports need from the runtime.
 *
 * @example
 * const deps: PortsDeps = { registry, model, host: (id) => hosts.get(id), runChild, runRemote };
 */
export interface PortsDeps {
  registry: Registry;
  model: Model;
  host(swarmId: string): PortsHost | undefined;
  runChild: SwarmPorts['runChild'];
  runRemote: SwarmPorts['runRemote'];
}

async function runGuardrails<T>(guardrails: readonly Guardrail<T>[], value: T, swarmId: string): Promise<string | undefined> {
  for (const g of guardrails) {
    let verdict: true | string;
    try {
      verdict = await g.check(value, { swarmId });
    } catch (e) {
      verdict = e instanceof Error ? e.message : String(e);
    }
    if (verdict !== true) return `${g.name}: ${typeof verdict === 'string' && verdict ? verdict : 'rejected'}`;
  }
  return undefined;
}

/**
 * Builds the ports the actors use.
 *
 * @example
 * const logic = createSwarmLogic(createPorts({ registry, model, host: (id) => hosts.get(id) }));
 */
export function createPorts(deps: PortsDeps): SwarmPorts {
  const { registry } = deps;
  const swarm = (id: string) => {
    const def = registry.swarm(id);
    if (!def) throw new Error(`Swarm definition "${id}" is not registered with this runtime`);
    return def;
  };
  return {
    modelFor(definitionId, speaker) {
      if (speaker === definitionId) return deps.model;
      return registry.agent(speaker)?.model ?? deps.model;
    },
    toolSpecs: (input) => registry.toolSpecs(input, deps.host(input.swarmId)?.config().result),
    checkToolArgs(name, args): Checked {
      const t = registry.tool(name);
      if (!t) return { ok: false, error: `Tool "${name}" is not registered` };
      return validate(t.parameters, args);
    },
    checkResult: (definitionId, swarmId, value) =>
      validate(registry.resultSchema(swarm(definitionId), deps.host(swarmId)?.config()), value),
    resultIsText: (definitionId, swarmId) => registry.resultIsText(swarm(definitionId), deps.host(swarmId)?.config()),
    childInput: (definitionId, args) => registry.childInput(definitionId, args),
    checkCustomization: (value) => registry.checkCustomization(value),
    isCustomizable: (definitionId) => registry.swarm(definitionId)?.customizable ?? false,
    runChild: (input, signal) => deps.runChild(input, signal),
    runRemote: (input, signal) => deps.runRemote(input, signal),
    guardInput: (definitionId, swarmId) =>
      runGuardrails(swarm(definitionId).guardrails.input, deps.host(swarmId)?.input(), swarmId),
    guardOutput: (definitionId, swarmId, result) => runGuardrails(swarm(definitionId).guardrails.output, result, swarmId),
    async executeTool(input, args, signal) {
      const t = registry.tool(input.name);
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
      deps.host(swarmId)?.publish({
        kind: 'artifact-update',
        artifact: { artifactId: `stream:${speaker}:${turn}`, name: 'stream', parts: [{ kind: 'text', text: chunk }] },
        // A re-issued call (after a pause or a restart) starts its text afresh.
        append: !first,
        lastChunk: false,
        metadata: { agent: speaker, turn },
      });
    },
    gate(swarmId) {
      const host = deps.host(swarmId);
      if (!host) return Promise.reject(new Error(`Swarm "${swarmId}" is not live in this runtime`));
      return host.gate();
    },
  };
}
