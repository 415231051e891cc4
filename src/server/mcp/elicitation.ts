/**
 * A pause's response schema as an MCP elicitation form. MCP restricts `requestedSchema` to a
 * flat object whose properties are primitives (string, number, integer, boolean, a string enum,
 * an array of a string enum): a schema of that shape maps to one property for property, keeping
 * the keywords MCP allows (titles, descriptions, bounds, formats, defaults); a primitive schema
 * (`{ "type": "integer" }`) is asked as the one field `answer`. Anything else (nested objects,
 * arrays of objects, unions, nullable fields) does not fit: no form, and the caller returns the
 * paused result with the schema instead. The form only asks: the answer is checked against the
 * pause's own schema, so keywords MCP cannot carry (a pattern, an exclusive bound) still hold.
 *
 * @module
 */
import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';

type Json = Record<string, unknown>;
type Form = ElicitRequestFormParams['requestedSchema'];
type Field = Form['properties'][string];

/** The elicitation form of a response schema, and whether the answer is its `answer` field. */
export interface ElicitationForm {
  requestedSchema: Form;
  /** The schema is a primitive asked as the field `answer`: the answer is that field's value. */
  wrapped: boolean;
}

/** The field an answer to a primitive schema is asked in. */
export const ANSWER_FIELD = 'answer';

const STRING_FORMATS = new Set(['email', 'uri', 'date', 'date-time']);

/** The elicitation form of `schema`, or undefined when MCP cannot ask for it (see the module doc). */
export function elicitationForm(schema: Json): ElicitationForm | undefined {
  if (schema.type === 'object') {
    if (schema.anyOf || schema.oneOf || schema.allOf || schema.not || schema.if) return undefined;
    const props = schema.properties;
    if (!isObject(props)) return undefined;
    const properties: Form['properties'] = {};
    for (const [name, prop] of Object.entries(props)) {
      const field = isObject(prop) ? fieldOf(prop) : undefined;
      if (!field) return undefined;
      properties[name] = field;
    }
    const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string' && r in properties) : [];
    return { requestedSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) }, wrapped: false };
  }
  const field = fieldOf(schema);
  if (!field) return undefined;
  return { requestedSchema: { type: 'object', properties: { [ANSWER_FIELD]: field }, required: [ANSWER_FIELD] }, wrapped: true };
}

/** The answer an accepted form's content stands for. */
export function answerFromContent(form: Pick<ElicitationForm, 'wrapped'>, content: Record<string, unknown> | undefined): unknown {
  if (form.wrapped) return content?.[ANSWER_FIELD];
  return content ?? {};
}

/** The MCP primitive field of a property schema, or undefined when it is not one. */
function fieldOf(s: Json): Field | undefined {
  const about = { ...text(s, 'title'), ...text(s, 'description') };
  if (s.anyOf !== undefined || s.allOf !== undefined || (s.oneOf !== undefined && !isTitledEnum(s))) return undefined;
  switch (s.type) {
    case 'boolean':
      return { type: 'boolean', ...about, ...(typeof s.default === 'boolean' ? { default: s.default } : {}) };
    case 'number':
    case 'integer':
      return { type: s.type, ...about, ...num(s, 'minimum'), ...num(s, 'maximum'), ...num(s, 'default') };
    case 'string': {
      if (Array.isArray(s.enum))
        return s.enum.every((v) => typeof v === 'string') ? { type: 'string', ...about, enum: s.enum as string[], ...text(s, 'default') } : undefined;
      if (isTitledEnum(s)) return { type: 'string', ...about, oneOf: s.oneOf as { const: string; title: string }[], ...text(s, 'default') };
      const format = typeof s.format === 'string' && STRING_FORMATS.has(s.format) ? { format: s.format as 'email' } : {};
      return { type: 'string', ...about, ...num(s, 'minLength'), ...num(s, 'maxLength'), ...format, ...text(s, 'default') };
    }
    case 'array': {
      const items = s.items;
      if (!isObject(items) || items.type !== 'string' || !Array.isArray(items.enum) || !items.enum.every((v) => typeof v === 'string')) return undefined;
      const picked = Array.isArray(s.default) && s.default.every((v) => typeof v === 'string') ? { default: s.default as string[] } : {};
      return { type: 'array', ...about, ...num(s, 'minItems'), ...num(s, 'maxItems'), items: { type: 'string', enum: items.enum as string[] }, ...picked };
    }
    default:
      // No type, a list of types (nullable), a $ref, a nested object: not a form field.
      return undefined;
  }
}

function isTitledEnum(s: Json): boolean {
  return Array.isArray(s.oneOf) && s.oneOf.every((o) => isObject(o) && typeof o.const === 'string' && typeof o.title === 'string');
}

function text(s: Json, key: string): Record<string, string> {
  return typeof s[key] === 'string' ? { [key]: s[key] } : {};
}

function num(s: Json, key: string): Record<string, number> {
  return typeof s[key] === 'number' ? { [key]: s[key] } : {};
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
