/**
 * `xswarm run <module> <definition> [input]`: starts a swarm in this process and follows it to
 * its end, showing its progress; a pause asks the human on stdin. Also the loop `xswarm resume`
 * drives a swarm with after resuming it.
 *
 * @module
 */
import { createInterface, type Interface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { PendingApproval } from '../../machines/approvals.js';
import { answerApproval, approvalHint, approvalQuestion, nextApproval } from './approval-answers.js';
import type { PauseReason } from '../../machines/events.js';
import type { SwarmClient } from '../client/client.js';
import type { SwarmDefinition } from '../define/swarm.js';
import type { Runtime } from '../runtime/types.js';
import type { SwarmResult } from '../store/result.js';
import { xswarmCommand } from './invocation.js';
import { CliError, EXIT, loadModule, moduleRuntime, openState, shellQuote, STATE_OPTIONS } from './module.js';
import { Progress } from './progress.js';

/** `xswarm run`; resolves with the exit code. */
export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...STATE_OPTIONS, id: { type: 'string' }, json: { type: 'boolean' } },
  });
  const [path, definitionId, text, ...extra] = positionals;
  if (!path || !definitionId) throw new CliError('which module and swarm? xswarm run <module> <definition> [input]', EXIT.usage);
  if (extra.length > 0) throw new CliError(`unexpected arguments: ${extra.join(' ')} (quote the input: xswarm run ${path} ${definitionId} "…")`, EXIT.usage);
  const mod = await loadModule(path);
  const definition = mod.swarms.find((s) => s.id === definitionId);
  if (!definition) {
    throw new CliError(`${path} defines no swarm "${definitionId}"; it defines: ${mod.swarms.map((s) => s.id).join(', ')}`, EXIT.notFound);
  }
  const state = await openState(values, 'run');
  let runtime: Runtime | undefined;
  try {
    // This process exits once its swarm is done: it takes no other runtime's calls.
    runtime = await moduleRuntime(state, mod, state.store, { serve: false });
    const client = values.id === undefined ? runtime.forSwarm(definitionId) : runtime.forSwarm(definitionId, values.id);
    const progress = Progress.for(process.stdout, { json: values.json === true });
    await client.run(inputFor(definition, text));
    return await drive(runtime, client, 0, progress, { module: path, state: state.args });
  } finally {
    await runtime?.close();
    await state.close();
  }
}

/**
 * The input of a run: the text as given, or, when the definition's input schema refuses the
 * text but accepts it parsed as JSON, the parsed value (a structured input on the command line).
 */
function inputFor(definition: SwarmDefinition, text: string | undefined): unknown {
  if (text === undefined || definition.input.safeParse(text).success) return text;
  try {
    const parsed: unknown = JSON.parse(text);
    return definition.input.safeParse(parsed).success ? parsed : text;
  } catch {
    return text;
  }
}

/** The module, and the options naming where the swarm lives, for the `xswarm resume` line suggested when it stays paused. */
export interface ResumeHint {
  module: string;
  state: readonly string[];
}

/**
 * Follows a swarm this runtime drives from event `since` to its end, writing its progress. A
 * pause (the swarm's own, or a child swarm's question to its human) asks for the answer on
 * stdin and resumes with it. Resolves with the exit code: 0 completed, 1 failed or stopped,
 * 3 left paused (stdin ended, or Ctrl-C paused it), with the command that continues it on stderr.
 */
export async function drive(runtime: Runtime, client: SwarmClient, since: number, progress: Progress, hint: ResumeHint): Promise<number> {
  const answers = new StdinAnswers();
  let interrupted = false;
  const interrupt = () => {
    // A second Ctrl-C does not wait: the swarm stays as stored, its lease runs out.
    if (interrupted) process.exit(130);
    interrupted = true;
    answers.close();
    void client.pause({ type: 'EMERGENCY', message: 'Interrupted from the terminal (Ctrl-C)' }).catch(() => undefined);
  };
  process.on('SIGINT', interrupt);
  let waiting: { swarmId: string; type: PauseReason['type']; approval?: PendingApproval } | undefined;
  try {
    for await (const e of client.events({ since })) {
      progress.event(e);
      if (e.kind !== 'status-update') continue;
      const fact = e.metadata;
      // The swarm's own pause, or a child swarm waiting for its own human while the parent waits on it.
      const asking =
        fact.type === 'paused' || fact.type === 'approval'
          ? client
          : fact.type === 'child-swarm' && fact.lifecycle === 'paused'
            ? runtime.forSwarm(fact.definitionId, fact.childSwarmId)
            : undefined;
      if (!asking) continue;
      const state = await asking.getResult();
      // Already answered (a child paused with its parent, resumed with it), or the parent is paused itself.
      if (state.status !== 'paused' || (asking !== client && (await client.getResult()).status === 'paused')) continue;
      // The progress line showed the question, unless every event goes out as JSON.
      // A pause for approvals asks about each call in turn (approval-answers.ts).
      const approval = nextApproval(state);
      const question = approval ? approvalQuestion(approval) : progress.json ? state.reason.message : undefined;
      const answer = interrupted ? undefined : await answerOrElsewhere(answers, asking, question);
      // Resumed (or stopped) meanwhile by a command from another process (over NATS).
      if (answer === ELSEWHERE) continue;
      if (answer === undefined) {
        waiting = { swarmId: asking.swarmId, type: state.reason.type, ...(approval ? { approval } : {}) };
        break;
      }
      if (approval) await answerApproval(asking, approval, answer);
      else await asking.resume(answer);
    }
  } finally {
    process.off('SIGINT', interrupt);
    answers.close();
  }
  if (waiting) {
    // The question is on the screen already; what is left to say is how to answer it later.
    const where = hint.state.map((a) => ` ${shellQuote(a)}`).join('');
    const answer = waiting.type === 'EMERGENCY' ? '' : ` '<answer>'`;
    if (waiting.approval) {
      const rest = ` --module ${shellQuote(hint.module)}${where}`;
      process.stderr.write(
        `xswarm: swarm ${waiting.swarmId} stays paused for approval; answer it with:\n${approvalHint(xswarmCommand(), shellQuote(waiting.swarmId), waiting.approval, rest)}`,
      );
      return EXIT.paused;
    }
    process.stderr.write(
      `xswarm: swarm ${waiting.swarmId} stays paused; continue it with:\n` +
        `  ${xswarmCommand()} resume ${shellQuote(waiting.swarmId)}${answer} --module ${shellQuote(hint.module)}${where}\n`,
    );
    return EXIT.paused;
  }
  const result = await client.getResult();
  progress.result(result);
  return exitCodeOfResult(result);
}

