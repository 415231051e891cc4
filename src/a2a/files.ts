/**
 * File parts (seed 002) in and out of a swarm. In: a message's file part reaches the model as
 * text it can read, a `<file>` element naming the file and its type, holding the decoded content
 * of a textual file (text/*, JSON, XML, YAML, CSV), a `data:` URL of a binary one, or pointing at
 * its URL. Out: a swarm whose result is an A2A file part (see {@link fileResult}), or a list of
 * parts with file parts among them, answers A2A peers with an artifact of those parts.
 *
 * @module
 */
import { z } from 'zod';
import { isFilePart } from '../../machines/file-parts.js';

/** An A2A v0.3 file part, as a swarm's result: the bytes (base64) or a URI, with a name and a type. */
export interface FileResult {
  kind: 'file';
  file: { name?: string; mimeType?: string } & ({ bytes: string; uri?: never } | { uri: string; bytes?: never });
}

/**
 * The schema of a file result, for a swarm that answers with a file:
 * `defineSwarm({ ..., result: fileResultSchema })`.
 */
export const fileResultSchema = z.object({
  kind: z.literal('file'),
  file: z.union([
    z.object({ name: z.string().optional(), mimeType: z.string().optional(), bytes: z.string().describe('The content, base64') }),
    z.object({ name: z.string().optional(), mimeType: z.string().optional(), uri: z.string().describe('Where the content is') }),
  ]),
});

/**
 * A file result (or a file part of a list of parts): `content` as bytes (a string is taken as
 * UTF-8 text), or `uri` for a file that lives elsewhere.
 */
export function fileResult(file: { name?: string; mimeType?: string } & ({ content: string | Uint8Array } | { uri: string })): FileResult {
  const meta = { ...(file.name ? { name: file.name } : {}), ...(file.mimeType ? { mimeType: file.mimeType } : {}) };
  if ('uri' in file) return { kind: 'file', file: { ...meta, uri: file.uri } };
  const bytes = typeof file.content === 'string' ? Buffer.from(file.content, 'utf8') : Buffer.from(file.content);
  return { kind: 'file', file: { ...meta, bytes: bytes.toString('base64') } };
}

/** Whether `value` is an A2A v0.3 file part (bytes or a URI): the machines' own check, typed as a result. */
export function isFileResult(value: unknown): value is FileResult {
  return isFilePart(value);
}

/** Whether a file of this media type is text a model reads as it is. */
export function isTextual(mediaType: string): boolean {
  const type = mediaType.split(';')[0]!.trim().toLowerCase();
  return type.startsWith('text/') || /^application\/(json|xml|yaml|x-yaml|csv|javascript|x-ndjson)$/.test(type) || /\+(json|xml)$/.test(type);
}

/** `value` with its XML special characters escaped, for an attribute. */
function attr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/**
 * A v1.0 part as {@link fileText} reads it: the `@a2a-js/sdk` `Part`'s fields, named
 * structurally so that the core's declarations (which export `fileResult`) do not name the SDK,
 * an optional peer.
 */
export interface FilePartLike {
  content?: { $case: string; value?: unknown } | undefined;
  filename?: string;
  mediaType?: string;
}

/**
 * How a file part (v1.0: `raw` bytes or a `url`) reads for a model: a `<file>` element with its
 * name and type, holding a textual file's content (UTF-8), a binary file's `data:` URL, or
 * naming the URL of a file that lives elsewhere. Undefined for a part that is not a file.
 */
export function fileText(part: FilePartLike): string | undefined {
  const c = part.content;
  if (c?.$case !== 'raw' && c?.$case !== 'url') return undefined;
  const type = part.mediaType || (c.$case === 'raw' ? 'application/octet-stream' : '');
  const head = `<file${part.filename ? ` name="${attr(part.filename)}"` : ''}${type ? ` type="${attr(type)}"` : ''}`;
  if (c.$case === 'url') return `${head} url="${attr(String(c.value))}"/>`;
  const bytes = Buffer.from(c.value as Uint8Array);
  const body = isTextual(type) ? bytes.toString('utf8') : `data:${type};base64,${bytes.toString('base64')}`;
  return `${head}>\n${body}\n</file>`;
}
