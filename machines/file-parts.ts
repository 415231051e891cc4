/**
 * Files a tool returns: a file part (`fileResult(...)`), or a list of parts with file parts
 * among them, becomes an artifact of the swarm (the model reads the value as JSON text, as for
 * any other value). Pure, so the machines and the tool actor share it.
 *
 * @module
 */
import type { FilePart, SwarmEventBody } from './events.js';

/** Whether `value` is an A2A v0.3 file part (its content as base64 `bytes`, or a `uri`). */
export function isFilePart(value: unknown): value is FilePart {
  if (typeof value !== 'object' || value === null || (value as { kind?: unknown }).kind !== 'file') return false;
  const file = (value as { file?: unknown }).file;
  if (typeof file !== 'object' || file === null) return false;
  const { bytes, uri } = file as { bytes?: unknown; uri?: unknown };
  return typeof bytes === 'string' || typeof uri === 'string';
}

/**
 * The file parts of a tool's return value (a file part, or a list of values with file parts
 * among them), copied to their A2A fields only; undefined when it returned no file.
 */
export function filesOf(value: unknown): FilePart[] | undefined {
  const files = (Array.isArray(value) ? value : [value]).filter(isFilePart);
  if (files.length === 0) return undefined;
  return files.map(({ file }) => {
    const meta = { ...(typeof file.name === 'string' ? { name: file.name } : {}), ...(typeof file.mimeType === 'string' ? { mimeType: file.mimeType } : {}) };
    return {
      kind: 'file' as const,
      file: 'bytes' in file && typeof file.bytes === 'string' ? { ...meta, bytes: file.bytes } : { ...meta, uri: (file as { uri: string }).uri },
    };
  });
}

/** The artifact id of the files of tool call `callId`. */
export function toolFilesArtifactId(callId: string): string {
  return `tool:${callId}`;
}

/**
 * The artifact update of a tool call's files: named after the call, described, with the tool,
 * the call and who made it in its metadata (the A2A edge adds the swarm id).
 */
export function toolFilesEvent(agent: string, call: { id: string; name: string }, files: FilePart[]): SwarmEventBody {
  return {
    kind: 'artifact-update',
    artifact: {
      artifactId: toolFilesArtifactId(call.id),
      name: `${call.name}:${call.id}`,
      description: `The ${files.length === 1 ? 'file' : 'files'} tool "${call.name}" returned (call ${call.id})`,
      metadata: { toolName: call.name, callId: call.id, agent },
      parts: files,
    },
    append: false,
    lastChunk: true,
  };
}
