/**
 * Every documented line works as written. The ```ts blocks of README.md, of every Markdown file
 * under docs/ and of bench/README.md, and every TSDoc `@example` of src/, machines/, actors/ and
 * examples/, are written as modules into a temporary folder where 'xswarm' and
 * 'xswarm/<subpath>' resolve to the sources, and type-checked in one run of the repository's
 * tsc with the repository's compiler options. Then every Markdown block that is a whole program
 * is *run*, each in a child process (`node --import tsx`, which honours the same `paths`), and
 * must exit 0 in time; the README's first swarm is also held to what it prints. A few
 * documented command lines (the crash demo, `--db`, the approval demo, `xswarm run`, the
 * walkthroughs of examples/control.ts on SQLite, a one-row bench run) are run as written, with
 * bash, in a copy of the checkout made of links; Ctrl-C, where a walkthrough says to press it,
 * is a SIGINT to the command's process group, as a terminal sends it.
 *
 * Conventions for the Markdown blocks (the comment is the last non-blank line before the fence):
 * - A block is a whole program unless marked: it imports what it uses from 'xswarm' or a
 *   subpath ('xswarm/server', …), never from a source file; it reaches no network (scripted
 *   models; servers on 127.0.0.1, port 0, closed before the end) and ends on its own.
 * - `<!-- docs: compile-only (why) -->`: a fragment that uses names from PRELUDE below
 *   (`runtime`, `client`, `model`, …); it is type-checked, not run. Keep these few.
 * - `<!-- docs: skip (why) -->`: signatures or shapes rather than code; not compiled.
 * - A block that reads `process.env.NATS_URL` runs against a `nats-server -js` this test starts
 *   for it alone (when the binary is missing outside CI, such blocks are type-checked only,
 *   with a message).
 * - A type a block writes out under a name xswarm exports (`SwarmResult`, `PauseReason`) is
 *   checked to be that type, both ways.
 *
 * `@example` blocks are type-checked only. Those of src/, machines/ and actors/ import from
 * 'xswarm' like a user; those of examples/ are read in the context of the module they document:
 * the names it exports or imports that the example uses and does not declare are imported for
 * it, and the PRELUDE is there too.
 *
 * A canary snippet that must fail (an unknown option, the event shape of format 1) proves that
 * the type check really checks snippets against the API. Each error, of the compiler or of a
 * run, is reported at its line in the Markdown or source file. Nothing is written inside the
 * checkout: the folder is made with mkdtemp under the system's temporary directory and removed.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { REPO_ROOT } from '../support/repo-root.js';

/**
 * Where the package's entry points are in the sources: 'xswarm' and 'xswarm/<subpath>' resolve
 * here for the snippets (compiled and run). Re-point it when the entry points move.
 */
const ENTRY_POINTS = { main: 'src/index.ts', subpaths: 'src/entries/*.ts' } as const;

/** The folders whose TSDoc `@example` blocks are compiled. */
const TSDOC_DIRS = ['src', 'machines', 'actors', 'examples'];

/**
 * How many blocks the documentation has of each kind, at least (run, TSDoc examples) or at most
 * (compile-only, skipped): a block that stops running, or disappears, is noticed here. Raise
 * the floors when documentation is added.
 */
const EXPECTED = { runAtLeast: 54, runWithNatsAtLeast: 3, compileOnlyAtMost: 2, skippedAtMost: 2, tsdocAtLeast: 171 };

/** How long one documented program may take. */
const RUN_TIMEOUT_MS = 60_000;

/** Context the fragments may use without declaring it (shadowed by a snippet's own declaration). */
const PRELUDE = `import type { AgentDefinition, Model, ModelRequest, Runtime, SwarmClient, SwarmDefinition, Tool, ToolContext } from 'xswarm';
declare global {
  const runtime: Runtime;
  const client: SwarmClient<string>;
  const model: Model;
  const planner: SwarmDefinition;
  const ticketing: SwarmDefinition;
  const weather: AgentDefinition;
  const forecast: Tool;
  const swarms: SwarmDefinition[];
  const line: string;
  /** What a tool's \`execute\` receives beside its arguments (examples of tools call them with it). */
  const ctx: ToolContext;
  /** The request a scripted model's function receives (examples of model scripts read it). */
  const req: ModelRequest;
}
export {};
`;

type Mode = 'run' | 'compile';

