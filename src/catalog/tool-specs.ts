/**
 * What the model sees in one step: its tools, one `handoff_to_<id>` tool per handoff, and the
 * orchestrator's built-ins (`complete` typed by the result schema, `pause`, `fail`); and the
 * way back, from a swarm handoff's arguments to the child's input.
 *
 * @module
 */
import type { z } from 'zod';
import { PAUSE_TYPES } from '../../machines/pause.js';
import type { ToolSpec } from '../../machines/messages.js';
import type { ModelStepInput } from '../../machines/contracts.js';
import type { HandoffTarget } from '../../machines/plan.js';
import { type Checked, REGISTRY_HANDOFF } from '../../actors/index.js';
import type { Catalog } from './catalog.js';
import { jsonSchemaOf, validate } from '../define/tool.js';
import { registrySkill } from './best-agent.js';
import { customizationJsonSchema } from './customization.js';
import { registryHandoffSpec } from './registry-tools.js';

/** The tool specs of a catalog's swarms and agents, cached per resolved configuration. */
export class ToolSpecs {
  private readonly byTools = new WeakMap<readonly string[], WeakMap<readonly HandoffTarget[], ToolSpec[]>>();
  private readonly agentSpecs = new WeakMap<readonly string[], ToolSpec[]>();

  constructor(private readonly catalog: Catalog) {}

  /**
   * The specs a model sees in one step. An orchestrator's `complete` takes `resultJson` (an
   * ad-hoc swarm's result schema) or its definition's result schema (of `version`, the one the
   * swarm runs on; absent: the current one).
   */
  forStep(input: ModelStepInput, resultJson: Record<string, unknown> | undefined, version?: number): ToolSpec[] {
    if (!input.orchestrator) {
      let specs = this.agentSpecs.get(input.tools);
      if (!specs) {
        specs = input.tools.map((name) => this.toolSpec(name));
        this.agentSpecs.set(input.tools, specs);
      }
      return specs;
    }
    let byHandoffs = this.byTools.get(input.tools);
    if (!byHandoffs) {
      byHandoffs = new WeakMap();
      this.byTools.set(input.tools, byHandoffs);
    }
    let specs = byHandoffs.get(input.handoffs);
    if (!specs) {
      const def = this.catalog.swarm(input.definitionId, version);
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
    const t = this.catalog.tool(name);
    if (!t) throw new Error(`Tool "${name}" is not registered with this runtime`);
    return { name: t.name, description: t.description, parameters: jsonSchemaOf(t.parameters) };
  }

  /**
   * A handoff's tool: `request` for agents and text-input swarms; a structured child's input
   * schema (its object schema as it is, any other under `input`); plus `customization`.
   */
  private handoffSpec(h: HandoffTarget): ToolSpec {
    if (h.kind === 'agent' || h.kind === 'remote') {
      const skill = h.kind === 'remote' ? registrySkill(h.url) : undefined;
      const from = skill === undefined ? h.agentId : `the best agent for ${skill}`;
      return { name: h.toolName, description: h.description, parameters: requestParameters(`What you need from ${from}`) };
    }
    const schema = inputSchemaOf(this.catalog, h.definitionId);
    let parameters: Record<string, unknown>;
    if (!h.structured || !schema) parameters = requestParameters(`The task for ${h.definitionId}`);
    else if (schema.type === 'object') parameters = { ...schema };
    else parameters = { type: 'object', properties: { input: schema }, required: ['input'] };
    if (h.customizable) {
      const properties = { ...(parameters.properties as Record<string, unknown>), customization: customizationJsonSchema() };
      parameters = { ...parameters, properties };
    }
    return { name: h.toolName, description: h.description, parameters };
  }
}

/**
 * A swarm handoff's arguments (without `customization`) as the child's input, validated: the
 * inverse of the handoff tool's parameters.
 */
export function childInput(catalog: Catalog, definitionId: string, args: Record<string, unknown>): Checked {
  const def = catalog.swarm(definitionId);
  if (def) return validate(def.input, isObjectSchema(def.input) ? args : args.input);
  // Hosted elsewhere: the runtime that starts it checks the input against its schema.
  const card = catalog.elsewhere?.card(definitionId);
  if (!card) return { ok: false, error: `unknown swarm "${definitionId}"` };
  return { ok: true, value: card.inputSchema.type === 'object' ? args : args.input };
}

/** JSON Schema of a swarm's input: its definition's here, or the card of one hosted elsewhere. */
function inputSchemaOf(catalog: Catalog, definitionId: string): Record<string, unknown> | undefined {
  const def = catalog.swarm(definitionId);
  return def ? jsonSchemaOf(def.input) : catalog.elsewhere?.card(definitionId)?.inputSchema;
}

/** The orchestrator's built-in tools, with `complete` typed by the swarm's result schema. */
function builtinSpecs(resultSchema: Record<string, unknown>): ToolSpec[] {
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
          type: { type: 'string', enum: [...PAUSE_TYPES] },
          response_schema: {
            type: 'object',
            description: 'Optional JSON Schema the human answer must match; the answer then comes back as JSON',
          },
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

function isObjectSchema(schema: z.ZodType): boolean {
  return jsonSchemaOf(schema).type === 'object';
}

function requestParameters(description: string): Record<string, unknown> {
  return {
    type: 'object',
    properties: { request: { type: 'string', description } },
    required: ['request'],
    additionalProperties: false,
  };
}
