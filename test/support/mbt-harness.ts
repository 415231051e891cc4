/**
 * Shared helpers for the model-based tests (`*.model.test.ts`): controllable promise actors,
 * settling, coverage of a real machine's graph, and compact signatures of swarm events.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type AnyStateMachine, type AnyTransitionDefinition, fromPromise, type InspectionEvent, type StateValue } from 'xstate';
import { getStateNodes } from 'xstate/graph';
import type { SwarmEventBody } from '../../machines/events.js';

/** One invocation of a controllable promise actor, waiting for the test to settle it. */
export interface PendingCall<I, O> {
  input: I;
  signal: AbortSignal;
  settled: boolean;
  resolve(output: O): void;
  reject(error: unknown): void;
}

/**
 * A `fromPromise` logic whose every invocation waits until the test resolves or rejects it.
 * Invocations stopped by XState (state exit, `stopChild`, parent stop) show up as aborted.
 */
export class Controllable<I, O> {
  readonly calls: PendingCall<I, O>[] = [];

  /** Forgets every invocation (between two paths; the logic itself can be reused). */
  reset(): void {
    this.calls.length = 0;
  }

  readonly logic = fromPromise<O, I>(
    ({ input, signal }) =>
      new Promise<O>((resolve, reject) => {
        const call: PendingCall<I, O> = {
          input,
          signal,
          settled: false,
          resolve: (output) => {
            call.settled = true;
            resolve(output);
          },
          reject: (error) => {
            call.settled = true;
            reject(error);
          },
        };
        this.calls.push(call);
      }),
  );

  /** Invocations neither settled nor aborted, in start order. */
  open(filter: (input: I) => boolean = () => true): PendingCall<I, O>[] {
    return this.calls.filter((c) => !c.settled && !c.signal.aborted && filter(c.input));
  }

  /** The single open invocation matching `filter`; throws when there are none or several. */
  one(filter?: (input: I) => boolean): PendingCall<I, O> {
    const open = this.open(filter);
    if (open.length !== 1) throw new Error(`expected exactly one open call, found ${open.length}`);
    return open[0]!;
  }

  /** The most recently started open invocation matching `filter`. */
  last(filter?: (input: I) => boolean): PendingCall<I, O> {
    const open = this.open(filter);
    if (open.length === 0) throw new Error('expected an open call, found none');
    return open[open.length - 1]!;
  }

  /** Whether every invocation was either settled or aborted (nothing left running). */
  allClosed(): boolean {
    return this.calls.every((c) => c.settled || c.signal.aborted);
  }
}

/**
 * Asserts deep equality: a fast strict comparison first (model-based runs make thousands of
 * them), vitest's `toEqual` with its readable diff only when that fails.
 */
export function same(actual: unknown, expected: unknown): void {
  if (isDeepStrictEqual(actual, expected)) return;
  expect(actual).toEqual(expected);
}

/**
 * Lets settled promise actors deliver their results: a promise actor reports its outcome a
 * couple of microtasks after its promise settles, and actors process events synchronously.
 */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** A readable, unique key for one transition definition of a machine. */
export function transitionKey(t: AnyTransitionDefinition): string {
  const source = t.source;
  const always = t.eventType === '';
  const siblings: readonly AnyTransitionDefinition[] = always ? (source.always ?? []) : (source.transitions.get(t.eventType) ?? []);
  const index = siblings.indexOf(t);
  const guard = t.guard === undefined ? '' : typeof t.guard === 'string' ? ` if ${t.guard}` : ` if ${(t.guard as { type?: string }).type ?? 'inline'}`;
  const target = t.target?.map((n) => n.id).join(',') ?? '(no target)';
  return `${source.id} --${always ? '(always)' : t.eventType}#${index}${guard}--> ${target}`;
}

/** Every state node id and every transition of a machine, read from its definition. */
export function machineGraph(machine: AnyStateMachine): { states: string[]; transitions: string[] } {
  const nodes = [machine.root, ...getStateNodes(machine.root)];
  const transitions: string[] = [];
  for (const node of nodes) {
    for (const defs of node.transitions.values()) for (const t of defs) transitions.push(transitionKey(t));
    for (const t of node.always ?? []) transitions.push(transitionKey(t));
  }
  return { states: nodes.map((n) => n.id), transitions };
}

/** State node ids that are active for `value` in the machine with id `machineId`. */
export function activeStateIds(machineId: string, value: StateValue): string[] {
  const ids = [machineId];
  const walk = (prefix: string, v: StateValue): void => {
    if (typeof v === 'string') {
      ids.push(`${prefix}.${v}`);
      return;
    }
    for (const [key, child] of Object.entries(v)) {
      ids.push(`${prefix}.${key}`);
      if (child !== undefined) walk(`${prefix}.${key}`, child);
    }
  };
  walk(machineId, value);
  return ids;
}

/**
 * Records, from inspection events, which states and transitions of the machine with id
 * `machineId` a real actor (or any actor of its system) went through. Pass `observe` as the
 * `inspect` option of the root actor.
 */
export class Coverage {
  readonly states = new Set<string>();
  readonly transitions = new Set<string>();

  constructor(readonly machineId: string) {}