interface Snippet {
  /** File name in the temporary folder. */
  file: string;
  /** What it is, for messages: `block at line 57` or `@example of tool`. */
  origin: string;
  /** The source file it comes from and, per snippet line, the line it has there (1-based). */
  source: string;
  lines: number[];
  code: string;
  mode: Mode;
  /** The Markdown heading the block is under. */
  heading?: string;
  /** The block runs against a NATS server (it reads `process.env.NATS_URL`). */
  nats?: boolean;
}

/** The type names the main entry point exports. */
const API_TYPES = new Set(
  [...readFileSync(join(REPO_ROOT, ENTRY_POINTS.main), 'utf8').matchAll(/export\s+type\s*\{([^}]*)\}/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean),
  ),
);

/** README.md, bench/README.md and every Markdown file under docs/, sorted. */
function markdownFiles(): string[] {
  const docs = existsSync(join(REPO_ROOT, 'docs'))
    ? readdirSync(join(REPO_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.md'))
        .map((f) => join('docs', f))
        .sort()
    : [];
  return ['README.md', ...docs, 'bench/README.md'].filter((f) => existsSync(join(REPO_ROOT, f)));
}

/** The ```ts blocks of a Markdown file, each with its mode; `skip`-marked blocks are counted only. */
function markdownSnippets(path: string): { snippets: Snippet[]; skipped: number; problems: string[] } {
  const text = readFileSync(join(REPO_ROOT, path), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  const problems: string[] = [];
  let skipped = 0;
  let heading = '';
  for (let i = 0; i < text.length; i++) {
    const h = /^#{1,6}\s+(.*)$/.exec(text[i]!);
    if (h) heading = h[1]!.trim();
    const open = /^```(\w*)/.exec(text[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < text.length && !text[end]!.startsWith('```')) end++;
    const lang = open[1]!;
    if (lang === 'ts' || lang === 'typescript') {
      const before =
        text
          .slice(0, i)
          .reverse()
          .find((l) => l.trim() !== '') ?? '';
      const marker = /^<!--\s*docs:\s*([\w-]+)\s*(.*?)\s*-->\s*$/.exec(before.trim());
      // A marker says why: a reader (and a reviewer) should see what keeps a block from running.
      if (marker && !/^\(.+\)$/.test(marker[2]!)) problems.push(`${path}:${i} marker without a (reason): ${before.trim()}`);
      if (marker && marker[1] !== 'skip' && marker[1] !== 'compile-only') problems.push(`${path}:${i} unknown marker: ${before.trim()}`);
      if (marker?.[1] === 'skip') skipped++;
      else {
        const body = text.slice(i + 1, end);
        const lines = body.map((_, k) => i + 2 + k);
        // A type the document writes out that xswarm exports must be the same type, both ways.
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
        const code = body.join('\n');
        snippets.push({
          file: `${path.replace(/\W+/g, '-')}-L${i + 1}.ts`,
          origin: `block at line ${i + 1}`,
          source: path,
          lines,
          code,
          mode: marker?.[1] === 'compile-only' ? 'compile' : 'run',
          heading,
          nats: /process\.env\.NATS_URL/.test(code),
        });
      }
    }
    i = end;
  }
  return { snippets, skipped, problems };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f))
    .sort();
}

/** The name a doc comment documents: the declaration after it, or `module` for a file comment. */
function documented(comment: string[], next: string | undefined): string {
  if (comment.some((l) => /^\s*\*\s*@module\b/.test(l))) return 'module';
  const m = /^\s*export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum|abstract\s+class)\s+(\w+)/.exec(next ?? '');
  return m?.[1] ?? (next ?? '').trim().slice(0, 40);
}

/** The names a module exports: values (may be imported plainly) and types (imported with `type`). */
function exportsOf(text: string): { values: Set<string>; types: Set<string> } {
  const values = new Set<string>();
  const types = new Set<string>();
  for (const m of text.matchAll(/^export\s+(?:declare\s+)?(?:async\s+)?(function\*?|const|let|class|abstract\s+class|enum|interface|type)\s+(\w+)/gm)) {
    (m[1] === 'interface' || m[1] === 'type' ? types : values).add(m[2]!);
  }
  for (const m of text.matchAll(/^export\s+(type\s+)?\{([^}]*)\}/gm)) {
    for (const spec of m[2]!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const typeOnly = Boolean(m[1]) || spec.startsWith('type ');
      const name = spec
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .at(-1)!
        .trim();
      (typeOnly ? types : values).add(name);
    }
  }
  // A name exported as a value and as a type (a zod schema and its output type) is a value import.
  for (const v of values) types.delete(v);
  return { values, types };
}

