/**
 * `createRuntime`: registers definitions, runs swarms as actors, answers their clients.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { PauseReason, SwarmEvent } from '../machines/events.js';
import { SWARM_MACHINE_VERSION, type SwarmCommand } from '../machines/swarm.js';
import { createSwarmLogic, type Model } from '../actors/index.js';
import { SwarmClient, type SwarmControl } from './client.js';
import type { AgentDefinition, SwarmDefinition } from './define.js';
import { SwarmError } from './errors.js';
import { SwarmHost } from './host.js';
import { createPorts } from './ports.js';
import { Registry } from './registry.js';
import { isFinal, type SwarmResult } from './result.js';
import { memoryStore } from './store/memory.js';
import type { SwarmRecord, SwarmStore } from './store/types.js';
import { validate } from './tool.js';

/**
 * Options of {@link createRuntime}.
 *
 * @example
 * const options: RuntimeOptions = { swarms: [planner], agents: [weather], model: scriptedModel(() => ({ text: 'ok' })) };
 */
export interface RuntimeOptions {
  swarms?: readonly SwarmDefinition<any, any>[];
  agents?: readonly AgentDefinition[];
  /** The model for orchestrators and for agents without a model of their own. */
  model: Model;
  /** Where swarms are persisted; default: a new in-memory store. */
  store?: SwarmStore;
}

/**
 * A runtime: the registry of definitions plus the live swarms.
 *
 * @example
 * const runtime = createRuntime({ swarms: [planner], agents: [weather], model });
 * await runtime.start();
 * const client = runtime.forSwarm(planner);
 * await client.run('Plan my Saturday');
 */
export interface Runtime {
  /** A client for a swarm instance of a definition; a new id is generated when none is given. */
  forSwarm<I extends z.ZodType, R extends z.ZodType>(
    definition: SwarmDefinition<I, R>,
    swarmId?: string,
  ): SwarmClient<z.input<I>, z.output<R>>;
  forSwarm(definitionId: string, swarmId?: string): SwarmClient;
  /** Restores every unfinished swarm of the store and continues the running ones. */
  start(): Promise<void>;
  /** Stops driving all swarms (their stored state stays) and closes a store it created. */
  close(): Promise<void>;
  /** The store this runtime writes to. */
  readonly store: SwarmStore;
}

