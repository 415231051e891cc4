/**
 * JSON Schemas of the MCP tools, built from a swarm definition's zod schemas.
 *
 * The `<id>_run` tool does not let the SDK validate the swarm input: the runtime validates it
 * once when the swarm starts (with the same message as every other entry point), and a second
 * zod pass here would run transforms twice. So its input schema is a small Standard Schema of
 * our own: the JSON Schema advertised is the swarm's, and `validate` only checks the two
 * envelope fields `swarmId` and `wait`.
 *
 * @module
 */
import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { SwarmDefinition } from '../../define/swarm.js';
import { jsonSchemaOf } from '../../define/tool.js';

type Json = Record<string, unknown>;

/** How `<id>_run` arguments carry the swarm input. */
export type InputMode =
  /** The swarm input is an object: its fields are the tool's fields, next to `swarmId` and `wait`. */
  | 'fields'
  /** Anything else (a string, a union, a record, or an object with its own `swarmId`/`wait`): `{ input }`. */
  | 'wrapped';

const ENVELOPE = ['swarmId', 'wait'] as const;

const SWARM_ID_JSON: Json = {
  type: 'string',
  minLength: 1,
  description: 'Id for the new swarm instance (default: a random UUID). Ids are never reused.',
};
const WAIT_JSON: Json = {
  type: 'boolean',
  description:
    'Wait until the swarm completes, fails, is stopped or pauses for a human, and return that result. ' +
    'With a progressToken, turns and handoffs are reported as progress notifications meanwhile.',
};

/**
 * A JSON Schema nested under another one: its `$defs` move to the root, where its `$ref`s
 * (`#/$defs/…`) point.
 */
function nestable(json: Json): { schema: Json; defs: Json | undefined } {
  const { $defs, $schema: _drop, ...schema } = json;
  return { schema, defs: $defs as Json | undefined };
}

/** A Standard Schema whose JSON Schema we wrote and whose validation is our own. */
function standard(json: Json, validate: (value: unknown) => { value: unknown } | { issues: { message: string; path?: string[] }[] }): StandardSchemaWithJSON {
  return {
    '~standard': {
      version: 1,
      vendor: 'xswarm',
      validate,
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

/** Whether a swarm's input JSON Schema can be spread into the tool's arguments as-is. */
function modeOf(input: Json): InputMode {
  const props = input.properties;
  if (input.type !== 'object' || typeof props !== 'object' || props === null) return 'wrapped';
  // An open object (record, looseObject) could itself contain `swarmId` or `wait` keys.
  if (input.additionalProperties !== undefined && input.additionalProperties !== false) return 'wrapped';
  if (ENVELOPE.some((k) => k in props)) return 'wrapped';
  return 'fields';
}

/** The input schema of `<id>_run` and how it carries the swarm input. */
export function runInputSchema(def: SwarmDefinition): { schema: StandardSchemaWithJSON; mode: InputMode } {
  const input = jsonSchemaOf(def.input);
  const mode = modeOf(input);
  let json: Json;
  if (mode === 'fields') {
    json = { ...input, properties: { ...(input.properties as Json), swarmId: SWARM_ID_JSON, wait: WAIT_JSON } };
  } else {
    const { schema, defs } = nestable(input);
    json = {
      type: 'object',
      properties: { input: { description: `The input of swarm "${def.id}".`, ...schema }, swarmId: SWARM_ID_JSON, wait: WAIT_JSON },
      required: ['input'],
      ...(defs ? { $defs: defs } : {}),
    };
  }
  return {
    mode,
    schema: standard(json, (value) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return { issues: [{ message: 'Arguments must be an object' }] };
      const args = value as Json;
      const issues: { message: string; path: string[] }[] = [];
      if (args.swarmId !== undefined && (typeof args.swarmId !== 'string' || args.swarmId === '')) {
        issues.push({ message: 'swarmId must be a non-empty string', path: ['swarmId'] });
      }
      if (args.wait !== undefined && typeof args.wait !== 'boolean') issues.push({ message: 'wait must be a boolean', path: ['wait'] });
      if (mode === 'wrapped' && !('input' in args)) issues.push({ message: 'input is required', path: ['input'] });
      return issues.length > 0 ? { issues } : { value };
    }),
  };
}

/** Splits `<id>_run` arguments into the swarm input and the envelope fields. */
export function splitRunArgs(args: Json, mode: InputMode): { input: unknown; swarmId?: string; wait?: boolean } {
  const { swarmId, wait, ...rest } = args;
  return {
    input: mode === 'fields' ? rest : rest.input,
    ...(typeof swarmId === 'string' ? { swarmId } : {}),
    ...(typeof wait === 'boolean' ? { wait } : {}),
  };
}

/**
 * The output schema shared by the tools: a swarm id plus a `SwarmResult`'s fields, with
 * `result` described by the definition's result schema (as produced, `io: 'output'`).
 */
export function swarmResultSchema(def: SwarmDefinition): StandardSchemaWithJSON {
  const { schema: result, defs } = nestable(z.toJSONSchema(def.result, { unrepresentable: 'any', io: 'output' }) as Json);
  const json: Json = {
    type: 'object',
    properties: {
      swarmId: { type: 'string' },
      status: { type: 'string', enum: ['running', 'paused', 'completed', 'failed', 'stopped'] },
      result: { description: 'The swarm result (status completed).', ...result },
      reason: {
        description: 'Why it failed or was stopped (a string), or why it is paused (an object).',
        anyOf: [
          { type: 'string' },
          {
            type: 'object',
            properties: {
              type: { type: 'string' },
              message: { type: 'string' },
              pendingApprovalId: { type: 'string' },
              pauseId: { type: 'string' },
              responseSchema: { type: 'object', description: 'The JSON Schema the answer must match, for a typed pause.' },
              limit: { type: 'object', description: 'For a LIMIT pause: the limit that tripped, what was spent of it and what is left.' },
            },
            required: ['type', 'message'],
          },
        ],
      },
      rejected: {
        type: 'object',
        description: 'Set when the swarm failed because a guardrail rejected it (A2A state rejected): which guardrail, at which step.',
        properties: { guardrail: { type: 'string' }, step: { type: 'string' }, callId: { type: 'string' } },
        required: ['guardrail', 'step'],
      },
      currentTurn: { type: 'integer' },
      maxTurns: { type: 'integer' },
      currentAgent: { type: 'string' },
      currentChildSwarm: { type: 'string' },
    },
    required: ['status'],
    ...(defs ? { $defs: defs } : {}),
  };
  // Our own results always conform; the SDK only needs the JSON Schema to advertise.
  return standard(json, (value) => ({ value }));
}
