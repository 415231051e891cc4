/**
 * Migrations of stored runs across definition versions: the stable shape a user's
 * `defineSwarm({ migrate })` function reads and returns ({@link MigrationSnapshot}), and the check
 * of what it returned. How and when the runtime calls it is `runtime/migration.ts`.
 *
 * @module
 */
import { z } from 'zod';
import type { SwarmConfig } from '../../machines/swarm.js';
import type { ChatMessage } from '../../machines/messages.js';
import { DefinitionError } from '../errors.js';

/**
 * What a migration reads and returns of a stored run: the persisted snapshot's context, the part a
 * definition change can make stale. A stable type: it only grows optional fields.
 *
 * - `config`: the run's configuration, resolved from its definition when it started (instructions,
 *   `maxTurns`, tool names, handoffs with their agents' specs, limits, history policy).
 * - `messages`: the orchestrator's conversation; `messages[0]` is the system message with the
 *   instructions (it follows `config.instructions` when a migration changes them and leaves it).
 * - `turn`: orchestrator model responses so far.
 * - `input` and `status` are read-only: the run's validated input and its stored state.
 */
export interface MigrationSnapshot {
  readonly status: 'running' | 'awaitingHandoff' | 'paused';
  readonly input: unknown;
  config: SwarmConfig;
  messages: ChatMessage[];
  turn: number;
}

/** What `migrate` is called with: the stored run's definition version, the current one, and the run. */
export interface MigrationArgs {
  /** The version the run was stored by (`record.definitionVersion`). */
  from: number;
  /** The version it continues on: the highest registered one (the definition carrying `migrate`). */
  to: number;
  /** A copy of the stored run's state: change it and return it, or return a new one. */
  snapshot: MigrationSnapshot;
}

/**
 * A definition's migration of runs stored by an older version that is no longer registered: it
 * returns the snapshot the run continues with on the current version (it may be async). A throw
 * or an invalid return leaves the stored run untouched; the run then waits, with the error.
 */
export type Migrate = (args: MigrationArgs) => MigrationSnapshot | Promise<MigrationSnapshot>;

/** `value` when it is a function or absent; else a {@link DefinitionError} naming `owner`. */
export function checkMigrate(value: unknown, owner: string): Migrate | undefined {
  if (value === undefined || typeof value === 'function') return value as Migrate | undefined;
  throw new DefinitionError(`${owner}: migrate must be a function ({ from, to, snapshot }) => snapshot`);
}

const message = z.looseObject({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  toolCalls: z.array(z.looseObject({ id: z.string(), name: z.string(), arguments: z.string() })).optional(),
  toolCallId: z.string().optional(),
});

const config = z.looseObject({
  instructions: z.string().trim().min(1),
  maxTurns: z.number().int().positive(),
  tools: z.array(z.string()),
  handoffs: z.array(z.looseObject({ kind: z.enum(['agent', 'swarm', 'remote']), toolName: z.string() })),
});

/** The schema a migration's return must match (its JSON-safety is checked apart). */
const migrated = z.looseObject({ config, messages: z.array(message).min(1), turn: z.number().int().nonnegative() });

/**
 * Why what a migration returned cannot be stored, or undefined when it can: the shape of
 * {@link MigrationSnapshot}, JSON-safe (it is stored as JSON), every tool it names registered
 * (`hasTool`), and no more turns than its `maxTurns` allows.
 */
export function migrationProblem(value: unknown, hasTool: (name: string) => boolean): string | undefined {
  const parsed = migrated.safeParse(value);
  if (!parsed.success) return `it returned an invalid snapshot: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`;
  try {
    if (JSON.stringify(parsed.data) === undefined) return 'it returned a snapshot that is not JSON';
  } catch (e) {
    return `it returned a snapshot that is not JSON (${e instanceof Error ? e.message : String(e)})`;
  }
  const unknownTool = parsed.data.config.tools.find((name) => !hasTool(name));
  if (unknownTool !== undefined) return `it names tool "${unknownTool}", which is not registered with this runtime`;
  return undefined;
}