/** The names a snippet declares at its top level, roughly: enough to leave them out of an import. */
function declaredIn(code: string): Set<string> {
  const names = new Set<string>();
  for (const m of code.matchAll(/\b(?:const|let|var|function\*?|class|interface|type|enum)\s+(\w+)/g)) names.add(m[1]!);
  for (const m of code.matchAll(/\b(?:const|let|var)\s*[{[]([^=]*)[}\]]\s*=/g)) {
    for (const n of m[1]!.matchAll(/(\w+)\s*(?:[,}\]=]|$)/g)) names.add(n[1]!);
  }
  for (const m of code.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}/gm)) {
    for (const spec of m[1]!.split(','))
      names.add(
        spec
          .replace(/^\s*type\s+/, '')
          .split(/\s+as\s+/)
          .at(-1)!
          .trim(),
      );
  }
  return names;
}

/** The named imports of a module: per name, the specifier (made absolute when relative) and whether it is a type. */
function importsOf(path: string, text: string): Map<string, { from: string; type: boolean }> {
  const names = new Map<string, { from: string; type: boolean }>();
  for (const m of text.matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s*from\s*'([^']+)'/gm)) {
    const from = m[3]!.startsWith('.') ? join(REPO_ROOT, path, '..', m[3]!) : m[3]!;
    for (const spec of m[2]!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const name = spec
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .at(-1)!
        .trim();
      names.set(name, { from, type: Boolean(m[1]) || spec.startsWith('type ') });
    }
  }
  return names;
}

/**
 * The imports that put an `@example` of examples/ in the context of the module it documents:
 * the names the module exports and the names it imports, those the example uses and does not
 * declare itself. One line, so that the example's lines keep their numbers.
 */
function moduleScope(path: string, code: string): string {
  const text = readFileSync(join(REPO_ROOT, path), 'utf8');
  const self = join(REPO_ROOT, path).replace(/\.ts$/, '.js');
  const names = importsOf(path, text);
  const { values, types } = exportsOf(text);
  for (const n of values) names.set(n, { from: self, type: false });
  for (const n of types) names.set(n, { from: self, type: true });
  const declared = declaredIn(code);
  const bySource = new Map<string, string[]>();
  for (const [name, { from, type }] of names) {
    if (declared.has(name) || !new RegExp(`(?<![\\w.'"])${name}\\b`).test(code)) continue;
    bySource.set(from, [...(bySource.get(from) ?? []), type ? `type ${name}` : name]);
  }
  return [...bySource].map(([from, specs]) => `import { ${specs.join(', ')} } from '${from}';`).join(' ');
}

/** Every `@example` of the TSDoc comments of a TypeScript file (a ``` fence inside is optional). */
function tsdocSnippets(path: string): Snippet[] {
  const text = readFileSync(join(REPO_ROOT, path), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < text.length; i++) {
    if (!/^\s*\/\*\*/.test(text[i]!)) continue;
    let end = i;
    while (end < text.length && !text[end]!.includes('*/')) end++;
    const comment = text.slice(i, end + 1);
    const symbol = documented(
      comment,
      text.slice(end + 1).find((l) => l.trim() !== ''),
    );
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
      const code = kept.map((b) => b.code).join('\n');
      const lines = kept.map((b) => b.line);
      const scope = path.startsWith('examples/') ? moduleScope(path, code) : '';
      snippets.push({
        file: `${path.replace(/\W+/g, '-')}-${symbol}-L${i + k + 1}.ts`,
        origin: `@example of ${symbol}`,
        source: path,
        lines: scope ? [lines[0] ?? i + k + 1, ...lines] : lines,
        code: scope ? `${scope}\n${code}` : code,
        mode: 'compile',
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
  mode: 'compile',
  code: [
    "import { createRuntime, defineSwarm } from 'xswarm';",
    "const s = defineSwarm({ id: 'x', instructions: 'y' });",
    'createRuntime({ swarms: [s], model, maxTurns: 3 });', // no such option
    'for await (const e of client.events()) if (e.kind === "status-update") console.log(e.state);', // the old shape
  ].join('\n'),
};

/** The place of a snippet's line in its document or source file. */
const at = (s: Snippet, line: number) => `${s.source}:${s.lines[line - 1] ?? '?'} (${s.origin})`;

/**
 * The temporary folder: a tsconfig whose `paths` point 'xswarm' at the sources (read by tsc and
 * by tsx), `type: module` so the snippets are ES modules, a link to the repository's
 * node_modules for the packages the snippets import, the prelude and the snippets.
 */
function prepare(dir: string, snippets: Snippet[]): void {
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify(
      {
        extends: join(REPO_ROOT, 'tsconfig.json'),
        compilerOptions: {
          // Examples show one thing; what they declare for it need not be used afterwards.
          noUnusedLocals: false,
          noUnusedParameters: false,
          paths: { xswarm: [join(REPO_ROOT, ENTRY_POINTS.main)], 'xswarm/*': [join(REPO_ROOT, ENTRY_POINTS.subpaths)] },
        },
        include: ['*.ts'],
      },
      null,
      2,
    ),
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'prelude.d.ts'), PRELUDE);
  // Each snippet is a module (`export {}`), so its declarations shadow the prelude's globals.
  for (const s of snippets) writeFileSync(join(dir, s.file), `${s.code}\nexport {};\n`);
}

interface TscError {
  file: string;
  line: number;
  message: string;
}

function typeCheck(dir: string): Promise<{ errors: TscError[]; output: string }> {
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [tsc, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'],
      { cwd: dir, timeout: 120_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        if (error && error.code !== 1 && error.code !== 2) return reject(error);
        const output = `${stdout}${stderr}`;
        const errors: TscError[] = [];
        // Errors that start in a snippet: `<file>.ts(line,col): error TSnnnn: message`, the file
        // in the temporary folder (named relative to it, or with its path).
        for (const m of output.matchAll(/^(?:.*[\\/])?([^\\/(\s]+\.ts)\((\d+),\d+\): (error .*)$/gm)) {
          if (existsSync(join(dir, m[1]!))) errors.push({ file: m[1]!, line: Number(m[2]), message: m[3]! });
        }
        resolve({ errors, output });
      },
    );
  });
}

