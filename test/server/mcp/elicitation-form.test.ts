/**
 * Which response schemas MCP elicitation can ask for: flat objects of primitives map property
 * for property (keeping only what MCP allows), a primitive is asked as the field `answer`,
 * anything nested or nullable does not fit.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { responseSchemaOf } from '../../../src/define/response-schema.js';
import { answerFromContent, elicitationForm } from '../../../src/server/mcp/elicitation.js';

describe('elicitationForm', () => {
  it('maps a flat zod object of primitives, dropping what MCP cannot carry (the answer is still checked against the whole schema)', () => {
    const schema = responseSchemaOf(
      z.object({
        approved: z.boolean().describe('Go ahead?'),
        city: z
          .string()
          .min(2)
          .regex(/^[A-Z]/),
        size: z.enum(['s', 'm', 'l']),
        guests: z.number().int().min(1).max(12).optional(),
        tags: z.array(z.enum(['a', 'b'])),
      }),
    );
    expect(elicitationForm(schema)).toEqual({
      wrapped: false,
      requestedSchema: {
        type: 'object',
        properties: {
          approved: { type: 'boolean', description: 'Go ahead?' },
          city: { type: 'string', minLength: 2 },
          size: { type: 'string', enum: ['s', 'm', 'l'] },
          guests: { type: 'integer', minimum: 1, maximum: 12 },
          tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
        },
        required: ['approved', 'city', 'size', 'tags'],
      },
    });
  });

  it('asks a primitive as the field answer, and reads the answer back from it', () => {
    const form = elicitationForm({ type: 'integer', minimum: 1 })!;
    expect(form).toEqual({ wrapped: true, requestedSchema: { type: 'object', properties: { answer: { type: 'integer', minimum: 1 } }, required: ['answer'] } });
    expect(answerFromContent(form, { answer: 3 })).toBe(3);
    expect(answerFromContent({ wrapped: false }, { a: 1 })).toEqual({ a: 1 });
  });

  it('does not fit nested objects, arrays of objects, nullable fields or unions', () => {
    expect(elicitationForm(responseSchemaOf(z.object({ address: z.object({ city: z.string() }) })))).toBeUndefined();
    expect(elicitationForm(responseSchemaOf(z.object({ items: z.array(z.object({ id: z.string() })) })))).toBeUndefined();
    expect(elicitationForm(responseSchemaOf(z.object({ note: z.string().nullable() })))).toBeUndefined();
    expect(elicitationForm(responseSchemaOf(z.union([z.string(), z.number()])))).toBeUndefined();
    expect(elicitationForm({ type: 'array', items: { type: 'number' } })).toBeUndefined();
  });
});
