/**
 * The event model is written twice — TypeScript types in `machines/events.ts` (machines import
 * only xstate) and the zod schema in `src/events/schema.ts` — and tied by compile-time checks at
 * the end of the schema: the facts, the public events, the internal events and the whole stream
 * are each the same type on both sides.
 *
 * That the checks bite is shown by mutation: copies of the schema and of `machines/` are each
 * changed on one side only (a field added, dropped or retyped, in the types or in the schema,
 * at the top or deep inside) and type-checked together in one run of the repository's tsc, in a
 * folder under os.tmpdir() removed afterwards. The unchanged copy compiles; every changed one
 * fails at the check of what it changed, and nowhere else. Then the runtime's own output — the
 * truth both sides describe — passes the schema, internal events included.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, internalSwarmEventSchema, type Runtime, swarmEventSchema, tool } from '../../src/index.js';
import type { SameShape } from '../../src/events/schema.js';
import { call, calls, collect, queueModel } from '../support/script.js';
import { REPO_ROOT } from '../support/repo-root.js';

const SCHEMA = 'src/events/schema.ts';

// ---- SameShape itself (checked by `npm run typecheck`, like the rest of this file) -----------
// How a type is written does not count; an optional field on one side only does, at any depth.
const writtenOtherwise: SameShape<{ a: string } & { b?: number }, { a: string; b?: number }> = true;
// @ts-expect-error an optional field on one side only: mutual assignability would call these equal
const optionalAdded: SameShape<{ a: string }, { a: string; b?: number }> = true;
// @ts-expect-error the same, inside an array
const deepAdded: SameShape<{ a: { b: string }[] }, { a: { b: string; c?: number }[] }> = true;
// @ts-expect-error a member more in a union
const memberAdded: SameShape<{ k: 'x' }, { k: 'x' } | { k: 'y' }> = true;

/** The checks of the schema, by the name of the constant that holds each. */
const CHECKS = ['factsAreTheModel', 'publicEventsAreTheModel', 'internalEventsAreTheModel', 'eventsAreTheModel'] as const;
type Check = (typeof CHECKS)[number];

/** A change to one side of the model, and the checks it must break (every other must hold). */
interface Mutant {
  name: string;
  file: string;
  from: string;
  to: string;
  breaks: Check[];
}

const PUBLIC: Check[] = ['publicEventsAreTheModel', 'eventsAreTheModel'];
const INTERNAL: Check[] = ['internalEventsAreTheModel', 'eventsAreTheModel'];

const MUTANTS: Mutant[] = [
  {
    name: 'an optional field added to a fact type',
    file: 'machines/events.ts',
    from: "| { type: 'started'; definitionId: string }",
    to: "| { type: 'started'; definitionId: string; note?: string }",
    breaks: ['factsAreTheModel', ...PUBLIC],
  },
  {
    name: 'an optional field added to a fact schema',
    file: SCHEMA,
    from: "z.strictObject({ type: z.literal('started'), definitionId: z.string() })",
    to: "z.strictObject({ type: z.literal('started'), definitionId: z.string(), note: z.string().optional() })",
    breaks: ['factsAreTheModel', ...PUBLIC],
  },
  {
    name: 'a fact dropped from the schema',
    file: SCHEMA,
    from: "  z.strictObject({ type: z.literal('stopped'), reason: z.string() }),\n",
    to: '',
    breaks: ['factsAreTheModel', ...PUBLIC],
  },
  {
    name: 'an optional field added to a public event type',
    file: 'machines/events.ts',
    from: '  final: boolean;\n  metadata: SwarmFact;\n',
    to: '  final: boolean;\n  metadata: SwarmFact;\n  note?: string;\n',
    breaks: PUBLIC,
  },
  {
    name: 'an optional field added to a public event schema',
    file: SCHEMA,
    from: '  lastChunk: z.boolean().optional(),\n',
    to: '  lastChunk: z.boolean().optional(),\n  note: z.string().optional(),\n',
    breaks: PUBLIC,
  },
  {
    name: 'a field of a message part retyped in the types',
    file: 'machines/events.ts',
    from: "  kind: 'text';\n  text: string;\n",
    to: "  kind: 'text';\n  text: string | number;\n",
    breaks: PUBLIC,
  },
  {
    name: 'an optional field added to an internal event type',
    file: 'machines/events.ts',
    from: "| { kind: 'internal:checkpoint'; step: CheckpointStep }",
    to: "| { kind: 'internal:checkpoint'; step: CheckpointStep; note?: string }",
    breaks: INTERNAL,
  },
  {
    name: 'a field dropped from an internal event schema',
    file: SCHEMA,
    from: '    key: z.string(),\n    ...internalStamp,\n',
    to: '    ...internalStamp,\n',
    breaks: INTERNAL,
  },
  {
    name: 'an internal field retyped in the schema',
    file: SCHEMA,
    from: 'durationMs: z.number().nonnegative(),',
    to: 'durationMs: z.string(),',
    breaks: INTERNAL,
  },
  {
    name: 'a field added deep inside the journal (the usage a model reports)',
    file: 'machines/messages.ts',
    from: '  outputTokens: number;\n',
    to: '  outputTokens: number;\n  cachedTokens?: number;\n',
    breaks: INTERNAL,
  },
];

