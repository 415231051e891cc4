/**
 * What A2A peers are told beyond the stored events (seed 002): the final result artifact's
 * `description` and `metadata`, and a failure's error in its final status. Added at the A2A
 * edge, to the v0.3 objects before they are translated, so nothing stored changes: a run
 * recorded before reads with the same details.
 *
 * @module
 */
import type { Artifact, Message, SwarmEvent, SwarmFailureKind } from '../../machines/events.js';
import { DATA_PART_COMPAT_FLAG } from '../../machines/events.js';
import { type FileResult, isFileResult } from './files.js';
import { RESULT_ARTIFACT_ID } from './mapping.js';

/** What the result artifact of one definition's swarms says about itself. */
export interface ResultDetails {
  definitionId: string;
  /** The definition's name, for the default description. */
  name?: string;
  /** The JSON Schema of its result: its `description`, when it has one, describes the artifact. */
  resultSchema?: Record<string, unknown>;
}

/** The details of definition `definitionId` from the runtime's cards (`runtime.definitions()`). */
export function resultDetails(cards: readonly { id: string; name: string; resultSchema: Record<string, unknown> }[], definitionId: string): ResultDetails {
  const card = cards.find((c) => c.id === definitionId);
  return { definitionId, ...(card ? { name: card.name, resultSchema: card.resultSchema } : {}) };
}

/**
 * The kind of a failure: as recorded with it (see `SwarmFailureKind`: `guardrail`, `model-call`,
 * `max-turns`, `timeout`, `gave-up`, `runtime`), read from its reason for a failure recorded
 * before failures carried it (`failed` when the reason says nothing), or `problem` (the task's
 * events cannot be read).
 */
export type FailureKind = SwarmFailureKind | 'problem' | 'failed';

/** The error a failed task's final status carries in its `metadata.error` (and its message's). */
export interface FailureError {
  kind: FailureKind;
  /** The failure's reason, as the status message says it. */
  message: string;
  /** The guardrail that rejected the swarm, when one did. */
  guardrail?: string;
}

/**
 * An artifact as A2A peers see it: the stored one with the A2A fields the runtime does not
 * store (the events' schema stays as it is; these are made again at each read).
 */
export type DetailedArtifact = Artifact & { description?: string; metadata?: Record<string, unknown> };

/** A message as A2A peers see it: with `metadata` (a failure's `error`). */
export type DetailedMessage = Message & { metadata?: Record<string, unknown> };

/**
 * The kind of a failure with `reason` (`rejected`: a guardrail rejected the swarm), read from its
 * text: the fallback for failures recorded before they carried their kind.
 */
export function failureKind(reason: string, rejected: boolean): FailureKind {
  if (rejected || / guardrail rejected /.test(reason)) return 'guardrail';
  if (reason.startsWith('Model call failed:')) return 'model-call';
  if (reason.startsWith('maxTurns (')) return 'max-turns';
  if (reason.endsWith("(onTimeout: 'fail')")) return 'timeout';
  return 'failed';
}

/** The description of a result artifact: the result schema's own, else one naming the swarm. */
export function resultDescription(details: ResultDetails): string {
  const own = details.resultSchema?.description;
  return typeof own === 'string' && own !== '' ? own : `The result of ${details.name || details.definitionId}`;
}

/**
 * A result's parts with its files as file parts: a result that is a file part is that part; one
 * that is a list of parts (text, data or file parts, at least one a file) is those parts. Any
 * other result keeps its data and text parts.
 */
function withFiles(parts: Artifact['parts']): Artifact['parts'] {
  const data = parts[0]?.kind === 'data' ? parts[0] : undefined;
  if (!data) return parts;
  const value = data.metadata?.[DATA_PART_COMPAT_FLAG] ? data.data.value : data.data;
  // The events' part type knows text and data parts only: file parts exist at this edge alone.
  const asParts = (files: unknown[]) => files as unknown as Artifact['parts'];
  if (isFileResult(value)) return asParts([value]);
  if (Array.isArray(value) && value.some(isFileResult) && value.every(isPart)) return asParts(value);
  return parts;
}

/** Whether `value` is an A2A v0.3 part. */
function isPart(value: unknown): value is FileResult | Artifact['parts'][number] {
  if (isFileResult(value)) return true;
  const v = value as { kind?: unknown; text?: unknown; data?: unknown } | null;
  return (v?.kind === 'text' && typeof v.text === 'string') || (v?.kind === 'data' && typeof v.data === 'object' && v.data !== null);
}

/**
 * `event` as an A2A peer sees it: the result artifact with its description and metadata (the
 * swarm id and definition id), a failed status with `metadata.error` on the update and its
 * message. Other events are returned as they are.
 */
export function withDetails(event: SwarmEvent, details: ResultDetails): SwarmEvent {
  if (event.kind === 'artifact-update' && event.artifact.artifactId === RESULT_ARTIFACT_ID && event.artifact.name === 'result') {
    const artifact: DetailedArtifact = {
      ...event.artifact,
      parts: withFiles(event.artifact.parts),
      description: resultDescription(details),
      metadata: { swarmId: event.swarmId, definitionId: details.definitionId },
    };
    return { ...event, artifact };
  }
  if (event.kind === 'artifact-update' && event.artifact.artifactId.startsWith('tool:') && event.artifact.metadata) {
    // A tool's files (machines/file-parts.ts): the stored metadata names the tool and the call.
    return { ...event, artifact: { ...event.artifact, metadata: { swarmId: event.swarmId, ...event.artifact.metadata } } };
  }
  if (event.kind === 'status-update' && event.metadata.type === 'failed') {
    const fact = event.metadata;
    // Recorded where the failure happened; read from the reason for a run recorded before.
    const error: FailureError = fact.error ? { ...fact.error } : { kind: failureKind(fact.reason, fact.rejected !== undefined), message: fact.reason };
    if (fact.rejected && !error.guardrail) error.guardrail = fact.rejected.guardrail;
    const message: DetailedMessage | undefined = event.status.message && { ...event.status.message, metadata: { error } };
    return { ...event, status: { ...event.status, ...(message ? { message } : {}) }, metadata: { ...fact, error } as typeof fact };
  }
  return event;
}