interface RunOutcome {
  snippet: Snippet;
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/** The environment of a documented program or command: no model credentials, no colours. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const k of Object.keys(env)) if (/^(OPENAI_|XSWARM_|NATS_URL$)/.test(k)) delete env[k];
  delete env.NODE_OPTIONS; // no loader inherited from the test runner
  return { ...env, ...extra };
}

/**
 * Runs a command to its end (or kills it at `timeoutMs`); never rejects on a failed command.
 * `ctrlC`: once stdout matches it, the command's process group gets a `SIGINT`, as a terminal
 * sends it on Ctrl-C.
 */
function exec(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; ctrlC?: RegExp },
): Promise<Omit<RunOutcome, 'snippet'>> {
  return new Promise((resolve, reject) => {
    // A process group of its own, so that a timeout kills what the command started too.
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let interrupted = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, options.timeoutMs);
    child.stdout.on('data', (b: Buffer) => {
      stdout += b;
      if (options.ctrlC && !interrupted && options.ctrlC.test(stdout)) {
        interrupted = true;
        process.kill(-child.pid!, 'SIGINT');
      }
    });
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, stdout, stderr });
    });
  });
}

/**
 * Runs one snippet as a program, in a working directory of its own inside the temporary folder
 * (a block that opens `.xswarm/state.db` gets its own). A NATS block gets a `nats-server` of its
 * own, so that no two blocks share definitions, swarm ids or JetStream state.
 */
async function runSnippet(dir: string, s: Snippet): Promise<RunOutcome> {
  const cwd = join(dir, 'run', s.file.replace(/\.ts$/, ''));
  mkdirSync(cwd, { recursive: true });
  const server = s.nats ? await startNatsServer() : undefined;
  try {
    const env = cleanEnv({ TSX_TSCONFIG_PATH: join(dir, 'tsconfig.json'), ...(server ? { NATS_URL: server.url } : {}) });
    return { snippet: s, ...(await exec(process.execPath, ['--import', 'tsx', join(dir, s.file)], { cwd, env, timeoutMs: RUN_TIMEOUT_MS })) };
  } finally {
    await server?.stop();
  }
}

/** Runs the snippets `width` at a time, in document order. */
async function runAll(dir: string, snippets: Snippet[], width: number): Promise<RunOutcome[]> {
  const outcomes: RunOutcome[] = new Array(snippets.length);
  let next = 0;
  const lane = async () => {
    while (next < snippets.length) {
      const k = next++;
      outcomes[k] = await runSnippet(dir, snippets[k]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, snippets.length) }, lane));
  return outcomes;
}

