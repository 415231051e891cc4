/**
 * The targets, checked against the rows of one bench run: each figure beside its floor
 * or reference (usually another row, measured in its own process in the same run), the ratio,
 * the target and ok or MISSED. Figures without a target are listed for reading.
 *
 * @module
 */
import {
  BOARD,
  BOARD_MODE,
  CONCURRENT,
  CROSS_PROCESS,
  ONE_PROCESS,
  HANDOFF,
  LIVE,
  LONG,
  LONG_MODE,
  PASSIVATED,
  PAUSED,
  PAUSED_CONTROL,
  SEQUENTIAL,
  SEQUENTIAL_NO_PRETENURING,
  STREAM,
  STREAM_MODE,
  TEAM,
  TEAM_LOADED,
  TEAM_SPEEDUP,
  W1_BARE,
  W1_BUDGETED,
  W1_FULL,
  W1_INSPECTED,
  W1_METRICS,
  W1_TRACED,
  W1_JETSTREAM,
  W1_MACHINE,
  W1_MEMORY,
  W1_NORMAL,
  W1_RAW_STEP,
} from './rows.js';
import { type BenchRow, type Figures, num, type TableLine } from './table.js';
import { scaleLines } from './targets-scale.js';

/** The longest event-loop block allowed for board work: creation, completions, restore (issue 28, boards). */
export const BOARD_LOOP_BLOCK_MS = 50;

/** Peak RSS growth allowed while reading the long stream (bounded memory: pages, not the whole stream). */
export const STREAM_GROWTH_MB = 64;

