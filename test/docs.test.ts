/**
 * The documentation's code compiles: every ```ts block of README.md and every `@example` of the
 * TSDoc in src/, machines/ and actors/ is written as a module into a `.docs-tmp/` folder under
 * os.tmpdir() (removed after the run), where 'xswarm' and 'xswarm/<subpath>' resolve to the
 * sources and every other import to the repository's node_modules, and all of them are type-checked
 * in one run of the repository's tsc with the repository's compiler options.
 *
 * Conventions for the snippets:
 * - An example is real code against the public API: it imports what it uses from 'xswarm' or a
 *   subpath ('xswarm/server', …), never from a source file.
 * - Names a snippet takes from its surroundings (`runtime`, `client`, `model`, `planner`, …) are
 *   declared once in PRELUDE below; a snippet that declares one itself shadows it.
 * - A README block preceded by `<!-- docs: skip (why) -->` is not compiled; only for blocks
 *   written as signatures or shapes rather than code (the contract, the event shapes).
 * - A type the README writes out under a name xswarm exports (`SwarmResult`, `PauseReason`) is
 *   checked to be that type, both ways.
 * A canary snippet that must fail (an unknown option, the event shape of format 1) proves that
 * the run really checks snippets against the API. Each error is reported at its line in the
 * README or source file.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCE_DIRS = ['src', 'machines', 'actors'];

/** Context the snippets may use without declaring it (shadowed by a snippet's own declaration). */
const PRELUDE = `import type { AgentDefinition, Model, Runtime, SwarmClient, SwarmDefinition, Tool } from 'xswarm';
declare global {
  const runtime: Runtime;
  const client: SwarmClient<string>;
  const model: Model;
  const myModel: Model;
  const planner: SwarmDefinition;
  const ticketing: SwarmDefinition;
  const weather: AgentDefinition;
  const forecast: Tool;
  const swarms: SwarmDefinition[];
  const line: string;
}
export {};
`;

interface Snippet {
  /** File name in the snippets' folder. */
  file: string;
  /** What it is, for messages: `block at line 57` or `@example of tool`. */
  origin: string;
  /** The source file it comes from and, per snippet line, the line it has there (1-based). */
  source: string;
  lines: number[];
  code: string;
}

/** The type names the main entry point exports. */
const API_TYPES = new Set(
  [...readFileSync(join(ROOT, 'src/index.ts'), 'utf8').matchAll(/export\s+type\s*\{([^}]*)\}/g)].flatMap((m) =>
    m[1]!.split(',').map((n) => n.trim()).filter(Boolean),
  ),
);

/** The ```ts blocks of a Markdown file, minus those marked `<!-- docs: skip (why) -->`. */
function markdownSnippets(path: string): { snippets: Snippet[]; skipped: number } {
  const text = readFileSync(join(ROOT, path), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  let skipped = 0;
  for (let i = 0; i < text.length; i++) {
    const open = /^```(\w*)/.exec(text[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < text.length && !text[end]!.startsWith('```')) end++;
    const lang = open[1]!;
    if (lang === 'ts' || lang === 'typescript') {
      const before = text.slice(0, i).reverse().find((l) => l.trim() !== '') ?? '';
      if (/^<!--\s*docs:\s*skip\b/.test(before)) skipped++;
      else {
        const body = text.slice(i + 1, end);
        const lines = body.map((_, k) => i + 2 + k);
        // A type the README writes out that xswarm exports must be the same type, both ways.
        body.forEach((l, k) => {
          const t = /^(?:export\s+)?type\s+(\w+)(<[^>=]*>)?\s*=/.exec(l);
          if (!t || !API_TYPES.has(t[1]!)) return;
          const [name, args] = [t[1]!, t[2] ? '<string>' : ''];
          body.push(
            `import type { ${name} as Api${name} } from 'xswarm';`,
            `export const same${name} = [(x: ${name}${args}): Api${name}${args} => x, (x: Api${name}${args}): ${name}${args} => x];`,
          );
          lines.push(lines[k]!, lines[k]!);
        });
        snippets.push({
          file: `${path.replace(/\W+/g, '-')}-L${i + 1}.ts`,
          origin: `block at line ${i + 1}`,
          source: path,
          lines,
          code: body.join('\n'),
        });
      }
    }
    i = end;
  }
  return { snippets, skipped };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f))
    .sort();
}

/** The name a doc comment documents: the declaration after it, or `module` for a file comment. */
function documented(comment: string[], next: string | undefined): string {
  if (comment.some((l) => /^\s*\*\s*@module\b/.test(l))) return 'module';
  const m = /^\s*export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum|abstract\s+class)\s+(\w+)/.exec(
    next ?? '',
  );
  return m?.[1] ?? (next ?? '').trim().slice(0, 40);
}