/** A failed run, its stack's lines in the snippet file shown at their place in the document. */
function describeFailure(o: RunOutcome): string {
  const s = o.snippet;
  const how = o.timedOut ? `did not end within ${RUN_TIMEOUT_MS / 1000} s` : `exited with ${o.code ?? o.signal}`;
  const file = s.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const stderr = o.stderr.replace(new RegExp(`\\S*${file}:(\\d+)(?::\\d+)?`, 'g'), (_, line: string) => at(s, Number(line)));
  return `${s.source}:${s.lines[0]! - 1} (${s.origin}) ${how}\n${stderr.trim().split('\n').slice(0, 25).join('\n')}\n${o.stdout.trim().split('\n').slice(-10).join('\n')}`;
}

const markdown = markdownFiles().map((f) => ({ file: f, ...markdownSnippets(f) }));
const blocks = markdown.flatMap((m) => m.snippets);
const tsdoc = TSDOC_DIRS.flatMap(sourceFiles).flatMap(tsdocSnippets);
const all = [...blocks, ...tsdoc, CANARY];
const natsMissing = natsServerMissing;
/** The blocks run as programs: all but the fragments, and the NATS ones only with a nats-server. */
const programs = blocks.filter((s) => s.mode === 'run' && !(s.nats && natsMissing));

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'xswarm-docs-'));
  prepare(dir, all);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * A checkout of the repository made of links, in the temporary folder: documented command lines
 * that write (`.xswarm/state.db`, `.xswarm/crash-demo.db`) run here exactly as written, and the
 * checkout stays as it is. Node follows the links to the real files, so the examples import the real sources.
 */
function sandbox(dir: string): string {
  const box = join(dir, 'checkout');
  if (existsSync(box)) return box;
  mkdirSync(box);
  for (const name of ['examples', 'src', 'machines', 'actors', 'bin', 'bench', 'node_modules', 'tsconfig.json']) {
    symlinkSync(join(REPO_ROOT, name), join(box, name));
  }
  writeFileSync(join(box, 'package.json'), readFileSync(join(REPO_ROOT, 'package.json')));
  return box;
}

/** The lines of the ```sh block that follows `heading` in a document (comments kept: bash reads them). */
function shellBlock(path: string, heading: string): string[] {
  const text = readFileSync(join(REPO_ROOT, path), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  expect(at, `${path} has a "${heading}" section`).toBeGreaterThan(0);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(at));
  return block![1]!.trimEnd().split('\n');
}

/** The line of a ```sh block of a document that starts with `prefix`. */
function shellLine(path: string, prefix: string): string {
  const text = readFileSync(join(REPO_ROOT, path), 'utf8');
  const lines = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));
  const line = lines.find((l) => l.startsWith(prefix));
  expect(line, `${path} has a command line starting with "${prefix}"`).toBeDefined();
  return line!;
}

/** The command lines of a ```sh block: its lines less the comment lines (output shown as comments). */
const commands = (lines: string[]) => lines.filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));