/**
 * Creates a runtime. Definitions are checked together here: duplicate ids, a handoff to an
 * unknown agent, an invalid or reserved tool name throw a `DefinitionError` at once.
 *
 * @example
 * const runtime = createRuntime({
 *   swarms: [planner], agents: [weather, calendar],
 *   model: process.env.OPENAI_API_KEY ? openaiModel({ model: 'gpt-4o-mini' }) : demoModel,
 * });
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  return new RuntimeCore(options);
}

class RuntimeCore implements Runtime, SwarmControl {
  readonly store: SwarmStore;
  private readonly ownsStore: boolean;
  private readonly registry: Registry;
  private readonly hosts = new Map<string, SwarmHost>();
  /** Ids reserved by a `run` that has not created its host yet. */
  private readonly starting = new Set<string>();
  /** Swarms of the store that this runtime could not restore, with the reason. */
  private readonly unrestorable = new Map<string, string>();
  private readonly logic;
  private closed = false;

  constructor(options: RuntimeOptions) {
    if (!options.model || typeof options.model.call !== 'function') {
      throw new TypeError('createRuntime: `model` is required (scriptedModel(...) or openaiModel(...))');
    }
    this.registry = new Registry(options.swarms ?? [], options.agents ?? []);
    this.ownsStore = !options.store;
    this.store = options.store ?? memoryStore();
    this.logic = createSwarmLogic(
      createPorts({ registry: this.registry, model: options.model, host: (id) => this.hosts.get(id) }),
    );
  }

  forSwarm(definition: SwarmDefinition | string, swarmId: string = randomUUID()): SwarmClient<any, any> {
    const id = typeof definition === 'string' ? definition : definition.id;
    return new SwarmClient(this, id, swarmId);
  }

  async start(): Promise<void> {
    this.assertOpen();
    for (const record of await this.store.listUnfinished()) {
      if (this.hosts.has(record.swarmId)) continue;
      const problem = this.restoreProblem(record);
      if (problem) {
        this.unrestorable.set(record.swarmId, problem);
        continue;
      }
      this.launch(record.swarmId, record.definitionId, { record });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const host of [...this.hosts.values()]) host.detach();
    this.hosts.clear();
    if (this.ownsStore) await this.store.close();
  }

  // ---- SwarmControl -------------------------------------------------------------------

  async startSwarm(definitionId: string, swarmId: string, input: unknown): Promise<void> {
    this.assertOpen();
    const def = this.registry.swarm(definitionId);
    if (!def) throw new SwarmError(`Unknown swarm definition "${definitionId}"`);
    const parsed = validate(def.input, input);
    if (!parsed.ok) throw new SwarmError(`Invalid input for swarm "${definitionId}": ${parsed.error}`);
    if (!swarmId || typeof swarmId !== 'string') throw new SwarmError('A swarm id must be a non-empty string');
    if (this.hosts.has(swarmId) || this.starting.has(swarmId)) throw inUse(swarmId);
    this.starting.add(swarmId);
    try {
      if (await this.store.load(swarmId)) throw inUse(swarmId);
      const config = this.registry.resolve(def, parsed.value);
      const value = parsed.value;
      const host = this.launch(swarmId, def.id, {
        input: {
          swarmId,
          definitionId: def.id,
          input: value,
          userMessage: typeof value === 'string' ? value : JSON.stringify(value),
          config,
        },
      });
      await host.gate().catch(() => undefined);
      if (host.error) throw new SwarmError(`Swarm "${swarmId}" could not be recorded: ${host.error.message}`);
    } finally {
      this.starting.delete(swarmId);
    }
  }

  async result(swarmId: string): Promise<SwarmResult> {
    const host = this.hosts.get(swarmId);
    if (host) return host.result();
    const problem = this.unrestorable.get(swarmId);
    if (problem) return { status: 'failed', reason: problem };
    const record = await this.store.load(swarmId);
    if (!record) throw new SwarmError(`Unknown swarm "${swarmId}"`);
    return record.result;
  }

  async wait(swarmId: string): Promise<SwarmResult> {
    for (;;) {
      const host = this.hosts.get(swarmId);
      const next = host?.nextCommit();
      const result = await this.result(swarmId);
      if (result.status !== 'running' || !next) return result;
      await next;
    }
  }

  async *events(swarmId: string, since: number): AsyncGenerator<SwarmEvent> {
    let cursor = since;
    for (;;) {
      const host = this.hosts.get(swarmId);
      // Taken before reading, so a commit landing during the read still wakes us.
      const next = host?.nextCommit();
      const batch = await this.store.readEvents(swarmId, cursor);
      for (const event of batch) {
        yield event;
        cursor = event.seq;
        if (event.kind === 'status-update' && event.final) return;
      }
      if (batch.length > 0) continue;
      if (!next) {
        if (cursor === 0 && !(await this.store.load(swarmId))) throw new SwarmError(`Unknown swarm "${swarmId}"`);
        return;
      }
      await next;
    }
  }

  async pause(swarmId: string, reason: PauseReason): Promise<void> {
    const host = this.liveHost(swarmId, 'pause');
    const status = host.status();
    if (status === 'paused') throw new SwarmError(`Swarm "${swarmId}" is already paused`);
    await this.command(host, { type: 'PAUSE', reason });
  }

  async resume(swarmId: string, message: string | undefined): Promise<void> {
    const host = this.liveHost(swarmId, 'resume');
    if (host.status() !== 'paused') throw new SwarmError(`Swarm "${swarmId}" is ${host.status()}, not paused`);
    await this.command(host, message === undefined ? { type: 'RESUME' } : { type: 'RESUME', message });
  }

  async stop(swarmId: string, reason: string): Promise<void> {
    await this.command(this.liveHost(swarmId, 'stop'), { type: 'STOP', reason });
  }

  // ---- internals ----------------------------------------------------------------------

  private async command(host: SwarmHost, command: SwarmCommand): Promise<void> {
    host.send(command);
    await host.gate().catch(() => undefined);
  }

  private liveHost(swarmId: string, verb: string): SwarmHost {
    const host = this.hosts.get(swarmId);
    if (host) return host;
    const problem = this.unrestorable.get(swarmId);
    if (problem) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": ${problem}`);
    throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it is not running in this runtime (unknown, or already ended)`);
  }

  private launch(swarmId: string, definitionId: string, from: ConstructorParameters<typeof SwarmHost>[3]): SwarmHost {
    const def = this.registry.swarm(definitionId)!;
    const host = new SwarmHost(
      this.logic,
      this.store,
      { swarmId, definitionId, definitionVersion: def.version },
      from,
      (h) => {
        if (this.hosts.get(h.swarmId) === h) this.hosts.delete(h.swarmId);
      },
    );
    this.hosts.set(swarmId, host);
    host.start();
    return host;
  }

  private restoreProblem(record: SwarmRecord): string | undefined {
    const def = this.registry.swarm(record.definitionId);
    if (!def) return `Cannot restore: swarm definition "${record.definitionId}" is not registered with this runtime`;
    if (record.machineVersion !== SWARM_MACHINE_VERSION) {
      return `Cannot restore: snapshot written by swarm machine version ${record.machineVersion}, this runtime runs version ${SWARM_MACHINE_VERSION}`;
    }
    if (record.definitionVersion !== def.version) {
      return `Cannot restore: snapshot written by "${def.id}" version ${record.definitionVersion}, this runtime has version ${def.version}`;
    }
    if (isFinal(record.status)) return 'Swarm already ended';
    return undefined;
  }

  private assertOpen(): void {
    if (this.closed) throw new SwarmError('This runtime is closed');
  }
}

function inUse(swarmId: string): SwarmError {
  return new SwarmError(`Swarm id "${swarmId}" is already in use`);
}
