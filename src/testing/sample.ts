/**
 * A small, valid value for a JSON Schema: what the testing model passes as a tool's arguments, a
 * handoff's request or a swarm's result, read from the specs the model is offered (the same JSON
 * Schema the runtime derives from the definitions' zod schemas).
 *
 * @module
 */

type Schema = Record<string, unknown>;

/**
 * A value that satisfies `schema` for the shapes definitions commonly use: objects (their
 * required properties), arrays (their `minItems`), strings (`minLength`, `enum`, `const`, common
 * formats), numbers (`minimum`), booleans, `null`, `anyOf`/`oneOf` (the first branch). A schema
 * it does not know gives `'x'`; a swarm whose values need more is given them in the options
 * (`input`, `result`) of `describeSwarm`.
 *
 * @example
 * import { sampleOf } from 'xswarm/testing';
 * sampleOf({ type: 'object', properties: { day: { type: 'string' } }, required: ['day'] }); // { day: 'sample' }
 */
export function sampleOf(schema: unknown, depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null || depth > 12) return 'x';
  const s = schema as Schema;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ('default' in s && s.default !== undefined) return s.default;
  const branch = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as unknown[] | undefined;
  if (branch && branch.length > 0) return sampleOf(branch.find((b) => (b as Schema).type !== 'null') ?? branch[0], depth + 1);
  if (Array.isArray(s.allOf) && s.allOf.length > 0) return sampleOf(s.allOf[0], depth + 1);
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? s.type[0]) : s.type;
  switch (type) {
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? (s.required as string[]) : [];
      return Object.fromEntries(required.map((key) => [key, sampleOf(properties[key], depth + 1)]));
    }
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 1;
      return Array.from({ length: min }, () => sampleOf(s.items, depth + 1));
    }
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1;
      return type === 'integer' ? Math.ceil(min) : min;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return sampleString(s);
    default:
      return 'x';
  }
}

/** A string meeting the formats and the length bounds definitions use most. */
function sampleString(s: Schema): string {
  switch (s.format) {
    case 'email':
      return 'user@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com/';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
    case 'date-time':
      return '2025-01-01T00:00:00Z';
    case 'date':
      return '2025-01-01';
    default:
      break;
  }
  const min = typeof s.minLength === 'number' ? s.minLength : 1;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Number.POSITIVE_INFINITY;
  const text = 'sample'.padEnd(min, 'x');
  return text.slice(0, Math.max(min, Math.min(text.length, max)));
}
