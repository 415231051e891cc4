/**
 * `npm start [-- <example> [input…]] [options]`: runs an example swarm and narrates its event
 * stream, one line per event, then prints the typed result as JSON. State lives in SQLite
 * (`--db PATH`, else `XSWARM_DB`, else `.xswarm/state.db`), so a run that was interrupted or
 * left waiting for a human continues on the next `npm start` of that example. Exit code 0 when
 * the swarm completed, 1 when it failed or was stopped, 2 on bad arguments, 3 when it stays
 * paused waiting for a human (stdin ended without an answer).
 *
 * @example
 * // npm start
 * // npm start -- activity-planner "Anything fun on Sunday?" --verbose
 * // echo reject | npm start -- content-pipeline
 * // npm start -- --crash-after-turn 2   (then: npm start)
 *
 * @module
 */
import { parseArgs } from 'node:util';
import {
  DEFAULT_DB_PATH,
  factOf,
  memoryStore,
  type Model,
  type Runtime,
  type SwarmDefinition,
  type SwarmEvent,
  type SwarmClient,
  type SwarmStore,
  sqliteStore,
} from '../src/index.js';
import { activityPlanner, createActivityRuntime } from './activity-planner/index.js';
import { activityBooking, createBookingRuntime } from './activity-booking/index.js';
import { contentPipeline, createContentRuntime } from './content-pipeline/index.js';
import { crashAfterTurn } from './shared/crash.js';
import { answerSource, Human } from './shared/human.js';
import { createTriageRuntime, supportTriage } from './support-triage/index.js';
import { createTaskPlannerRuntime, taskPlanner } from './task-planner/index.js';
import { runTeamExample } from './team/index.js';
import { createWriterCriticRuntime, writerCritic } from './writer-critic/index.js';

/**
 * One runnable example. Add an entry to {@link EXAMPLES} to make it available by name.
 *
 * @example
 * const e: Example = { description: 'Echo', defaultInput: 'hi', setup: () => ({ ...createEchoRuntime(), swarm: echo }) };
 */
interface Example {
  description: string;
  defaultInput: string;
  /** Turns the command-line text into the swarm's input (default: the text itself). */
  toInput?: (text: string) => unknown;
  setup(options: { store: SwarmStore; leaseMs: number }): { runtime: Runtime; swarm: SwarmDefinition<any, any>; model: Model; offline: boolean };
}

/**
 * The examples by name; the first is the default.
 *
 * @example
 * EXAMPLES['activity-planner']!.defaultInput // 'Suggest outdoor activities for Saturday'
 */
const EXAMPLES: Record<string, Example> = {
  'activity-planner': {
    description: 'Weather, calendar and allergen agents plan a day (typed result)',
    defaultInput: 'Suggest outdoor activities for Saturday',
    setup: (o) => ({ ...createActivityRuntime(o), swarm: activityPlanner }),
  },
  'activity-booking': {
    description: 'A planner swarm hands off to the activity-planner and ticketing swarms (typed plan + booking)',
    defaultInput: 'Plan my Saturday and book something fun for the two of us',
    setup: (o) => ({ ...createBookingRuntime(o), swarm: activityBooking }),
  },
  'support-triage': {
    description: 'Triage hands tickets to a support swarm, customized for VIPs (C-1001 is one, C-2002 is not)',
    defaultInput: 'Customer C-1001: I was charged twice for order #4417, please sort this out today.',
    setup: (o) => ({ ...createTriageRuntime(o), swarm: supportTriage }),
  },
  'writer-critic': {
    description: 'A writer revises its draft with an inline critic agent until the critic approves',
    defaultInput: 'Write a short blog intro on why small teams should adopt code review',
    setup: (o) => ({ ...createWriterCriticRuntime(o), swarm: writerCritic }),
  },
  'content-pipeline': {
    description: "Research, draft, pause for an editor's approval (HITL: approve, ask for changes, or reject), then publish",
    defaultInput: 'urban beekeeping',
    setup: (o) => ({ ...createContentRuntime(o), swarm: contentPipeline }),
  },
  'task-planner': {
    description: 'Finds swarms for each task with the swarm registry and hands off to them',
    defaultInput: 'Check the weather for Saturday and book kayaking for 3 people',
    setup: (o) => ({ ...createTaskPlannerRuntime(o), swarm: taskPlanner }),
  },
};

