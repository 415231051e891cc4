/**
 * The one way anything thrown becomes readable text, for machines, actors and the runtime
 * alike (here, since machines import nothing from src/).
 *
 * @module
 */

/**
 * Readable text for anything thrown: an error's message, a string as it is, anything else as
 * JSON (or `String()` when it cannot be serialized).
 */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