interface TscError {
  copy: string;
  file: string;
  line: number;
  message: string;
}

/**
 * Type-checks the schema of each copy (`base`, unchanged, and one per mutant) in one tsc run;
 * returns the errors by copy, with the source of each copy's schema.
 */
async function typeCheckCopies(): Promise<{ errors: TscError[]; schemas: Map<string, string>; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'xswarm-event-schema-'));
  try {
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: join(REPO_ROOT, 'tsconfig.json'), include: [`*/${SCHEMA}`] }));
    const schemas = new Map<string, string>();
    const copies: [string, Mutant | undefined][] = [['base', undefined], ...MUTANTS.map((m, i): [string, Mutant] => [`m${i}`, m])];
    for (const [copy, mutant] of copies) {
      cpSync(join(REPO_ROOT, 'machines'), join(dir, copy, 'machines'), { recursive: true });
      mkdirSync(join(dir, copy, dirname(SCHEMA)), { recursive: true });
      cpSync(join(REPO_ROOT, SCHEMA), join(dir, copy, SCHEMA));
      if (mutant) {
        const path = join(dir, copy, mutant.file);
        const text = readFileSync(path, 'utf8');
        // Exactly once: a mutant that no longer applies must be rewritten, not silently pass.
        expect(text.split(mutant.from).length - 1, `${mutant.name}: "${mutant.from}" in ${mutant.file}`).toBe(1);
        writeFileSync(path, text.replace(mutant.from, mutant.to));
      }
      schemas.set(copy, readFileSync(join(dir, copy, SCHEMA), 'utf8'));
    }
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [tsc, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'],
        { cwd: dir, timeout: 120_000, maxBuffer: 16 << 20 },
        (error, stdout, stderr) => {
          // 1 and 2: tsc ran and reported errors.
          if (error && error.code !== 1 && error.code !== 2) return reject(error);
          resolve(`${stdout}${stderr}`);
        },
      );
    });
    const errors: TscError[] = [];
    for (const m of output.matchAll(/^(?:.*[\\/])?(base|m\d+)[\\/](\S+?)\((\d+),\d+\): (error .*)$/gm)) {
      errors.push({ copy: m[1]!, file: m[2]!.replaceAll('\\', '/'), line: Number(m[3]), message: m[4]! });
    }
    return { errors, schemas, output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The check a line of a schema's source holds, if any. */
function checkAt(source: string, line: number): string | undefined {
  return /^const (\w+): SameShape</.exec(source.split('\n')[line - 1] ?? '')?.[1];
}

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe('the event schema is tied to the event types', () => {
  it('SameShape tells apart what mutual assignability would not', () => {
    expect([writtenOtherwise, optionalAdded, deepAdded, memberAdded]).toEqual([true, true, true, true]);
  });

  it('a change to one side only fails to compile, at the check of what changed; the unchanged model compiles', async () => {
    const { errors, schemas, output } = await typeCheckCopies();
    // The schema's copy holds every check (the mutants find them by name).
    expect(CHECKS.map((c) => schemas.get('base')!.includes(`const ${c}: SameShape<`))).toEqual(CHECKS.map(() => true));
    expect(
      errors.filter((e) => e.copy === 'base'),
      output,
    ).toEqual([]);
    MUTANTS.forEach((mutant, i) => {
      const copy = `m${i}`;
      const mine = errors.filter((e) => e.copy === copy);
      const broken = mine.map((e) => (e.file === SCHEMA ? checkAt(schemas.get(copy)!, e.line) : undefined) ?? `${e.file}:${e.line} ${e.message}`);
      expect([...new Set(broken)].sort(), `${mutant.name}\n${output}`).toEqual([...mutant.breaks].sort());
    });
  }, 120_000);

  it('what the runtime emits passes the schema, internal events included, as emitted and as stored (JSON)', async () => {
    const lookup = tool({ name: 'lookup', description: 'l', parameters: z.object({ q: z.string() }), execute: ({ q }) => ({ q, hits: 1 }) });
    const model = queueModel({
      s: [
        { ...calls(['lookup', { q: 'a' }, 't1'], ['nope', {}, 'bad']), usage: { inputTokens: 3, outputTokens: 5 } },
        { text: '' },
        call('pause', { reason: 'May I?', type: 'APPROVAL_NEEDED' }, 'p1'),
        call('complete', { result: { ok: true } }),
      ],
    });
    runtime = createRuntime({ swarms: [defineSwarm({ id: 's', instructions: 'go', tools: [lookup], result: z.object({ ok: z.boolean() }) })], model });
    const c = runtime.forSwarm('s', 'schema-1');
    await c.run('x');
    expect((await c.wait()).status).toBe('paused');
    await c.resume('yes');
    expect(await c.wait()).toEqual({ status: 'completed', result: { ok: true } });
    const events = await collect(c.events());
    for (const e of events) {
      expect(swarmEventSchema.safeParse(e).error?.issues ?? [], `event ${e.seq}`).toEqual([]);
      expect(swarmEventSchema.safeParse(JSON.parse(JSON.stringify(e))).error?.issues ?? [], `event ${e.seq} as JSON`).toEqual([]);
    }
    // Every kind of internal event, and a journal with tools, an invalid call, a pause and verdicts.
    const internal = events.flatMap((e) => (e.kind.startsWith('internal:') ? [e.kind] : []));
    expect(new Set(internal)).toEqual(new Set(['internal:checkpoint', 'internal:llm-call', 'internal:tool-start', 'internal:tool-complete']));
    const journal = events.flatMap((e) => (e.kind === 'internal:llm-call' ? [e] : []));
    expect(new Set(journal.flatMap((e) => e.calls.map((p) => p.kind)))).toEqual(new Set(['tool', 'invalid', 'pause']));
    expect(new Set(journal.map((e) => e.verdict.type))).toEqual(new Set(['continue', 'correct', 'complete']));
    expect(journal[0]?.usage).toEqual({ inputTokens: 3, outputTokens: 5 });
  });

  it('an internal event is checked whole: an unknown field or kind is refused', () => {
    const checkpoint = { kind: 'internal:checkpoint', step: 'start', seq: 3, swarmId: 's', timestamp: 1 };
    expect(internalSwarmEventSchema.safeParse(checkpoint).success).toBe(true);
    expect(internalSwarmEventSchema.safeParse({ ...checkpoint, extra: 1 }).success).toBe(false);
    expect(internalSwarmEventSchema.safeParse({ ...checkpoint, step: 'nap' }).success).toBe(false);
    expect(swarmEventSchema.safeParse({ ...checkpoint, kind: 'internal:nope' }).success).toBe(false);
  });
});