/** The team-mode example (seed 004's PRD build), run by `runTeamExample` rather than as a swarm. */
const TEAM_EXAMPLE = 'team';

/** Exit codes (see the module comment). */
const EXIT = { ok: 0, failed: 1, usage: 2, paused: 3 } as const;

const OPTIONS = {
  verbose: { type: 'boolean', short: 'v' },
  memory: { type: 'boolean' },
  db: { type: 'string' },
  'auto-answer': { type: 'boolean' },
  'crash-after-turn': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

let options: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
try {
  options = parseArgs({ args: process.argv.slice(2), options: OPTIONS, allowPositionals: true });
} catch (error) {
  console.error((error as Error).message);
  usage(EXIT.usage);
}
const verbose = options.values.verbose === true;

/**
 * xswarm supports Node 22 and 24. On an older Node (20, past its end of life) the SQLite driver
 * (better-sqlite3 13) cannot load, so there the demo runs in memory and says so, rather than
 * crash; what needs a database (`--db`, `--crash-after-turn`) is refused.
 */
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/** Runs the example the arguments name; resolves with the exit code. */
async function main(): Promise<number> {
  const { values, positionals } = options;
  if (values.help) usage(EXIT.ok);
  if (NODE_MAJOR < 22 && !values.memory) {
    if (values.db !== undefined || values['crash-after-turn'] !== undefined) {
      console.error(`Node ${process.version}: xswarm needs Node 22 or 24 for SQLite (--db, --crash-after-turn)`);
      return EXIT.usage;
    }
    console.error(`Node ${process.version} is past its end of life; xswarm supports Node 22 and 24. The demo runs in memory here (no SQLite).`);
    values.memory = true;
  }
  const name = positionals[0] ?? Object.keys(EXAMPLES)[0]!;
  const crashTurn = values['crash-after-turn'] === undefined ? undefined : Number(values['crash-after-turn']);
  if (crashTurn !== undefined && !(Number.isInteger(crashTurn) && crashTurn > 0)) {
    console.error(`--crash-after-turn takes a turn number (1, 2, …), not "${values['crash-after-turn']}"`);
    usage(EXIT.usage);
  }
  if (crashTurn !== undefined && (values.memory || name === TEAM_EXAMPLE)) {
    console.error('--crash-after-turn needs a swarm example on SQLite (a crash loses what --memory holds)');
    usage(EXIT.usage);
  }
  const dbPath = values.db ?? (process.env.XSWARM_DB || DEFAULT_DB_PATH);
  if (name === TEAM_EXAMPLE) {
    // A team, not a swarm: it narrates its own event stream and prints its metrics.
    const store = values.memory ? memoryStore() : sqliteStore(dbPath);
    try {
      return await runTeamExample({ store });
    } finally {
      await store.close();
    }
  }
  const example = EXAMPLES[name];
  if (!example) {
    console.error(`Unknown example "${name}".`);
    usage(EXIT.usage);
  }
  const text = positionals.slice(1).join(' ') || example.defaultInput;
  /** The command that continues this example's unfinished swarm, for the messages below. */
  const again = ['npm start --', name, ...(values.db === undefined ? [] : ['--db', shellQuote(values.db)])].join(' ');

  // State lives in SQLite, so a demo killed mid-run continues where it stopped on the next
  // `npm start`. A short lease lets the next process take the swarm over quickly.
  let target: string | undefined;
  const sqlite = values.memory ? undefined : sqliteStore(dbPath);
  const store: SwarmStore =
    sqlite === undefined
      ? memoryStore()
      : crashTurn === undefined
        ? sqlite
        : crashAfterTurn(sqlite, {
            turn: crashTurn,
            swarmId: () => target,
            message: (id) => `\n✗ crash: turn ${crashTurn} of swarm ${id} is stored; killing this process with SIGKILL (as kill -9 would)\n  continue it with: ${again}`,
          });
  const { runtime, swarm, model, offline } = example.setup({ store, leaseMs: 2_000 });
  console.log(`example: ${name} (${example.description})`);
  console.log(offline ? 'model: offline scripted demo (set OPENAI_API_KEY to use OpenAI)' : `model: OpenAI ${model.name}`);

  const human = new Human(answerSource({ autoAnswer: values['auto-answer'] === true }));
  await runtime.start();
  // A crash demo always starts afresh, so it crashes at its turn whatever the database holds.
  const [unfinished] = crashTurn === undefined ? await runtime.list({ definitionId: swarm.id, status: ['running', 'awaitingHandoff', 'paused'] }) : [];
  const client = runtime.forSwarm(swarm, unfinished?.swarmId);
  target = client.swarmId;
  // Ctrl-C stops a running swarm properly, so the stream still ends with its final event; at a
  // question it only stops asking: the swarm stays paused, to be answered on the next run.
  let asking = false;
  process.on('SIGINT', () => (asking ? human.close() : void client.stop('interrupted (Ctrl-C)').catch(() => undefined)));
  /** Asks the human for `asked`, if still paused (its question is on the line just printed); false when no answer came. */
  const answer = async (asked: SwarmClient): Promise<boolean> => {
    if ((await asked.getResult()).status !== 'paused') return true;
    endStream();
    asking = true;
    const reply = await human.ask().finally(() => (asking = false));
    if (reply === undefined) return false;
    await asked.resume(reply);
    return true;
  };
  try {
    if (unfinished) {
      const how = unfinished.status === 'paused' ? 'paused earlier, waiting for an answer' : 'interrupted earlier';
      console.log(`continuing swarm ${unfinished.swarmId}, ${how} (${sqlite ? sqlite.path : 'memory'})`);
    } else await client.run(example.toInput ? example.toInput(text) : text);
    console.log(`swarm ${client.swarmId}`);
    for await (const event of client.events()) {
      print(event);
      // A child swarm waiting for its human is answered the same way, through its own client.
      const child = factOf(event, 'child-swarm');
      const answered = factOf(event, 'paused')
        ? await answer(client)
        : child?.lifecycle === 'paused'
          ? await answer(runtime.forSwarm(child.definitionId, child.childSwarmId))
          : true;
      if (!answered) {
        console.error(
          sqlite
            ? `swarm ${client.swarmId} waits for an answer (state in ${sqlite.path}); answer it with: ${again}`
            : `swarm ${client.swarmId} was paused, and --memory keeps nothing: it ends with this process`,
        );
        return EXIT.paused;
      }
    }
    endStream();
    const result = await client.getResult();
    if (result.status === 'completed') {
      console.log(JSON.stringify(result.result, null, 2));
      return EXIT.ok;
    }
    console.error(result.status === 'failed' || result.status === 'stopped' ? `${result.status}: ${result.reason}` : `ended ${result.status}`);
    return EXIT.failed;
  } catch (error) {
    endStream();
    console.error(error instanceof Error ? error.message : error);
    return EXIT.failed;
  } finally {
    human.close();
    await runtime.close();
    await store.close();
  }
}

// ---- printing ----------------------------------------------------------------------------

/** The artifact id of the text stream being printed on the current line, if any. */
let openStream: string | undefined;

function endStream(): void {
  if (openStream) process.stdout.write('\n');
  openStream = undefined;
}

function print(e: SwarmEvent): void {
  if (e.kind === 'artifact-update' && e.artifact.name === 'stream') {
    // Chunks of one stream go on one line, as they arrive.
    const chunk = e.artifact.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
    // A chunk that does not append starts the text afresh (a re-issued model call).
    if (openStream !== e.artifact.artifactId || !e.append) {
      endStream();
      process.stdout.write(`${tag(e)} ${e.metadata?.agent ?? '?'} ▸ `);
      openStream = e.artifact.artifactId;
    }
    process.stdout.write(chunk.replace(/\s+/g, ' '));
    return;
  }
  const line = describe(e);
  if (line === undefined) return;
  endStream();
  console.log(`${tag(e)} ${line}`);
}

function tag(e: SwarmEvent): string {
  return `[${String(e.seq).padStart(3)}]`;
}

/** One readable line for an event, or undefined to skip it. */
function describe(e: SwarmEvent): string | undefined {
  switch (e.kind) {
    case 'task':
      // The input is the first message of the task's history; it always has a text part.
      return `submitted to ${e.metadata.definitionId}: ${short(e.history?.[0]?.parts.find((p) => p.kind === 'text')?.text)}`;
    case 'artifact-update':
      return verbose ? `artifact ${e.artifact.name}` : undefined;
    case 'status-update':
      return fact(e);
    case 'internal:llm-call': {
      const calls = e.response.toolCalls?.map((c) => c.name).join(', ');
      return verbose ? `· llm ${e.agent} turn ${e.turn} (${Math.round(e.durationMs)} ms)${calls ? ` → ${calls}` : ' → text'}` : undefined;
    }
    case 'internal:tool-start':
      return verbose ? `· ${e.agent} tool ${e.toolName}(${e.arguments})` : undefined;
    case 'internal:tool-complete':
      return verbose ? `· ${e.agent} tool ${e.toolName} ${e.ok ? 'ok' : 'FAILED'}: ${short(e.content)}` : undefined;
    case 'internal:checkpoint':
      return verbose ? `· checkpoint ${e.step}` : undefined;
    default:
      return verbose ? `· ${(e as { kind: string }).kind}` : undefined;
  }
}

function fact(e: SwarmEvent): string | undefined {
  const handoff = factOf(e, 'agent-handoff');
  if (handoff) return `${handoff.from} → ${handoff.to}: ${short(handoff.request)}`;
  const toSwarm = factOf(e, 'swarm-handoff');
  if (toSwarm) return `${toSwarm.from} ⇒ swarm ${toSwarm.to} (${toSwarm.childSwarmId}): ${short(toSwarm.input)}`;
  const child = factOf(e, 'child-swarm');
  if (child) return `  ↳ child ${child.definitionId} ${child.lifecycle}${child.reason ? `: ${child.reason}` : ''}`;
  const back = factOf(e, 'handoff-result');
  if (back) return `${back.from} → ${back.to}: ${back.ok ? 'answered' : 'failed'}`;
  const call = factOf(e, 'tool-call');
  if (call) return `${call.agent} calls ${call.toolName}`;
  const turn = factOf(e, 'turn-completed');
  if (turn) return `turn ${turn.turn}/${turn.maxTurns} done (${turn.activeAgent})`;
  const paused = factOf(e, 'paused');
  if (paused) return `⏸ paused (${paused.reason.type}): ${paused.reason.message}`;
  const resumed = factOf(e, 'resumed');
  if (resumed) return `▶ resumed${resumed.message ? `: ${short(resumed.message)}` : ''}`;
  const started = factOf(e, 'started');
  if (started) return `started ${started.definitionId}`;
  if (factOf(e, 'completed')) return '✓ completed';
  const failed = factOf(e, 'failed');
  if (failed) return `✗ failed: ${failed.reason}`;
  const stopped = factOf(e, 'stopped');
  if (stopped) return `■ stopped: ${stopped.reason}`;
  return undefined;
}

/** A value quoted on one line, cut to a readable length. */
function short(value: unknown, max = 100): string {
  const s = (JSON.stringify(value) ?? String(value)).replace(/\s+/g, ' ');
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** Quotes a shell word when it needs it, for the commands printed to copy. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function usage(exitCode: number): never {
  const out = exitCode === 0 ? console.log : console.error;
  out(`usage: npm start [-- <example> [input…]] [options]

options:
  --verbose, -v            also print model calls, tool calls and checkpoints
  --db PATH                the SQLite file that holds the swarms (default: XSWARM_DB, else ${DEFAULT_DB_PATH})
  --memory                 keep nothing: no database
  --auto-answer            nobody answers the swarm's questions: the model is told so and decides itself
  --crash-after-turn N     start a new swarm and kill this process (SIGKILL) right after its turn N is
                           stored; the same command without this option then continues it

A swarm that pauses for a human (content-pipeline asks its editor to approve) asks:
  in a terminal at a prompt; with stdin piped or from a file, its next line is the answer
  (echo reject | npm start -- content-pipeline); when that input ends without an answer, the
  swarm stays paused (exit 3) and the next npm start of that example asks again; with
  --auto-answer, or with no stdin at all (< /dev/null, as under CI), the model decides itself.
An unfinished swarm of the example (crashed, stopped at a question) continues on the next run.

examples:`);
  for (const [n, e] of Object.entries(EXAMPLES)) out(`  ${n.padEnd(20)} ${e.description}`);
  out(`  ${TEAM_EXAMPLE.padEnd(20)} A team of database, api and frontend workers builds a PRD's user stories (metrics, speedup)`);
  process.exit(exitCode);
}

// Explicit exit: an HTTP keep-alive socket of the model client must not keep the process alive.
process.exit(await main());
