/**
 * `npx tsx bench/profile.ts <file.cpuprofile> [top]`: summarizes a V8 CPU profile (from
 * `node --cpu-prof`) by self time per function and per source file, so hot spots can be
 * reported with percentages without opening DevTools.
 *
 * Under tsx every function of a transpiled file reports line 1, so for function-level detail
 * profile an esbuild bundle instead: its `// path/to/file.ts` markers are used here to
 * attribute each bundle line to its source file.
 *
 * @example
 * npx esbuild bench/run.ts --bundle --platform=node --format=esm --external:better-sqlite3 --outfile=/tmp/xbench/bench.mjs
 * ln -sfn "$PWD/node_modules" /tmp/xbench/node_modules   # for the external packages
 * node --cpu-prof --cpu-prof-dir=/tmp/prof /tmp/xbench/bench.mjs --row 'W1 / memory / sequential'
 * npx tsx bench/profile.ts /tmp/prof/CPU.*.cpuprofile 25
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A short, stable label for a source URL: the path from the repo or the package name. */
function shortUrl(url: string): string {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length).replace(/\?.*$/, '');
  const repo = url.indexOf('/work/main/');
  return (repo >= 0 ? url.slice(repo + '/work/main/'.length) : url).replace(/\?.*$/, '');
}

/** For an esbuild bundle: the source file each line belongs to (from esbuild's path markers). */
function bundleModules(url: string): ((line: number) => string) | undefined {
  if (!url.startsWith('file://') || url.includes('/node_modules/')) return undefined;
  const path = fileURLToPath(url);
  if (!existsSync(path)) return undefined;
  const starts: [number, string][] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const m = /^\/\/ ((?:node_modules|src|machines|actors|bench)\/\S+)$/.exec(text);
      if (m) starts.push([i, m[1]!]);
    });
  if (starts.length === 0) return undefined;
  return (line) => {
    let module = '(bundle)';
    for (const [start, name] of starts) if (start <= line) module = name;
    return module;
  };
}
const bundles = new Map<string, ((line: number) => string) | undefined>();
function locate(url: string, line: number): string {
  if (!bundles.has(url)) bundles.set(url, bundleModules(url));
  const lookup = bundles.get(url);
  return lookup ? shortUrl(lookup(line)) : shortUrl(url);
}

const [file, topArg, matchArg] = process.argv.slice(2);
if (!file) throw new Error('usage: tsx bench/profile.ts <file.cpuprofile> [top] [regex of functions for inclusive time]');
// Inclusive time is shown for repo code unless a regex picks other functions (e.g. xstate's).
const match = matchArg ? new RegExp(matchArg) : undefined;
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));

// Self time per node, from the sample stream.
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
let total = 0;
for (const t of self.values()) total += t;

const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
for (const [id, t] of self) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const where = locate(url, lineNumber);
  const key = `${functionName || '(anonymous)'}  ${where}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + t);
  byFile.set(where, (byFile.get(where) ?? 0) + t);
}

const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (total ${(total / 1000).toFixed(0)} ms)`);
  for (const [k, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${(t / 1000).toFixed(1).padStart(8)} ms  ${k}`);
  }
};
// Inclusive time (of repo code by default): each sample counts once for every distinct matching
// function on its stack, so callers are charged for their callees.
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const keyOf = new Map<number, string | null>();
for (const n of profile.nodes) {
  const { functionName, url, lineNumber } = n.callFrame;
  const where = locate(url, lineNumber);
  const key = `${functionName || '(anonymous)'}  ${where}:${lineNumber + 1}`;
  const wanted = match ? match.test(key) : /^(src|machines|actors|bench)\//.test(where);
  keyOf.set(n.id, wanted ? key : null);
}
const inclusive = new Map<string, number>();
profile.samples.forEach((leaf, i) => {
  const seen = new Set<string>();
  for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
    const key = keyOf.get(id);
    if (key && !seen.has(key)) seen.add(key);
  }
  for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
});

print('self time by file', byFile);
print('self time by function', byFunction);
print(`inclusive time of ${match ? `functions matching ${match.source}` : 'repo functions'}`, inclusive);
