/**
 * What completes a swarm: the schema its result is checked with (its definition's, or an
 * ad-hoc swarm's, stored as JSON Schema in its configuration) and whether plain text is one.
 *
 * @module
 */
import { z } from 'zod';
import type { SwarmConfig } from '../../machines/swarm.js';
import type { SwarmDefinition } from '../define/swarm.js';

// Both depend only on their key: one cache serves every runtime.
const zodFromJson = new WeakMap<object, z.ZodType>();
const textResults = new WeakMap<SwarmDefinition, boolean>();

/** The zod schema a swarm's result is checked with. */
export function resultSchema(def: SwarmDefinition, config: SwarmConfig | undefined): z.ZodType {
  if (!config?.result) return def.result;
  let schema = zodFromJson.get(config.result);
  if (!schema) {
    schema = z.fromJSONSchema(config.result as Parameters<typeof z.fromJSONSchema>[0]);
    zodFromJson.set(config.result, schema);
  }
  return schema;
}

/** Whether a swarm's result is plain text, so clean text completes it. */
export function resultIsText(def: SwarmDefinition, config: SwarmConfig | undefined): boolean {
  if (config?.result) return config.result.type === 'string';
  let text = textResults.get(def);
  if (text === undefined) textResults.set(def, (text = def.result instanceof z.ZodString));
  return text;
}