/** What {@link answerOrElsewhere} resolves with when the swarm left its pause without this human. */
const ELSEWHERE = Symbol('answered elsewhere');

/** How often a pending question checks whether the swarm was resumed from elsewhere. */
const ELSEWHERE_POLL_MS = 300;

/**
 * The human's answer to a paused swarm's question, or {@link ELSEWHERE} once the swarm is no
 * longer paused: with NATS another process may resume or stop it (`xswarm resume <id> --nats`),
 * and the question is then withdrawn instead of waiting on stdin forever.
 */
async function answerOrElsewhere(answers: StdinAnswers, asking: SwarmClient, question: string | undefined): Promise<string | undefined | typeof ELSEWHERE> {
  let done = false;
  const elsewhere = (async () => {
    while (!done) {
      await new Promise((resolve) => setTimeout(resolve, ELSEWHERE_POLL_MS));
      const now = done ? undefined : await asking.getResult().catch(() => undefined);
      if (now && now.status !== 'paused') return ELSEWHERE;
    }
    return undefined;
  })();
  try {
    const answer = await Promise.race([answers.ask(question, asking.swarmId), elsewhere.then((e) => e ?? new Promise<never>(() => {}))]);
    if (answer === ELSEWHERE) {
      answers.withdraw();
      process.stderr.write(`xswarm: swarm ${asking.swarmId} went on without this answer (resumed or stopped elsewhere)\n`);
    }
    return answer;
  } finally {
    done = true;
  }
}

/** 0 for a completed swarm, 3 for a paused one, else 1 (failed, stopped). */
function exitCodeOfResult(result: SwarmResult): number {
  if (result.status === 'completed') return EXIT.ok;
  return result.status === 'paused' ? EXIT.paused : EXIT.failed;
}

/**
 * The human's answers, one line of stdin each. In a terminal the answer is asked for with a
 * prompt; from a pipe or a file the next line is read. Undefined when stdin has ended (or was
 * closed by Ctrl-C). stdin is opened at the first question only. The question itself is the
 * progress line just written; it is repeated on stderr only when that line is JSON.
 */
class StdinAnswers {
  private rl: Interface | undefined;
  private readonly lines: string[] = [];
  private ended = false;
  private waiter: ((line: string | undefined) => void) | undefined;

  ask(question: string | undefined, swarmId: string): Promise<string | undefined> {
    const tty = process.stdin.isTTY === true;
    if (question !== undefined) process.stderr.write(`xswarm: swarm ${swarmId} asks: ${question}\n`);
    if (!tty) process.stderr.write(`xswarm: reading the answer to swarm ${swarmId} from stdin\n`);
    this.open(tty);
    const line = this.lines.shift();
    if (line !== undefined || this.ended) return Promise.resolve(line);
    if (tty) this.rl!.prompt();
    return new Promise((resolve) => (this.waiter = resolve));
  }

  close(): void {
    this.rl?.close();
    this.finish();
  }

  /** Forgets the pending question (answered elsewhere): a line typed now answers the next one. */
  withdraw(): void {
    this.waiter = undefined;
  }

  private open(tty: boolean): void {
    if (this.rl || this.ended) return;
    this.rl = createInterface({ input: process.stdin, output: tty ? process.stderr : undefined, terminal: tty, prompt: 'answer (Ctrl-D leaves it paused)> ' });
    this.rl.on('line', (line) => {
      const waiter = this.waiter;
      this.waiter = undefined;
      if (waiter) waiter(line);
      else this.lines.push(line);
    });
    this.rl.on('close', () => this.finish());
    // Ctrl-C at the prompt: the terminal sends it to readline, not as a signal.
    this.rl.on('SIGINT', () => process.emit('SIGINT'));
  }

  private finish(): void {
    this.ended = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    // Ctrl-D at the prompt: end the prompt's line before what is printed next.
    if (waiter && this.rl?.terminal) process.stderr.write('\n');
    waiter?.(undefined);
  }
}