/** The table lines for the rows that ran, in row order. */
export function tableLines(rows: readonly BenchRow[]): TableLine[] {
  const figures = (workload: string, mode: string): Figures | undefined => rows.find((r) => r.workload === workload && r.mode === mode)?.figures;
  /** The durable sequential floor of a row: the memory row's µs per run + its commits per run × its raw commit. */
  const durableFloor = (f: Figures): number | null => {
    const memory = figures(W1_MEMORY, SEQUENTIAL)?.usPerRun;
    return memory != null && f.commitsPerRun != null && f.rawCommitUs != null ? memory + f.commitsPerRun * f.rawCommitUs : null;
  };
  const lines: TableLine[] = [];
  for (const row of rows) {
    const f = row.figures;
    const at = { workload: row.workload, mode: row.mode };
    /** A figure for reading. */
    const info = (figure: string, value: number | null | undefined, unit: string) => lines.push({ ...at, figure, value: value ?? null, unit, ok: null });
    /** A figure held to `limit` × a reference (a floor or another row's figure). */
    const ratio = (figure: string, value: number | null | undefined, unit: string, label: string, reference: number | null | undefined, limit: number) => {
      const r = value != null && reference != null && reference > 0 ? value / reference : null;
      lines.push({
        ...at,
        figure,
        value: value ?? null,
        unit,
        reference: { label, value: reference ?? null },
        ratio: r,
        target: `≤ ${limit}×`,
        ratioLimit: limit,
        ok: r === null ? null : r <= limit,
      });
    };
    /** A figure held to an absolute limit. */
    const limit = (
      figure: string,
      value: number | null | undefined,
      unit: string,
      max: number,
      reference?: { label: string; value: number | null | undefined; noRatio?: true },
    ) =>
      lines.push({
        ...at,
        figure,
        value: value ?? null,
        unit,
        ...(reference ? { reference: { label: reference.label, value: reference.value ?? null } } : {}),
        ...(reference && !reference.noRatio ? { ratio: value != null && reference.value ? value / reference.value : null } : {}),
        target: `≤ ${max} ${unit}`,
        ok: value == null ? null : value <= max,
      });

    /** A figure beside a reference, for reading (the ratio shown, no target). */
    const beside = (figure: string, value: number | null | undefined, unit: string, label: string, reference: number | null | undefined) =>
      lines.push({
        ...at,
        figure,
        value: value ?? null,
        unit,
        reference: { label, value: reference ?? null },
        ratio: value != null && reference != null && reference > 0 ? value / reference : null,
        ok: null,
      });

    /** The CPU time per run of each process of a NATS row (the machine's load shows beside it). */
    const cpu = () => {
      info('CPU per run: orchestrator process', f.cpuOrchestratorUs, 'µs');
      info('CPU per run: worker processes', f.cpuWorkersUs, 'µs');
      info('CPU per run: nats-server', f.cpuServerUs, 'µs');
    };

    /** The waiting swarms' lease renewals, watched over two renewal periods (see rows-paused.ts). */
    const renewal = () => {
      info('store time to renew every waiting swarm’s lease', f.renewalMsPerAll, 'ms');
      info('longest renewal call', f.renewalCallMaxMs, 'ms');
      info('longest event-loop delay over two renewal periods', f.loopDelayMaxMs, 'ms');
    };

    /** V8's collections during a sequential row's timed runs: what its p99 run is made of. */
    const gc = () => {
      info('in GC / run', f.gcUsPerRun, 'µs');
      info('scavenges per 1000 runs', f.scavengesPer1000Runs, '');
      info('mean scavenge', f.scavengeMeanMs, 'ms');
    };

    // The scale-out rows' lines are in their own file.
    if (scaleLines(row.workload, row.mode, f, figures, { info, ratio, beside })) continue;
    const name = `${row.workload}|${row.mode}`;
    switch (name) {
      case `${W1_MEMORY}|${SEQUENTIAL}`:
        ratio('µs per model call', f.usPerModelCall, 'µs', 'bare XState', figures(W1_BARE, SEQUENTIAL)?.usPerModelCall, 1.5);
        ratio('p99 run', f.p99Us, 'µs', 'p50', f.p50Us, 5);
        // For reading: what the runtime adds to its own machine (host, events, store, client).
        beside('µs per model call', f.usPerModelCall, 'µs', 'swarm machine alone', figures(W1_MACHINE, SEQUENTIAL)?.usPerModelCall);
        gc();
        break;
      case `${W1_INSPECTED}|${SEQUENTIAL}`:
        // For reading: what an inspection observer costs per model call (none attached: the row above).
        beside('µs per model call', f.usPerModelCall, 'µs', 'W1 / memory, no observer', figures(W1_MEMORY, SEQUENTIAL)?.usPerModelCall);
        info(
          'µs per model call added by inspection',
          f.usPerModelCall != null && figures(W1_MEMORY, SEQUENTIAL)?.usPerModelCall != null ? f.usPerModelCall - figures(W1_MEMORY, SEQUENTIAL)!.usPerModelCall! : null,
          'µs',
        );
        break;
      case `${W1_METRICS}|${SEQUENTIAL}`:
        // For reading: what the Prometheus metrics cost per model call (off: the row above).
        beside('µs per model call', f.usPerModelCall, 'µs', 'W1 / memory, no metrics', figures(W1_MEMORY, SEQUENTIAL)?.usPerModelCall);
        info(
          'µs per model call added by metrics',
          f.usPerModelCall != null && figures(W1_MEMORY, SEQUENTIAL)?.usPerModelCall != null ? f.usPerModelCall - figures(W1_MEMORY, SEQUENTIAL)!.usPerModelCall! : null,
          'µs',
        );
        break;
      case `${W1_TRACED}|${SEQUENTIAL}`:
        // For reading: what recording every span costs per model call (off: the row above).
        beside('µs per model call', f.usPerModelCall, 'µs', 'W1 / memory, not traced', figures(W1_MEMORY, SEQUENTIAL)?.usPerModelCall);
        info(
          'µs per model call added by tracing',
          f.usPerModelCall != null && figures(W1_MEMORY, SEQUENTIAL)?.usPerModelCall != null ? f.usPerModelCall - figures(W1_MEMORY, SEQUENTIAL)!.usPerModelCall! : null,
          'µs',
        );
        break;
      case `${W1_BUDGETED}|${SEQUENTIAL}`:
        // Every model call reserved (prompt estimated, USD priced) and settled, every tool call counted.
        ratio('µs per model call', f.usPerModelCall, 'µs', 'W1 / memory, no budget', figures(W1_MEMORY, SEQUENTIAL)?.usPerModelCall, 1.1);
        break;
      case `${W1_MACHINE}|${SEQUENTIAL}`:
        // For reading: how much of the runtime row's distance from bare the machine itself takes.
        beside('µs per model call', f.usPerModelCall, 'µs', 'bare XState', figures(W1_BARE, SEQUENTIAL)?.usPerModelCall);
        beside('p99 run', f.p99Us, 'µs', 'p50', f.p50Us);
        gc();
        break;
      case `${W1_BARE}|${SEQUENTIAL}`:
      case `${W1_BARE}|${SEQUENTIAL_NO_PRETENURING}`:
        info('µs per model call', f.usPerModelCall, 'µs');
        info('p50 run', f.p50Us, 'µs');
        // The same ratio for the floor: V8's scavenges set both rows' p99 on this machine.
        beside('p99 run', f.p99Us, 'µs', 'p50', f.p50Us);
        gc();
        break;
      case `${W1_MEMORY}|${SEQUENTIAL_NO_PRETENURING}`:
        // For reading: the same two rows with V8's pretenuring off, side by side.
        beside('µs per model call', f.usPerModelCall, 'µs', 'bare XState, same option', figures(W1_BARE, SEQUENTIAL_NO_PRETENURING)?.usPerModelCall);
        beside('p99 run', f.p99Us, 'µs', 'p50', f.p50Us);
        gc();
        break;
      case `${W1_MEMORY}|${CONCURRENT}`:
        ratio('wall, 1000 runs', f.wallMs, 'ms', 'bare XState', figures(W1_BARE, CONCURRENT)?.wallMs, 1.5);
        ratio('peak RSS', f.peakRssMb, 'MB', 'bare XState', figures(W1_BARE, CONCURRENT)?.peakRssMb, 1.2);
        beside('wall, 1000 runs', f.wallMs, 'ms', 'swarm machine alone', figures(W1_MACHINE, CONCURRENT)?.wallMs);
        beside('peak RSS', f.peakRssMb, 'MB', 'swarm machine alone', figures(W1_MACHINE, CONCURRENT)?.peakRssMb);
        info('in GC', f.gcMs, 'ms');
        break;
      case `${W1_MACHINE}|${CONCURRENT}`:
        beside('wall, 1000 runs', f.wallMs, 'ms', 'bare XState', figures(W1_BARE, CONCURRENT)?.wallMs);
        beside('peak RSS', f.peakRssMb, 'MB', 'bare XState', figures(W1_BARE, CONCURRENT)?.peakRssMb);
        info('in GC', f.gcMs, 'ms');
        break;
      case `${W1_BARE}|${CONCURRENT}`:
        info('wall, 1000 runs', f.wallMs, 'ms');
        info('peak RSS', f.peakRssMb, 'MB');
        info('in GC', f.gcMs, 'ms');
        break;
      case `${W1_FULL}|${SEQUENTIAL}`:
      case `${W1_NORMAL}|${SEQUENTIAL}`: {
        const memory = figures(W1_MEMORY, SEQUENTIAL)?.usPerRun;
        const floor = durableFloor(f);
        // The target is on FULL; NORMAL is printed beside the same floor for reading
        // (its raw commit skips the fsync that dominates FULL, so the ratio shows the store's CPU).
        if (name === `${W1_FULL}|${SEQUENTIAL}`) {
          ratio('µs per run', f.usPerRun, 'µs', 'memory + commits × raw', floor, 1.15);
          beside('µs per run', f.usPerRun, 'µs', 'raw commit per step', figures(W1_RAW_STEP, SEQUENTIAL)?.usPerRun);
        } else beside('µs per run', f.usPerRun, 'µs', 'memory + commits × raw', floor);
        info('raw 4 KB commit', f.rawCommitUs, 'µs');
        info('raw 4 KB append', f.rawAppendUs, 'µs');
        info('in transactions / run', f.writeUsPerRun, 'µs');
        info('in writer thread / run', f.writerUsPerRun, 'µs');
        // Where a commit's time goes, against the raw commit above (one prebuilt 4 KB row).
        info('serializing / commit', f.serializeUsPerCommit, 'µs');
        info('BEGIN and statements / commit', f.statementsUsPerCommit, 'µs');
        info('COMMIT / commit', f.syncUsPerCommit, 'µs');
        // The rest of the run beyond the memory row: the runtime's own work around durable commits.
        info(
          'outside serializing and transactions, beyond memory / run',
          memory != null && f.usPerRun != null && f.writeUsPerRun != null ? f.usPerRun - f.writeUsPerRun - memory : null,
          'µs',
        );
        info('commits per run', f.commitsPerRun, '');
        info('transactions per run', f.transactionsPerRun, '');
        break;
      }
      case `${W1_RAW_STEP}|${SEQUENTIAL}`:
        // For reading: a store costing a step exactly the floor's raw commit, against that floor.
        beside('µs per run', f.usPerRun, 'µs', 'memory + commits × raw', durableFloor(f));
        info('raw 4 KB commit', f.rawCommitUs, 'µs');
        info('commits per run', f.commitsPerRun, '');
        break;
      case `${W1_FULL}|${CONCURRENT}`:
        ratio('wall, 1000 runs', f.wallMs, 'ms', 'memory concurrent', figures(W1_MEMORY, CONCURRENT)?.wallMs, 1.5);
        info('in transactions', f.writeMs, 'ms');
        info('in writer thread', f.writerMs, 'ms');
        info('serializing commits', f.serializeMs, 'ms');
        info('in GC', f.gcMs, 'ms');
        info('peak RSS', f.peakRssMb, 'MB');
        info('commits per run', f.commitsPerRun, '');
        info('transactions per run', f.transactionsPerRun, '');
        break;
      case `${W1_JETSTREAM}|${SEQUENTIAL}`:
      case `${W1_JETSTREAM}|${ONE_PROCESS}`: {
        // The floor: the memory row's run plus, per commit, one raw KV update and one raw
        // stream publish (of the store's mean sizes), measured in this row's process.
        const memory = figures(W1_MEMORY, SEQUENTIAL)?.usPerRun;
        const floor =
          memory != null && f.commitsPerRun != null && f.rawKvUpdateUs != null && f.rawPublishUs != null
            ? memory + f.commitsPerRun * (f.rawKvUpdateUs + f.rawPublishUs)
            : null;
        // The target is on the row with its agents in worker processes; the same floor
        // with no process hop is printed for reading: what of the gap is the store's.
        if (row.mode === SEQUENTIAL) {
          ratio('µs per run', f.usPerRun, 'µs', 'memory + commits × (KV update + publish)', floor, 1.5);
          beside('µs per run', f.usPerRun, 'µs', 'sqlite FULL', figures(W1_FULL, SEQUENTIAL)?.usPerRun);
        } else beside('µs per run', f.usPerRun, 'µs', 'memory + commits × (KV update + publish)', floor);
        info('p50 run', f.p50Us, 'µs');
        info('p99 run', f.p99Us, 'µs');
        info('commits per run', f.commitsPerRun, '');
        info('KV updates per run', f.kvUpdatesPerRun, `× ${num(f.kvBytes)} B`);
        info('stream publishes per run', f.publishesPerRun, `× ${num(f.pubBytes)} B`);
        info('JetStream API requests per run', f.apiPerRun, '');
        info('raw KV update', f.rawKvUpdateUs, 'µs');
        info('raw stream publish', f.rawPublishUs, 'µs');
        cpu();
        break;
      }
      case `${W1_JETSTREAM}|${CONCURRENT}`:
        ratio('wall, 1000 runs', f.wallMs, 'ms', 'sqlite FULL', figures(W1_FULL, CONCURRENT)?.wallMs, 2);
        info('peak RSS (orchestrator)', f.peakRssMb, 'MB');
        cpu();
        break;
      case `${HANDOFF}|${CROSS_PROCESS}`: {
        ratio('p50 handoff', f.p50Us, 'µs', 'floor (p50s)', f.floorP50Us, 2);
        beside('mean handoff', f.meanUs, 'µs', 'floor (means)', f.floorMeanUs);
        info('p90 handoff', f.p90Us, 'µs');
        info('max handoff', f.maxUs, 'µs');
        info('floor: raw request/reply p50', f.rttP50Us, 'µs');
        info('floor: raw KV update p50', f.kvUpdateP50Us, 'µs');
        info('floor: raw stream publish p50', f.publishP50Us, 'µs');
        info('child KV updates per handoff', f.kvUpdates, `× ${num(f.kvBytes)} B`);
        info('child stream publishes per handoff', f.publishes, `× ${num(f.pubBytes)} B`);
        info('where: request → worker answered p50', f.hostAnswerP50Us, 'µs');
        info('where: answered → child final commit p50', f.childDoneP50Us, 'µs');
        info('where: child final commit → parent holds result p50', f.followP50Us, 'µs');
        info('parent relay publishes per handoff', f.parentRelays, '');
        info('broker round trips per handoff (host request, writes, API requests)', f.brokerRoundTrips, '');
        info(
          'JetStream API requests per handoff',
          Object.entries(f)
            .filter(([k]) => k.startsWith('api '))
            .reduce((a, [, v]) => a + (v ?? 0), 0),
          '',
        );
        for (const [k, v] of Object.entries(f)) if (k.startsWith('api ')) info(`  ${k.slice(4)}`, v, '');
        info('whole run (2 parent steps + handoff)', f.runUs, 'µs');
        info('broker round trips per whole run', f.runRoundTrips, '');
        cpu();
        break;
      }
      case `${LONG}|${LONG_MODE}`:
        ratio('µs per turn at turn 200', f.usPerTurnAt200, 'µs', 'at turn 10', f.usPerTurnAt10, 2);
        ratio('bytes written per step at turn 200', f.bytesPerStepAt200, 'B', 'at turn 10', f.bytesPerStepAt10, 2);
        info('commits per turn', f.commitsPerTurn, '');
        break;
      case `${PAUSED}|${LIVE}`:
        info('RSS per waiting swarm', f.rssKbPerSwarm, 'KB');
        info('heap per waiting swarm', f.heapKbPerSwarm, 'KB');
        info('resume p50', f.resumeP50Ms, 'ms');
        info('resume p99', f.resumeP99Ms, 'ms');
        renewal();
        break;
      case `${PAUSED}|${PAUSED_CONTROL}`:
        info('RSS growth per swarm run (none waiting)', f.rssKbPerSwarm, 'KB');
        info('heap growth per swarm run (none waiting)', f.heapKbPerSwarm, 'KB');
        break;
      case `${PAUSED}|${PASSIVATED}`: {
        const live = figures(PAUSED, LIVE);
        const control = figures(PAUSED, PAUSED_CONTROL);
        info('swarms passivated', f.passivated, `of ${f.swarms}`);
        limit('RSS per waiting swarm', f.rssKbPerSwarm, 'KB', 2, live && { label: 'live', value: live.rssKbPerSwarm });
        // For reading: the growth beyond a process that ran as many swarms and keeps none (its
        // allocator and heap high-water are held by nobody). Not a target: both rows may hide
        // the same per-swarm leak, which the control's own heap line would show.
        const held = f.rssKbPerSwarm != null && control?.rssKbPerSwarm != null ? f.rssKbPerSwarm - control.rssKbPerSwarm : null;
        // A difference: no ratio (it would compare unlike things); the control's own line is above.
        info('RSS per waiting swarm beyond the control', held, 'KB');
        info('heap per waiting swarm', f.heapKbPerSwarm, 'KB');
        limit('resume p50', f.resumeP50Ms, 'ms', 2, live && { label: 'live', value: live.resumeP50Ms });
        info('resume p99', f.resumeP99Ms, 'ms');
        renewal();
        break;
      }
      case `${STREAM}|${STREAM_MODE}`:
        limit('peak RSS growth while reading', f.peakGrowthMb, 'MB', STREAM_GROWTH_MB, { label: 'RSS before', value: f.rssBeforeMb, noRatio: true });
        info('events per second', f.eventsPerSec, '/s');
        break;
      case `${TEAM}|${TEAM_SPEEDUP}`: {
        // A floor, not a ceiling: the speedup on SQLite at least 0.9 × the one in memory.
        const r = f.speedupSqlite != null && f.speedupMemory ? f.speedupSqlite / f.speedupMemory : null;
        lines.push({
          ...at,
          figure: 'speedup on SQLite (median)',
          value: f.speedupSqlite ?? null,
          unit: '×',
          reference: { label: 'speedup in memory', value: f.speedupMemory ?? null },
          ratio: r,
          target: '≥ 0.9×',
          ok: r === null ? null : r >= 0.9,
        });
        beside('team of 5 (median)', f.teamMsSqlite, 'ms', 'in memory', f.teamMsMemory);
        beside('one worker (median)', f.soloMsSqlite, 'ms', 'in memory', f.soloMsMemory);
        info('workers respawned beyond the stalled one', f.falseRespawns, `in ${f.runs} + ${f.runs} runs`);
        break;
      }
      case `${TEAM}|${TEAM_LOADED}`:
        lines.push({
          ...at,
          figure: 'workers respawned beyond the stalled one',
          value: f.falseRespawns ?? null,
          unit: `in ${f.runs} runs`,
          target: '= 0',
          ok: f.falseRespawns == null ? null : f.falseRespawns === 0,
        });
        info('speedup (median)', f.speedupMedian, '×');
        info('speedup (lowest)', f.speedupMin, '×');
        break;
      case `${BOARD}|${BOARD_MODE}`:
        ratio('µs per completed task, large board', f.largeUsPerTask, 'µs', 'small board', f.smallUsPerTask, 1.5);
        // Over the board's whole life: its creation (run(100k) until durable) and its completions.
        limit('longest event-loop block, large board (creation included)', f.largeLoopMaxMs, 'ms', BOARD_LOOP_BLOCK_MS);
        beside('bytes committed per task, large board', f.largeBytesPerTask, 'B', 'small board', f.smallBytesPerTask);
        info('longest event-loop block, small board', f.smallLoopMaxMs, 'ms');
        // For reading: creating the large board, once (the caller's run(tasks) until durable, in slices).
        info('run(100k tasks) until durable, large board', f.largeCreateMs, 'ms');
        info('longest event-loop block during run(100k tasks)', f.largeCreateLoopMaxMs, 'ms');
        info('longest commit call of the creation (a slice)', f.largeCreateCommitMs, 'ms');
        // The large board restored by a new runtime (its client's ready()): board work too, so
        // held to the same bound as its creation and completions.
        info('restore of the large board in a new runtime', f.largeRestoreMs, 'ms');
        limit('longest event-loop block during the restore', f.largeRestoreLoopMaxMs, 'ms', BOARD_LOOP_BLOCK_MS);
        break;
      default:
        for (const [figure, value] of Object.entries(f)) info(figure, value, '');
    }
  }
  return lines;
}