  readonly observe = (e: InspectionEvent): void => {
    if (e.type !== '@xstate.microstep' && e.type !== '@xstate.snapshot') return;
    const snapshot = e.snapshot as { machine?: { id?: string }; value?: StateValue };
    if (snapshot.machine?.id === this.machineId && snapshot.value !== undefined) {
      for (const id of activeStateIds(this.machineId, snapshot.value)) this.states.add(id);
    }
    if (e.type === '@xstate.microstep') {
      for (const t of e._transitions) if (t.source.machine.id === this.machineId) this.transitions.add(transitionKey(t));
    }
  };

  /** What of `graph` was not covered. */
  missing(graph: { states: string[]; transitions: string[] }): { states: string[]; transitions: string[] } {
    return {
      states: graph.states.filter((s) => !this.states.has(s)),
      transitions: graph.transitions.filter((t) => !this.transitions.has(t)),
    };
  }
}

/**
 * A compact, comparable signature of an event body: enough to check kind, order and the
 * fields a step decides (call ids, turns, ok flags, reasons), not the full payloads.
 */
export function eventSig(e: SwarmEventBody): string {
  switch (e.kind) {
    case 'task':
      return 'task';
    case 'artifact-update':
      return 'artifact';
    case 'internal:llm-call':
      return `llm:${e.agent}:${e.scope}:${e.turn}`;
    case 'internal:tool-start':
      return `tool-start:${e.callId}`;
    case 'internal:tool-complete':
      return `tool-complete:${e.callId}:${e.ok}:${e.key}`;
    case 'internal:checkpoint':
      return `cp:${e.step}`;
    case 'status-update': {
      const m = e.metadata;
      let detail = '';
      switch (m.type) {
        case 'tool-call':
        case 'agent-handoff':
          detail = `:${m.callId}`;
          break;
        case 'swarm-handoff':
          detail = `:${m.callId}:${m.childSwarmId}`;
          break;
        case 'handoff-result':
          detail = `:${m.callId}:${m.ok}${m.childSwarmId ? `:${m.childSwarmId}` : ''}`;
          break;
        case 'child-swarm':
          detail = `:${m.childSwarmId}:${m.lifecycle}`;
          break;
        case 'turn-completed':
          detail = `:${m.turn}`;
          break;
        case 'paused':
          // With the pause's id, which a strict resume names.
          detail = `:${m.reason.message}${m.reason.pauseId === undefined ? '' : `@${m.reason.pauseId}`}`;
          break;
        case 'resumed':
          detail = `:${m.message ?? ''}`;
          break;
        case 'extended':
          detail = `:${m.maxTurns}`;
          break;
        case 'completed':
          detail = `:${JSON.stringify(m.result)}`;
          break;
        case 'failed':
        case 'stopped':
          detail = `:${m.reason}`;
          break;
        default:
          break;
      }
      return `${e.status.state}:${m.type}${detail}${e.final ? '!' : ''}`;
    }
  }
}

/** A generated test path, as `createTestModel` yields it (only what the runner needs). */
export interface ModelPath<E extends { type: string }> {
  steps: { event: E }[];
  // xstate/graph types `params` by the model machine's snapshot type; the runner only passes
  // executors that forward to the run, so the precise type adds nothing here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  test(params: any): Promise<unknown>;
}

/**
 * Declares the model-based suites of one machine: a test per generated path, each executed on
 * a fresh run of the real machine (`startRun`), then one test asserting that the paths covered
 * every state and transition of the real machine's graph.
 */
export function describeModelPaths<E extends { type: string }>(options: {
  suites: [title: string, paths: ModelPath<E>[]][];
  eventTypes: readonly E['type'][];
  startRun(): { exec(event: E): unknown; check(state: never): unknown };
  describePath(steps: { event: E }[]): string;
  coverage: Coverage;
  graph: { states: string[]; transitions: string[] };
  /** A state id the real graph must contain (sanity check of the graph walk). */
  knownState: string;
  /** More tests of the same describe block, declared between the paths and the coverage check. */
  extra?: () => void;
}): void {
  let pathsRun = 0;
  const total = options.suites.reduce((n, [, paths]) => n + paths.length, 0);
  for (const [title, paths] of options.suites) {
    describe(title, () => {
      paths.forEach((path, i) => {
        it(`#${i + 1}: ${options.describePath(path.steps)}`, async () => {
          const run = options.startRun();
          const events = Object.fromEntries(options.eventTypes.map((type) => [type, ({ event }: { event: E }) => run.exec(event)]));
          await path.test({ events, states: { '*': (state: never) => run.check(state) } });
          pathsRun++;
        });
      });
    });
  }
  options.extra?.();
  it(`covered every state and every transition of the real ${options.coverage.machineId} machine`, () => {
    // Only meaningful after every path ran (not under -t filters; failed paths are reported above).
    if (pathsRun < total) return;
    expect(options.graph.states).toContain(options.knownState);
    expect([...options.coverage.transitions].filter((t) => !options.graph.transitions.includes(t))).toEqual([]);
    expect(options.coverage.missing(options.graph)).toEqual({ states: [], transitions: [] });
  });
}
