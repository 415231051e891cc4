/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4), for tests of
 * `GET /metrics`: prom-client writes the format but does not read it, and no parser is
 * installed. It throws on anything the format does not allow (a bad name, label or value, an
 * unknown escape, a sample outside its declared family, a family split in two, a repeated
 * series, a histogram whose buckets are not cumulative or do not end at `+Inf` = `_count`),
 * so a test passes only on text a Prometheus server would take.
 */

/** One sample line: its name (with a histogram's `_bucket`/`_sum`/`_count` suffix), labels and value. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A metric family: its `# TYPE`, `# HELP` and samples. */
export interface PromFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: PromSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Parses exposition text into its families, by name; throws naming the line at the first fault. */
export function parsePromText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  const closed = new Set<string>();
  let current: PromFamily | undefined;
  const seen = new Set<string>();
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the text must end with a newline');
  lines.forEach((line, i) => {
    const where = `line ${i + 1} (${JSON.stringify(line)})`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // A plain comment.
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      let family = families.get(name);
      if (!family) {
        if (current && current.name !== name) closed.add(current.name);
        if (closed.has(name)) throw new Error(`${where}: family ${name} appears twice`);
        family = { name, type: 'untyped', samples: [] };
        families.set(name, family);
      }
      if (current?.name !== name && family.samples.length > 0) throw new Error(`${where}: ${kind} after the family's samples`);
      current = family;
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type`);
        if (family.samples.length > 0) throw new Error(`${where}: TYPE after samples`);
        family.type = rest as PromFamily['type'];
      } else {
        if (family.help !== undefined) throw new Error(`${where}: second HELP`);
        family.help = unescapeText(rest, false, where);
      }
      return;
    }
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, current);
    if (!family) throw new Error(`${where}: sample outside its family (declare it with # TYPE first)`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) throw new Error(`${where}: repeated series`);
    seen.add(key);
    if (family.type === 'counter' && !(sample.value >= 0)) throw new Error(`${where}: a counter is never negative`);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The family a sample belongs to: the current one, under its name or a histogram's or summary's suffix. */
function familyOf(name: string, current: PromFamily | undefined): PromFamily | undefined {
  if (!current) return undefined;
  if (name === current.name) return current.type === 'histogram' ? undefined : current;
  const suffixes = current.type === 'histogram' ? ['_bucket', '_sum', '_count'] : current.type === 'summary' ? ['_sum', '_count'] : [];
  return suffixes.some((s) => name === current.name + s) ? current : undefined;
}

function parseSample(line: string, where: string): PromSample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (!m) throw new Error(`${where}: not a sample line`);
  const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
  return { name, labels: labelText ? parseLabels(labelText, where) : {}, value: parseValue(valueText, where) };
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text.slice(1, -1);
  while (rest.length > 0) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,?)/.exec(rest);
    if (!m) throw new Error(`${where}: bad label at ${JSON.stringify(rest)}`);
    const [all, name, raw, comma] = m as unknown as [string, string, string, string];
    if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new Error(`${where}: bad label name ${name}`);
    if (name in labels) throw new Error(`${where}: label ${name} twice`);
    labels[name] = unescapeText(raw, true, where);
    rest = rest.slice(all.length);
    if (!comma && rest.length > 0) throw new Error(`${where}: labels must be separated by commas`);
  }
  return labels;
}

/** The escapes of a label value (`\\`, `\"`, `\n`) or of a HELP text (`\\`, `\n`). */
function unescapeText(text: string, quoted: boolean, where: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    if (c === '"' && quoted) return '"';
    throw new Error(`${where}: unknown escape \\${c}`);
  });
}

function parseValue(text: string, where: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: bad value ${text}`);
  return Number(text);
}

/** Each series of a histogram: buckets in ascending `le`, cumulative, ending at `+Inf` = `_count`, with a `_sum`. */
function checkHistogram(family: PromFamily): void {
  const series = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let entry = series.get(key);
    if (!entry) series.set(key, (entry = { buckets: [] }));
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      entry.buckets.push([parseValue(le, family.name), s.value]);
    } else if (le !== undefined) throw new Error(`${family.name}: le on ${s.name}`);
    else if (s.name.endsWith('_sum')) entry.sum = s.value;
    else entry.count = s.value;
  }
  for (const [key, { buckets, sum, count }] of series) {
    const last = buckets.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY) throw new Error(`${family.name}${key}: no +Inf bucket`);
    if (sum === undefined || count === undefined) throw new Error(`${family.name}${key}: _sum or _count missing`);
    if (last[1] !== count) throw new Error(`${family.name}${key}: +Inf bucket ${last[1]} is not _count ${count}`);
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]![0] > buckets[i - 1]![0]) || buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${family.name}${key}: buckets not ascending and cumulative`);
    }
  }
}

/**
 * The value of the one sample named `name` with exactly `labels` (a histogram's `_count` or
 * `_sum` too); throws when there is none, listing the family's samples.
 */
export function sampleValue(families: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number {
  const familyName = [...families.keys()].find((f) => name === f || name === `${f}_count` || name === `${f}_sum` || name === `${f}_bucket`);
  const family = familyName === undefined ? undefined : families.get(familyName);
  const want = JSON.stringify(Object.entries(labels).sort());
  const found = family?.samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want);
  if (!found) throw new Error(`no sample ${name}${want}; the family has ${JSON.stringify(family?.samples ?? [])}`);
  return found.value;
}
