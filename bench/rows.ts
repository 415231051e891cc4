/**
 * Every bench row, in the order they run and print. Each row runs in its own process; `needs`
 * names the rows its targets are measured against.
 *
 * @module
 */
import { boardScale, LARGE as BOARD_LARGE, SMALL as BOARD_SMALL } from './rows-board.js';
import { inspectedSequential } from './rows-inspect.js';
import { metricsSequential } from './rows-metrics.js';
import { tracedSequential } from './rows-traced.js';
import { budgetedSequential } from './rows-budget.js';
import { longConversation, TURNS } from './rows-long.js';
import { PASSIVATE_AFTER_MS, pausedSwarms, SWARMS } from './rows-paused.js';
import { EVENTS, longStream } from './rows-stream.js';
import { LOADED_RUNS, teamSpeedup, teamUnderLoad } from './rows-team.js';
import {
  bareConcurrent,
  bareSequential,
  machineConcurrent,
  machineSequential,
  rawCommitPerStep,
  runtimeConcurrent,
  runtimeSequential,
  sqliteConcurrent,
  sqliteSequential,
} from './rows-w1.js';
import type { RowSpec } from './table.js';

/** Workload names, shared with the targets. */
export const W1_MEMORY = 'W1 / memory';
/** W1 in memory with every actor reporting to an inspection relay (see rows-inspect.ts). */
export const W1_INSPECTED = 'W1 / memory, inspected';
/** W1 in memory with `createRuntime({ metrics: true })` (see rows-metrics.ts). */
export const W1_METRICS = 'W1 / memory, metrics on';
/** W1 in memory with `createRuntime({ tracing })`, every span recorded (see rows-traced.ts). */
export const W1_TRACED = 'W1 / memory, traced';
/** W1 in memory with a budget (every cap) on the swarm: every call reserved and settled (see rows-budget.ts). */
export const W1_BUDGETED = 'W1 / memory, budget on every call';
export const W1_BARE = 'W1 / bare XState';
export const W1_MACHINE = 'W1 / swarm machine alone';
export const W1_FULL = 'W1 / sqlite FULL';
export const W1_NORMAL = 'W1 / sqlite NORMAL';
export const W1_RAW_STEP = 'W1 / memory + raw FULL commit per step';
export const LONG = 'long conversation / sqlite NORMAL';
export const PAUSED = `${SWARMS / 1000}k paused swarms / sqlite NORMAL`;
export const STREAM = 'long stream / sqlite NORMAL';
export const W1_JETSTREAM = 'W1 / JetStream';
export const HANDOFF = 'Handoff';
export const TEAM = 'team example (PRD board)';
export const BOARD = 'team board / sqlite NORMAL';
/** The scale-out rows (rows-scale.ts). */
export const W1_NATS = 'W1 / NATS';
export const REST_500 = 'REST 500';

/** Modes. */
export const SEQUENTIAL = 'sequential';
export const CONCURRENT = 'concurrent';
export const LONG_MODE = `${TURNS} turns, 2 KB tool results`;
export const LIVE = 'live';
export const PASSIVATED = `passivateAfterMs ${PASSIVATE_AFTER_MS}`;
/** The paused rows' control: the same swarms answered at once, none left waiting. */
export const PAUSED_CONTROL = 'control: none left waiting';
export const STREAM_MODE = `events({ since: 0 }) of ${EVENTS / 1000}k`;
export const CROSS_PROCESS = 'cross-process';
/** W1 on JetStream with its agents in the orchestrator's process (the store's cost alone, no process hop). */
export const ONE_PROCESS = 'sequential, one process';
export const TEAM_SPEEDUP = 'sqlite FULL and memory, alternating';
export const TEAM_LOADED = `sqlite FULL, ${LOADED_RUNS} runs under a CPU load`;
export const BOARD_MODE = `${BOARD_LARGE / 1000}k tasks vs ${BOARD_SMALL}`;
/** Runs started at once in the scale-out throughput rows, and in the large one (the 1,000). */
export const SCALE_RUNS = 300;
export const SCALE_RUNS_LARGE = 1000;
export const ONE_WORKER = `1 worker, ${SCALE_RUNS} at once`;
export const TWO_WORKERS = `2 workers, ${SCALE_RUNS} at once`;
export const TWO_WORKERS_LARGE = `2 workers, ${SCALE_RUNS_LARGE} at once`;
export const REST_SQLITE = 'one process, SQLite';
export const REST_DISTRIBUTED = 'distributed, 2 workers';
/**
 * The sequential W1 rows again in a node started with V8's allocation-site pretenuring off, for
 * reading what it does to their collections (see bench/README.md, "Where the time goes").
 */
export const NO_PRETENURING_OPTION = '--no-allocation-site-pretenuring';
export const SEQUENTIAL_NO_PRETENURING = 'sequential, no pretenuring';

const name = (workload: string, mode: string) => `${workload} / ${mode}`;

/** The NATS rows, loaded by their own process only (no other row loads the NATS client). */
const nats = () => import('./rows-nats.js');
/** The scale-out rows, loaded the same way (they use the NATS client too). */
const scale = () => import('./rows-scale.js');

