/**
 * Streamed model text: which event bodies are chunks of it, and how chunks become events. A
 * streaming model says a few characters at a time; chunks of one stream that arrive within
 * {@link CHUNK_WINDOW_MS} of each other are merged into one `artifact-update` (the host buffers
 * them and commits once per window), so a stream costs a write per window, not per token, and
 * the stored stream holds as many events as it was committed in. Replay tells chunks apart with
 * the same test: they come from outside the machine, so it takes them as recorded.
 *
 * @module
 */
import type { SwarmEventBody } from '../../machines/events.js';

/** How long streamed chunks gather before they are committed as one event. */
export const CHUNK_WINDOW_MS = 25;

/** The body of a chunk of streamed text: an `artifact-update` of an artifact named `stream`. */
export type ChunkBody = Extract<SwarmEventBody, { kind: 'artifact-update' }>;

/** A streamed text chunk (the final result artifact is not one). */
export function isChunk(body: SwarmEventBody): body is ChunkBody {
  return body.kind === 'artifact-update' && body.artifact.name === 'stream';
}

/**
 * `b` appended to `a`: one event with `a`'s append flag and both texts, the last chunk of its
 * stream when `b` is (the stream's end merged into its last text).
 */
export function mergeChunks(a: ChunkBody, b: ChunkBody): ChunkBody {
  const text = (x: ChunkBody) => x.artifact.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
  return { ...a, artifact: { ...a.artifact, parts: [{ kind: 'text', text: text(a) + text(b) }] }, lastChunk: a.lastChunk === true || b.lastChunk === true };
}

/**
 * The end of `speaker`'s stream of `turn`: an empty appended chunk with `lastChunk: true`. Within
 * the chunk window it merges into the stream's last text (no event of its own); after it, it is
 * an event with no text that says the stream is over. Streams recorded before it never end so.
 */
export function lastChunk(speaker: string, turn: number): ChunkBody {
  return {
    kind: 'artifact-update',
    artifact: { artifactId: `stream:${speaker}:${turn}`, name: 'stream', parts: [{ kind: 'text', text: '' }] },
    append: true,
    lastChunk: true,
    metadata: { agent: speaker, turn },
  };
}
