/**
 * Running a definition's `migrate` on a stored swarm (see `deploys.ts` for when): the stored
 * snapshot's context is handed to it as a {@link MigrationSnapshot} copy, what it returns is
 * checked, and the record the swarm continues from is built. Nothing is written here: the
 * migrated record is committed by the swarm's host with the `migrated` fact (`leases.ts`), so a
 * throw or an invalid return leaves the stored run exactly as it was.
 *
 * @module
 */
import { REGISTRY_HANDOFF } from '../../actors/index.js';
import { errorText } from '../../machines/error-text.js';
import type { SwarmEventBody } from '../../machines/events.js';
import { statusUpdate } from '../../machines/event-builders.js';
import type { SwarmContext } from '../../machines/swarm.js';
import type { Catalog } from '../catalog/catalog.js';
import { type MigrationSnapshot, migrationProblem } from '../define/migrate.js';
import type { SwarmDefinition } from '../define/swarm.js';
import type { SwarmRecord } from '../store/types.js';

/** A migrated record and the fact to commit with it, or why the migration cannot be used. */
export type MigrationOutcome = { record: SwarmRecord; fact: SwarmEventBody } | { problem: string };

/**
 * Migrates `record` (stored by version `from`) to `definition` (version `to`) with its `migrate`
 * function, called once. The record is not changed.
 */
export async function migrateRecord(record: SwarmRecord, definition: SwarmDefinition, catalog: Pick<Catalog, 'tool'>, from: number): Promise<MigrationOutcome> {
  const to = definition.version;
  const label = `Migration of swarm "${record.swarmId}" from "${definition.id}" version ${from} to ${to} failed`;
  const migrate = definition.migrate;
  const snap = record.snapshot as { value?: unknown; context?: SwarmContext } | undefined;
  const context = snap?.context;
  if (!migrate || !context || !Array.isArray(context.messages) || !context.config) return { problem: `${label}: its stored snapshot has no context to migrate` };
  if (record.status !== 'running' && record.status !== 'awaitingHandoff' && record.status !== 'paused') return { problem: `${label}: it is ${record.status}` };
  // A copy: whatever the function does to it, the loaded record stays as stored.
  const given: MigrationSnapshot = structuredClone({
    status: record.status,
    input: context.input,
    config: context.config,
    messages: context.messages,
    turn: context.turn,
  });
  let out: MigrationSnapshot;
  try {
    out = await migrate({ from, to, snapshot: given });
  } catch (e) {
    return { problem: `${label}: migrate threw: ${errorText(e)}` };
  }
  const problem = migrationProblem(out, (name) => name === REGISTRY_HANDOFF || catalog.tool(name) !== undefined);
  if (problem) return { problem: `${label}: ${problem}` };
  // Copied again: the function may keep a reference to what it returned.
  const { config, turn } = structuredClone({ config: out.config, turn: out.turn });
  let messages = structuredClone(out.messages);
  // The system message says the instructions: it follows a change of them the function left it out of.
  const first = messages[0];
  if (config.instructions !== context.config.instructions && first?.role === 'system' && first.content === context.config.instructions) {
    messages = [{ ...first, content: config.instructions }, ...messages.slice(1)];
  }
  const snapshot = { ...snap, context: { ...context, config, messages, turn } };
  return {
    record: { ...record, definitionVersion: to, snapshot },
    fact: statusUpdate(record.status === 'paused' ? 'input-required' : 'working', { type: 'migrated', definitionId: definition.id, from, to }),
  };
}