export const ROWS: RowSpec[] = [
  { workload: W1_MEMORY, mode: SEQUENTIAL, needs: [name(W1_BARE, SEQUENTIAL), name(W1_MACHINE, SEQUENTIAL)], repeated: true, measure: runtimeSequential },
  { workload: W1_INSPECTED, mode: SEQUENTIAL, needs: [name(W1_MEMORY, SEQUENTIAL)], repeated: true, measure: inspectedSequential },
  { workload: W1_METRICS, mode: SEQUENTIAL, needs: [name(W1_MEMORY, SEQUENTIAL)], repeated: true, measure: metricsSequential },
  { workload: W1_TRACED, mode: SEQUENTIAL, needs: [name(W1_MEMORY, SEQUENTIAL)], repeated: true, measure: tracedSequential },
  { workload: W1_BUDGETED, mode: SEQUENTIAL, needs: [name(W1_MEMORY, SEQUENTIAL)], repeated: true, measure: budgetedSequential },
  { workload: W1_BARE, mode: SEQUENTIAL, repeated: true, measure: bareSequential },
  { workload: W1_MACHINE, mode: SEQUENTIAL, needs: [name(W1_BARE, SEQUENTIAL)], repeated: true, measure: machineSequential },
  {
    workload: W1_MEMORY,
    mode: SEQUENTIAL_NO_PRETENURING,
    needs: [name(W1_BARE, SEQUENTIAL_NO_PRETENURING)],
    repeated: true,
    nodeOptions: [NO_PRETENURING_OPTION],
    measure: runtimeSequential,
  },
  { workload: W1_BARE, mode: SEQUENTIAL_NO_PRETENURING, repeated: true, nodeOptions: [NO_PRETENURING_OPTION], measure: bareSequential },
  { workload: W1_MEMORY, mode: CONCURRENT, needs: [name(W1_BARE, CONCURRENT), name(W1_MACHINE, CONCURRENT)], repeated: true, measure: runtimeConcurrent },
  { workload: W1_BARE, mode: CONCURRENT, repeated: true, measure: bareConcurrent },
  { workload: W1_MACHINE, mode: CONCURRENT, needs: [name(W1_BARE, CONCURRENT)], repeated: true, measure: machineConcurrent },
  { workload: W1_FULL, mode: SEQUENTIAL, needs: [name(W1_MEMORY, SEQUENTIAL), name(W1_RAW_STEP, SEQUENTIAL)], repeated: true, measure: sqliteSequential('FULL') },
  { workload: W1_RAW_STEP, mode: SEQUENTIAL, needs: [name(W1_MEMORY, SEQUENTIAL)], repeated: true, measure: rawCommitPerStep },
  { workload: W1_NORMAL, mode: SEQUENTIAL, needs: [name(W1_MEMORY, SEQUENTIAL)], repeated: true, measure: sqliteSequential('NORMAL') },
  { workload: W1_FULL, mode: CONCURRENT, needs: [name(W1_MEMORY, CONCURRENT)], repeated: true, measure: sqliteConcurrent },
  {
    workload: W1_JETSTREAM,
    mode: SEQUENTIAL,
    needs: [name(W1_MEMORY, SEQUENTIAL), name(W1_FULL, SEQUENTIAL)],
    measure: async () => (await nats()).w1JetStreamSequential(),
  },
  { workload: W1_JETSTREAM, mode: ONE_PROCESS, needs: [name(W1_MEMORY, SEQUENTIAL)], measure: async () => (await nats()).w1JetStreamOneProcess() },
  { workload: W1_JETSTREAM, mode: CONCURRENT, needs: [name(W1_FULL, CONCURRENT)], measure: async () => (await nats()).w1JetStreamConcurrent() },
  { workload: HANDOFF, mode: CROSS_PROCESS, repeated: true, measure: async () => (await nats()).handoffCrossProcess() },
  { workload: W1_NATS, mode: ONE_WORKER, measure: async () => (await scale()).w1NatsScale(1, SCALE_RUNS)() },
  { workload: W1_NATS, mode: TWO_WORKERS, needs: [name(W1_NATS, ONE_WORKER)], measure: async () => (await scale()).w1NatsScale(2, SCALE_RUNS)() },
  { workload: W1_NATS, mode: TWO_WORKERS_LARGE, needs: [name(W1_NATS, TWO_WORKERS)], measure: async () => (await scale()).w1NatsScale(2, SCALE_RUNS_LARGE)() },
  { workload: REST_500, mode: REST_SQLITE, repeated: true, measure: async () => (await scale()).restScale('sqlite')() },
  { workload: REST_500, mode: REST_DISTRIBUTED, needs: [name(REST_500, REST_SQLITE)], repeated: true, measure: async () => (await scale()).restScale('nats')() },
  { workload: LONG, mode: LONG_MODE, measure: longConversation },
  { workload: PAUSED, mode: LIVE, measure: pausedSwarms(undefined) },
  { workload: PAUSED, mode: PAUSED_CONTROL, measure: pausedSwarms('control') },
  { workload: PAUSED, mode: PASSIVATED, needs: [name(PAUSED, LIVE), name(PAUSED, PAUSED_CONTROL)], measure: pausedSwarms(PASSIVATE_AFTER_MS) },
  { workload: STREAM, mode: STREAM_MODE, measure: longStream },
  { workload: TEAM, mode: TEAM_SPEEDUP, measure: teamSpeedup },
  { workload: TEAM, mode: TEAM_LOADED, measure: teamUnderLoad },
  // --expose-gc: the creation's garbage is collected before the row watches the event loop.
  { workload: BOARD, mode: BOARD_MODE, repeated: true, nodeOptions: ['--expose-gc'], measure: boardScale },
];
