/**
 * Redaction of known secrets (API keys, tokens) from what a swarm persists: a provider error
 * that echoes the key must not be written into snapshots and events.
 *
 * @module
 */

/**
 * Replaces known secrets in every string of a JSON-like value. Returns the value itself when
 * it holds no secret, else a copy in which only the containers on the way to a changed string
 * are new (the input is never mutated).
 */
export type Redactor = <T>(value: T) => T;

/** What a secret is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * The length of the shortest secret that is redacted. Shorter ones are ignored: redacting them
 * would mangle ordinary text (a placeholder key such as `unset`), and a key that short protects
 * nothing.
 */
export const MIN_SECRET_LENGTH = 8;

/**
 * A {@link Redactor} for these secrets, or undefined when none is long enough to count (then
 * there is nothing to do, and callers skip the walk).
 */
export function redactor(secrets: Iterable<string | undefined>): Redactor | undefined {
  const known = new Set<string>();
  for (const s of secrets) if (typeof s === 'string' && s.length >= MIN_SECRET_LENGTH) known.add(s);
  if (known.size === 0) return undefined;
  // Longest first: a secret that contains another is replaced whole.
  const list = [...known].sort((a, b) => b.length - a.length);
  const text = (s: string): string => {
    let out = s;
    for (const secret of list) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item = walk(value[i]);
        if (item !== value[i]) (copy ??= value.slice())[i] = item;
      }
      return copy ?? value;
    }
    if (value !== null && typeof value === 'object' && isPlain(value)) {
      let copy: Record<string, unknown> | undefined;
      for (const key of Object.keys(value)) {
        const before = (value as Record<string, unknown>)[key];
        const after = walk(before);
        if (after !== before) (copy ??= { ...value })[key] = after;
      }
      return copy ?? value;
    }
    return value;
  };
  return walk as Redactor;
}

/** Only plain data is copied: anything else (a Date, a class instance) is left as it is. */
function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
