/**
 * Where `npm start` gets a human's answer when a swarm pauses to ask one (the content
 * pipeline's editor approval, a child swarm's question):
 * - stdin is a terminal: a prompt;
 * - stdin is a pipe or a file (`echo reject | npm start -- content-pipeline`): its next line;
 *   when it ends before an answer, there is none and the swarm stays paused;
 * - `--auto-answer`, or no stdin at all (`< /dev/null`, a CI job, a process started without
 *   one): the model is told no human is available and decides on its own.
 *
 * @module
 */
import { fstatSync } from 'node:fs';
import { createInterface, type Interface } from 'node:readline';
import { isatty } from 'node:tty';

/**
 * What the model reads as the human's answer when nobody answers (`--auto-answer`, no stdin).
 *
 * @example
 * await client.resume(NO_HUMAN);
 */
export const NO_HUMAN = 'No human is available; use your best judgement and continue.';

/**
 * Where answers come from: a terminal prompt, the lines of piped stdin, or nobody.
 *
 * @example
 * const source: AnswerSource = answerSource({ autoAnswer: false }); // 'stdin' under `echo approve | npm start …`
 */
export type AnswerSource = 'terminal' | 'stdin' | 'nobody';

/**
 * Where this process reads answers from. A pipe, a file or a socket on fd 0 is input a user
 * gave on purpose, so it is read even without a terminal; `/dev/null` (or a closed fd 0) is
 * the absence of a human, as under CI.
 *
 * @example
 * answerSource({ autoAnswer: true }) // 'nobody'
 */
export function answerSource(options: { autoAnswer: boolean }): AnswerSource {
  if (options.autoAnswer) return 'nobody';
  if (isatty(0)) return 'terminal';
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isFile() || stat.isSocket() ? 'stdin' : 'nobody';
  } catch {
    // fd 0 closed: no stdin at all.
    return 'nobody';
  }
}

/**
 * The human's answers, one line each, read from the {@link AnswerSource}. stdin is opened at
 * the first question only, so a swarm that never asks leaves it alone.
 *
 * @example
 * const human = new Human(answerSource({ autoAnswer: false }));
 * const answer = await human.ask(); // undefined: stdin ended without one
 * human.close();
 */
export class Human {
  private rl: Interface | undefined;
  private readonly lines: string[] = [];
  private ended = false;
  private waiter: ((line: string | undefined) => void) | undefined;

  constructor(readonly source: AnswerSource) {}

  /**
   * The answer to the question just printed (the narration shows it: it is not repeated):
   * {@link NO_HUMAN} when nobody answers, else the next line typed or piped in; undefined once
   * stdin has ended (or was closed by {@link close}) without one.
   */
  ask(): Promise<string | undefined> {
    if (this.source === 'nobody') return Promise.resolve(NO_HUMAN);
    const tty = this.source === 'terminal';
    this.open(tty);
    const line = this.lines.shift();
    if (line !== undefined || this.ended) return Promise.resolve(this.echoed(line, tty));
    if (tty) this.rl!.prompt();
    return new Promise((resolve) => (this.waiter = (l) => resolve(this.echoed(l, tty))));
  }

  /** Stops reading: a pending question gets no answer. */
  close(): void {
    this.rl?.close();
    this.finish();
  }

  /**
   * A piped answer, shown after a prompt as if typed, so the output reads as a dialogue; in a
   * terminal, Ctrl-D at the prompt ends its line.
   */
  private echoed(line: string | undefined, tty: boolean): string | undefined {
    if (!tty) process.stdout.write(line === undefined ? '> (stdin ended without an answer)\n' : `> ${line}\n`);
    else if (line === undefined) process.stdout.write('\n');
    return line;
  }

  private open(tty: boolean): void {
    if (this.rl || this.ended) return;
    this.rl = createInterface({ input: process.stdin, output: tty ? process.stdout : undefined, terminal: tty, prompt: '> ' });
    this.rl.on('line', (line) => {
      const waiter = this.waiter;
      this.waiter = undefined;
      if (waiter) waiter(line);
      else this.lines.push(line);
    });
    this.rl.on('close', () => this.finish());
    // Ctrl-C at the prompt reaches readline, not the process: pass it on as the signal.
    this.rl.on('SIGINT', () => process.emit('SIGINT'));
  }

  private finish(): void {
    this.ended = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(undefined);
  }
}
