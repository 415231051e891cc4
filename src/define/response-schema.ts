/**
 * Typed answers: the JSON Schema a pause may carry (`PauseReason.responseSchema`), checked when
 * it is asked for (a client's zod schema, or the model's `response_schema` argument) and when a
 * resume answers it.
 *
 * @module
 */
import { z } from 'zod';
import { jsonSchemaOf, validate } from './tool.js';

// Compiling a JSON Schema to zod walks the whole schema: once per stored schema object.
const compiled = new WeakMap<object, z.ZodType>();

/** The zod schema a stored response schema is checked with (throws when zod cannot read it). */
function compile(schema: Record<string, unknown>): z.ZodType {
  let zod = compiled.get(schema);
  if (!zod) {
    zod = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    compiled.set(schema, zod);
  }
  return zod;
}

/**
 * Why `schema` cannot be a pause's response schema, or undefined when it can: it must be a JSON
 * Schema written as a JSON object (`{ "type": "object", … }`, `{ "type": "integer" }` …) that
 * the validator reads.
 */
export function responseSchemaProblem(schema: unknown): string | undefined {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
    return `a response schema must be a JSON Schema object (such as {"type":"object","properties":{…}}), got ${Array.isArray(schema) ? 'an array' : (JSON.stringify(schema) ?? typeof schema)}`;
  }
  try {
    compile(schema as Record<string, unknown>);
    return undefined;
  } catch (e) {
    return `the response schema is not a JSON Schema this runtime can check: ${(e as Error).message}`;
  }
}

/**
 * A pause's response schema as stored: a zod schema as JSON Schema (what `z.toJSONSchema`
 * writes), or a JSON Schema as given; throws a TypeError for one that cannot be checked.
 */
export function responseSchemaOf(schema: z.ZodType | Record<string, unknown>): Record<string, unknown> {
  const json = schema instanceof z.ZodType ? jsonSchemaOf(schema) : schema;
  const problem = responseSchemaProblem(json);
  if (problem) throw new TypeError(`pause: ${problem}`);
  return json;
}

/**
 * Checks an answer against a pause's response schema. A string that does not match as it is
 * but is JSON text that does (what a command line or a text box sends) is taken parsed. On
 * success, the text the model reads: the answer as JSON. On failure, every issue with the field
 * it is about (`field: why`).
 */
export function checkAnswer(schema: Record<string, unknown>, answer: unknown): { ok: true; text: string; value: unknown } | { ok: false; error: string } {
  const zod = compile(schema);
  let checked = validate(zod, answer);
  if (!checked.ok && typeof answer === 'string') {
    const parsed = parseJson(answer);
    if (parsed.ok) {
      const again = validate(zod, parsed.value);
      if (again.ok) checked = again;
    }
  }
  if (!checked.ok) return { ok: false, error: checked.error };
  return { ok: true, text: JSON.stringify(checked.value) ?? 'null', value: checked.value };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