/** Every `@example` of the TSDoc comments of a TypeScript file (a ``` fence inside is optional). */
function tsdocSnippets(path: string): Snippet[] {
  const text = readFileSync(join(ROOT, path), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < text.length; i++) {
    if (!/^\s*\/\*\*/.test(text[i]!)) continue;
    let end = i;
    while (end < text.length && !text[end]!.includes('*/')) end++;
    const comment = text.slice(i, end + 1);
    const symbol = documented(comment, text.slice(end + 1).find((l) => l.trim() !== ''));
    for (let k = 0; k < comment.length; k++) {
      if (!/^\s*\*\s*@example\b/.test(comment[k]!)) continue;
      const body: { line: number; code: string }[] = [];
      for (let j = k + 1; j < comment.length; j++) {
        const raw = comment[j]!;
        if (/^\s*\*\s*@\w/.test(raw)) break;
        const closing = raw.includes('*/');
        const code = raw.replace(/\*\/.*$/, '').replace(/^\s*\*( |$)/, '');
        if (!closing || code.trim() !== '') body.push({ line: i + j + 1, code });
        if (closing) break;
      }
      const kept = body.filter((b) => !/^```/.test(b.code.trim()));
      while (kept.length > 0 && kept[kept.length - 1]!.code.trim() === '') kept.pop();
      snippets.push({
        file: `${path.replace(/\W+/g, '-')}-${symbol}-L${i + k + 1}.ts`,
        origin: `@example of ${symbol}`,
        source: path,
        lines: kept.map((b) => b.line),
        code: kept.map((b) => b.code).join('\n'),
      });
    }
    i = end;
  }
  return snippets;
}

/** A snippet that must not compile: proves the run really checks snippets against the API. */
const CANARY: Snippet = {
  file: 'canary.ts',
  origin: 'canary',
  source: 'canary',
  lines: [1, 2, 3, 4],
  code: [
    "import { createRuntime, defineSwarm } from 'xswarm';",
    "const s = defineSwarm({ id: 'x', instructions: 'y' });",
    'createRuntime({ swarms: [s], model, maxTurns: 3 });', // no such option
    'for await (const e of client.events()) if (e.kind === "status-update") console.log(e.state);', // the old shape
  ].join('\n'),
};

interface TscError {
  file: string;
  line: number;
  message: string;
}

function typeCheck(snippets: Snippet[]): Promise<{ errors: TscError[]; output: string }> {
  // Named .docs-tmp (the error pattern below finds snippets by it), in a folder of its own under
  // os.tmpdir() that is removed after tsc; its node_modules is the repository's, so imports
  // resolve as they do there.
  const TMP = join(mkdtempSync(join(tmpdir(), 'xswarm-docs-')), '.docs-tmp');
  mkdirSync(TMP);
  symlinkSync(join(ROOT, 'node_modules'), join(TMP, 'node_modules'), 'dir');
  // ESM, as the repository's package.json makes its own files.
  writeFileSync(join(TMP, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  writeFileSync(
    join(TMP, 'tsconfig.json'),
    JSON.stringify(
      {
        extends: join(ROOT, 'tsconfig.json'),
        compilerOptions: {
          // Examples show one thing; what they declare for it need not be used afterwards.
          noUnusedLocals: false,
          noUnusedParameters: false,
          paths: { xswarm: [join(ROOT, 'src/index.ts')], 'xswarm/*': [join(ROOT, 'src/entries/*.ts')] },
        },
        include: ['*.ts'],
      },
      null,
      2,
    ),
  );
  writeFileSync(join(TMP, 'prelude.d.ts'), PRELUDE);
  // Each snippet is a module (`export {}`), so its declarations shadow the prelude's globals.
  for (const s of snippets) writeFileSync(join(TMP, s.file), `${s.code}\nexport {};\n`);
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [tsc, '-p', join(TMP, 'tsconfig.json'), '--pretty', 'false'],
      { cwd: ROOT, timeout: 120_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        rmSync(dirname(TMP), { recursive: true, force: true });
        if (error && error.code !== 1 && error.code !== 2) return reject(error);
        const output = `${stdout}${stderr}`;
        const errors: TscError[] = [];
        // Errors that start in a snippet: `<tmp>/.docs-tmp/<file>(line,col): error TSnnnn: message`.
        for (const m of output.matchAll(/^(?:.*[\\/])?\.docs-tmp[\\/]([^(\s]+)\((\d+),\d+\): (error .*)$/gm)) {
          errors.push({ file: m[1]!, line: Number(m[2]), message: m[3]! });
        }
        resolve({ errors, output });
      },
    );
  });
}

describe('documentation code', () => {
  it('every README ts block and every TSDoc @example compiles against the public API', async () => {
    const readme = markdownSnippets('README.md');
    const tsdoc = SOURCE_DIRS.flatMap(sourceFiles).flatMap(tsdocSnippets);
    // The extraction itself works: the README has its examples, the entry points theirs.
    expect(readme.snippets.length).toBeGreaterThanOrEqual(2);
    expect(tsdoc.length).toBeGreaterThanOrEqual(15);
    expect(readme.skipped).toBeLessThanOrEqual(2);

    const snippets = [...readme.snippets, ...tsdoc, CANARY];
    const { errors, output } = await typeCheck(snippets);
    const byFile = new Map(snippets.map((s) => [s.file, s]));

    const problems = errors
      .filter((e) => e.file !== CANARY.file)
      .map((e) => {
        const s = byFile.get(e.file);
        return s ? `${s.source}:${s.lines[e.line - 1] ?? '?'} (${s.origin}): ${e.message}` : `${e.file}: ${e.message}`;
      });
    expect(problems.length, `documentation code that does not compile:\n${problems.join('\n')}\n`).toBe(0);

    // The canary fails where it should: an unknown option, and the event shape before format 2.
    const canary = errors.filter((e) => e.file === CANARY.file).map((e) => e.line);
    expect(canary, output).toEqual([3, 4]);
  }, 120_000);
});
