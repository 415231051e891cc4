/**
 * Customization: how a parent's model may extend a customizable child swarm for one run
 * (`handoff.toSwarm(x).customizable()`, `swarm_registry_handoff`). One zod schema checks it;
 * the JSON Schema the model sees is derived from it.
 *
 * @module
 */
import { z } from 'zod';
import type { Customization } from '../../machines/calls/swarm.js';
import { REGISTRY_SEARCH } from '../../actors/index.js';
import type { Catalog } from './catalog.js';
import { jsonSchemaOf, validate } from '../define/tool.js';

/** The shape of a customization (the machines' {@link Customization} type, checked below). */
const customizationSchema = z
  .strictObject({
    additional_instructions: z.string().optional(),
    additional_agents: z.array(z.string()).optional().describe('Ids of registered agents to add'),
    additional_tools: z.array(z.string()).optional().describe('Names of registered tools to add'),
    max_turns_override: z.number().int().min(1).max(1000).optional(),
  })
  .describe('Optional: extend the child swarm for this run (never removes anything)');

// The machines declare the type without zod: fail to compile when the two drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameShape: Same<z.output<typeof customizationSchema>, Customization> = true;
void _sameShape;

/** The `customization` argument of a handoff tool, as JSON Schema. */
export function customizationJsonSchema(): Record<string, unknown> {
  return jsonSchemaOf(customizationSchema);
}

/** Validates a customization's shape and that every agent and tool it adds is registered. */
export function checkCustomization(catalog: Catalog, value: unknown): { ok: true; value: Customization } | { ok: false; error: string } {
  const shape = validate(customizationSchema, value);
  if (!shape.ok) return shape;
  const c = shape.value as Customization;
  const unknownAgents = (c.additional_agents ?? []).filter((id) => !catalog.agent(id));
  if (unknownAgents.length > 0) return { ok: false, error: `unknown agents: ${unknownAgents.join(', ')}` };
  const unknownTools = (c.additional_tools ?? []).filter((n) => !catalog.tool(n) || n === REGISTRY_SEARCH);
  if (unknownTools.length > 0) return { ok: false, error: `unknown tools: ${unknownTools.join(', ')}` };
  return { ok: true, value: c };
}