/** A command line without its trailing comment (`  # …`). */
const withoutComment = (line: string) => line.replace(/\s+#\s.*$/, '');

/** Runs one documented command line with bash in the sandbox (stdin: nothing, as `< /dev/null`). */
const shell = (box: string, line: string, timeoutMs = RUN_TIMEOUT_MS, ctrlC?: RegExp) => exec('bash', ['-c', line], { cwd: box, env: cleanEnv(), timeoutMs, ctrlC });

/** Everything a command printed, stdout then stderr, for messages. */
const printedBy = (r: { stdout: string; stderr: string }) => `${r.stdout}${r.stderr}`;

describe('documentation code', () => {
  it('the documents have the blocks they should, each marked as it should be', () => {
    const problems = markdown.flatMap((m) => m.problems);
    expect(problems, problems.join('\n')).toEqual([]);
    const run = blocks.filter((s) => s.mode === 'run');
    const compileOnly = blocks.filter((s) => s.mode === 'compile');
    const skipped = markdown.reduce((n, m) => n + m.skipped, 0);
    console.log(
      `docs: ${run.length} blocks run (${run.filter((s) => s.nats).length} on NATS), ${compileOnly.length} compile-only, ${skipped} skipped; ${tsdoc.length} @example blocks compiled`,
    );
    expect(run.length).toBeGreaterThanOrEqual(EXPECTED.runAtLeast);
    expect(run.filter((s) => s.nats).length).toBeGreaterThanOrEqual(EXPECTED.runWithNatsAtLeast);
    expect(compileOnly.length).toBeLessThanOrEqual(EXPECTED.compileOnlyAtMost);
    expect(compileOnly.length).toBeLessThan(run.length); // fragments stay a minority
    expect(skipped).toBeLessThanOrEqual(EXPECTED.skippedAtMost);
    expect(tsdoc.length).toBeGreaterThanOrEqual(EXPECTED.tsdocAtLeast);
    // The guides are where the README says they are.
    for (const guide of [
      'swarms',
      'api',
      'events',
      'composition',
      'teams',
      'registry',
      'durability',
      'distributed',
      'servers',
      'cli',
      'testing',
      'architecture',
      'testing-swarms',
      'forking',
      'operations',
      'deploys',
      'observability',
      'tracing',
      'a2a',
      'a2a-push',
      'mcp',
      'team-inbox',
    ]) {
      expect(markdown.map((m) => m.file)).toContain(join('docs', `${guide}.md`));
    }
  });

  it('every Markdown ts block and every TSDoc @example compiles against the public API', async () => {
    const { errors, output } = await typeCheck(dir);
    const byFile = new Map(all.map((s) => [s.file, s]));
    const problems = errors
      .filter((e) => e.file !== CANARY.file)
      .map((e) => {
        const s = byFile.get(e.file);
        return s ? `${at(s, e.line)}: ${e.message}` : `${e.file}: ${e.message}`;
      });
    expect(problems.length, `documentation code that does not compile:\n${problems.join('\n')}\n`).toBe(0);

    // The canary fails where it should: an unknown option, and the event shape before format 2.
    const canary = errors.filter((e) => e.file === CANARY.file).map((e) => e.line);
    expect(canary, output).toEqual([3, 4]);
  }, 120_000);

  it('every Markdown ts block that is a whole program runs to its end and exits 0', async () => {
    if (natsMissing && blocks.some((s) => s.nats)) console.warn(`docs: the NATS blocks are compiled only: ${natsMissing}`);
    const outcomes = await runAll(dir, programs, Math.max(1, Math.min(4, availableParallelism())));
    const failed = outcomes.filter((o) => o.code !== 0 || o.timedOut);
    expect(failed.length, `documented programs that fail:\n\n${failed.map(describeFailure).join('\n\n')}\n`).toBe(0);

    // The README's first swarm does what the README says: the planner hands off to the weather
    // agent, which calls its tool, and the swarm completes with the typed result.
    const first = outcomes.find((o) => o.snippet.source === 'README.md');
    expect(first?.snippet.heading).toMatch(/^A swarm in/);
    const out = first!.stdout;
    expect(out).toMatch(/agent-handoff.*weather-agent/);
    expect(out).toMatch(/tool-call.*get_forecast/);
    expect(out).toMatch(/handoff-result.*weather-agent/);
    expect(out).toMatch(/\bcompleted\b/);
    expect(out).toMatch(/status: 'completed',\s*result: \{ day: 'Saturday', activities: \[ 'hiking'(, '[^']+')* \] \}/);
  }, 300_000);
});

describe('documented command lines', () => {
  it('the crash demo: `--crash-after-turn 2` dies by SIGKILL after turn 2, the printed command continues the swarm, `xswarm replay` repeats it with no call', async () => {
    const box = sandbox(dir);
    const lines = commands(shellBlock('docs/durability.md', '## See it with the demo'));
    const [crash, again, replay] = lines;
    expect(crash, 'an `npm start -- --crash-after-turn` line first').toMatch(/^npm start -- --crash-after-turn 2 /);
    expect(again, 'an `npm start` line next').toMatch(/^npm start -- /);
    expect(replay, 'an `npm run xswarm -- replay <id>` line last').toMatch(/^npm run xswarm -- replay <id>/);
    // Relative to the checkout: the demo writes into the sandbox only.
    for (const l of lines) expect(l).toMatch(/ --db \.xswarm\//);

    const crashed = await shell(box, crash!);
    expect(crashed.code, printedBy(crashed)).toBe(137);
    const [, id, printed] = /crash: turn 2 of swarm (\S+) is stored; killing this process with SIGKILL .*\n {2}continue it with: (.*)\n/.exec(crashed.stderr) ?? [];
    expect(id, printedBy(crashed)).toBeDefined();
    // The page's second command is the one the demo prints.
    expect(withoutComment(again!)).toBe(printed);
    expect(crashed.stdout).not.toMatch(/turn 3\/10|completed/);

    const continued = await shell(box, again!);
    expect(continued.code, printedBy(continued)).toBe(0);
    expect(continued.stdout).toContain(`continuing swarm ${id}, interrupted earlier`);
    expect(continued.stdout).toContain('✓ completed');

    const replayed = await shell(box, replay!.replace('<id>', id!));
    expect(replayed.code, printedBy(replayed)).toBe(0);
    expect(printedBy(replayed)).toMatch(new RegExp(`replayed \\d+ events of ${id}: identical to the recording, 0 model calls, 0 tool calls`));
  }, 180_000);

  it('the state: `npm start -- --db` keeps the swarm in that file, `XSWARM_DB` points the command line at it', async () => {
    const box = sandbox(dir);
    const [start, list] = commands(shellBlock('docs/durability.md', '## Where the demo and the command line keep their state'));
    const db = / --db (\S+)/.exec(start!)?.[1];
    expect(db, 'an `npm start -- --db PATH` line').toMatch(/^\.xswarm\//);
    expect(list).toMatch(new RegExp(`^XSWARM_DB=${db!.replace(/\./g, '\\.')} npm run xswarm -- list\\b`));
    const started = await shell(box, start!);
    expect(started.code, printedBy(started)).toBe(0);
    const id = /\nswarm (\S+)\n/.exec(started.stdout)?.[1];
    expect(id, started.stdout).toBeDefined();
    const listed = await shell(box, list!);
    expect(listed.code, printedBy(listed)).toBe(0);
    // That file holds this swarm alone (the other demos use files of their own): the rows after the header.
    const rows = listed.stdout
      .slice(listed.stdout.indexOf('\nSWARM ') + 1)
      .trim()
      .split('\n')
      .slice(1);
    expect(rows, listed.stdout).toEqual([expect.stringMatching(new RegExp(`^${id} +activity-planner +completed `))]);
  }, 120_000);

  it('the approval demo: the answer comes from the pipe, or from nobody with --auto-answer', async () => {
    const box = sandbox(dir);
    const lines = commands(shellBlock('docs/swarms.md', '### The approval demo'));
    const line = (prefix: string) => {
      const found = lines.find((l) => l.startsWith(prefix));
      expect(found, `docs/swarms.md has a line starting with "${prefix}"`).toBeDefined();
      return found!;
    };
    const rejected = await shell(box, line('echo reject | npm start -- content-pipeline'));
    expect(rejected.code, printedBy(rejected)).toBe(1);
    expect(rejected.stdout).toContain('\n> reject\n');
    expect(rejected.stdout).toContain('✗ failed: The editor rejected the post: reject');

    const approved = await shell(box, line('echo approve | npm start -- content-pipeline'));
    expect(approved.code, printedBy(approved)).toBe(0);
    expect(approved.stdout).toContain('✓ completed');
    expect(approved.stdout).toContain('"editorFeedback": "approve"');

    const changed = await shell(box, line('echo "approve, but use a shorter title" | npm start -- content-pipeline'));
    expect(changed.code, printedBy(changed)).toBe(0);
    expect(changed.stdout).toContain('"title": "Urban beekeeping",');

    const nobody = await shell(box, line('npm start -- content-pipeline --auto-answer'));
    expect(nobody.code, printedBy(nobody)).toBe(0);
    expect(nobody.stdout).toContain('resumed: "No human is available; use your best judgement and continue."');
    expect(nobody.stdout).toContain('✓ completed');

    const help = await shell(box, line('npm start -- --help'));
    expect(help.code, printedBy(help)).toBe(0);
    expect(help.stdout).toMatch(/--auto-answer[\s\S]*echo reject \| npm start -- content-pipeline/);
  }, 180_000);

  it('examples/control.ts, a swarm that asks: `run` leaves it paused without an answer, `list` shows it, the documented `resume` books it; a pipe answers', async () => {
    const box = sandbox(dir);
    const [run, list, resume] = commands(shellBlock('docs/cli.md', '### A swarm that asks a question'));
    expect(run).toMatch(/^npm run xswarm -- run examples\/control\.ts day-trip /);
    expect(list).toMatch(/^npm run xswarm -- list\b/);
    expect(resume).toMatch(/^npm run xswarm -- resume <id> /);
    const question = 'Which day should I book the trip for: Saturday or Sunday?';

    // No terminal: stdin is empty, as if Ctrl-D were pressed at once.
    const asked = await shell(box, run!);
    expect(asked.code, printedBy(asked)).toBe(3);
    expect(asked.stdout).toContain(`paused (HITL): ${question}`);
    const [, id, suggested] = /xswarm: swarm (\S+) stays paused; continue it with:\n {2}(.*)\n/.exec(asked.stderr) ?? [];
    expect(id, printedBy(asked)).toBeDefined();
    // The page's `resume` line is the one `run` suggests, with an answer in place of '<answer>'.
    expect(withoutComment(resume!)).toBe(suggested!.replace(id!, '<id>').replace(`'<answer>'`, '"Sunday"'));

    const listed = await shell(box, list!);
    expect(listed.code, printedBy(listed)).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`\\n${id} +day-trip +paused +\\S+ +${question.replace(/[?:]/g, '\\$&')}\\n`));

    const booked = await shell(box, resume!.replace('<id>', id!));
    expect(booked.code, printedBy(booked)).toBe(0);
    expect(booked.stdout).toMatch(/resumed: Sunday\n[\s\S]*Booked a day trip to the coast on Sunday \(TRIP-\w{6}\)\n$/);

    const piped = await shell(box, shellLine('docs/cli.md', 'echo Sunday | npm run xswarm -- run examples/control.ts day-trip '));
    expect(piped.code, printedBy(piped)).toBe(0);
    expect(piped.stdout).toMatch(/Booked a day trip to the coast on Sunday \(TRIP-\w{6}\)\n$/);
  }, 180_000);

  it('examples/control.ts, a long swarm: Ctrl-C pauses it, `list` shows it, `resume` counts on, `stop` ends it', async () => {
    const box = sandbox(dir);
    const lines = commands(shellBlock('docs/cli.md', '### A long swarm: pause, resume, stop (one machine, SQLite)'));
    const kinds = lines.map((l) => /^npm run xswarm -- (\w+)/.exec(l)?.[1]);
    expect(kinds).toEqual(['run', 'list', 'resume', 'stop', 'list']);
    const [run, list, resume, stop] = lines as [string, string, string, string];
    const tick = /tool tick returned: (\d+)…/;

    // Ctrl-C once it has ticked: the swarm pauses, and `run` says how to continue it.
    const paused = await shell(box, run, RUN_TIMEOUT_MS, tick);
    expect(paused.stdout, printedBy(paused)).toContain('paused (EMERGENCY): Interrupted from the terminal (Ctrl-C)');
    const suggested = /stays paused; continue it with:\n {2}(.*)\n/.exec(paused.stderr)?.[1];
    expect(withoutComment(resume)).toBe(suggested);
    const ticked = Number(tick.exec(paused.stdout)![1]);

    const listed = await shell(box, list);
    expect(listed.code, printedBy(listed)).toBe(0);
    expect(listed.stdout).toMatch(/\ncount-1 +countdown +paused +\S+ +Interrupted from the terminal \(Ctrl-C\)\n/);

    // On from where it was (the next number, not the countdown afresh); Ctrl-C pauses it again.
    const resumed = await shell(box, resume, RUN_TIMEOUT_MS, /resumed\n(?:.*\n)*?.*tool tick returned: \d+…/);
    const next = Number(/resumed\n(?:.*\n)*?.*tool tick returned: (\d+)…/.exec(resumed.stdout)?.[1]);
    expect(next, printedBy(resumed)).toBeLessThan(ticked);
    expect(resumed.stdout).toContain('paused (EMERGENCY): Interrupted from the terminal (Ctrl-C)');

    const stopped = await shell(box, stop);
    expect(stopped.code, printedBy(stopped)).toBe(0);
    expect(stopped.stdout).toContain('swarm count-1 stopped: enough\n');

    const after = await shell(box, lines[4]!);
    expect(after.code, printedBy(after)).toBe(0);
    expect(after.stdout).toMatch(/\ncount-1 +countdown +stopped +\S+ +enough\n/);
  }, 180_000);

  it('`xswarm run` on the served example prints the plan', async () => {
    const box = sandbox(dir);
    const line = shellLine('docs/cli.md', 'npm run xswarm -- run examples/serve.ts ');
    const run = await shell(box, line);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/activity-planner → weather-agent/);
    expect(JSON.parse(run.stdout.slice(run.stdout.indexOf('\n{') + 1)).day).toBe('Saturday');
  }, 120_000);

  it('a one-row bench run prints its figures and its check as JSON lines', async () => {
    const box = sandbox(dir);
    const line = shellLine('bench/README.md', 'npm run bench -- --only "long stream" --passes 1 --json');
    const bench = await shell(box, line, 120_000);
    expect(bench.code, bench.stderr).toBe(0);
    const lines = bench.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { kind: string; ok?: boolean | null });
    expect(lines.filter((l) => l.kind === 'row')).toHaveLength(1);
    expect(lines.some((l) => l.kind === 'check' && l.ok === true)).toBe(true);
  }, 120_000);
});
