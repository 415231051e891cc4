/**
 * The one way anything thrown becomes readable text, for machines, actors and the runtime
 * alike (here, since machines import nothing from src/).
 *
 * @module
 */

/**
 * Readable text for anything thrown: an error's message (of this realm or another), a string
 * as it is, anything else as JSON (or `String()` when it cannot be serialized).
 */
export function errorText(error: unknown): string {
  // An Error of another realm (a `vm` context) is no `instanceof Error` here, but is one.
  if (error instanceof Error || Object.prototype.toString.call(error) === '[object Error]') return (error as Error).message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
