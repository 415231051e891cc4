/**
 * How `xswarm serve` and `xswarm worker` stop on SIGTERM (or SIGINT): they drain their runtime
 * (`runtime.drain`, see src/runtime/drain.ts) within `--drain-ms`, so the swarms they hold park
 * at a step boundary and other processes adopt them at once; a second signal exits at once.
 *
 * @module
 */
import { CliError, EXIT } from './module.js';

/** The `--drain-ms` option of the long-running commands. */
export const DRAIN_OPTIONS = { 'drain-ms': { type: 'string' } } as const;

/** The drain deadline by default, in ms (as `runtime.drain`'s). */
export const DEFAULT_DRAIN_FLAG_MS = 10_000;

/** `--drain-ms` checked: a whole number of ms from 0 up, default {@link DEFAULT_DRAIN_FLAG_MS}. */
export function drainMs(value: string | undefined): number {
  if (value === undefined) return DEFAULT_DRAIN_FLAG_MS;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 0) throw new CliError(`--drain-ms takes a whole number of ms, not "${value}"`, EXIT.usage);
  return ms;
}

/**
 * Called once the first signal arrived: from now on a second SIGINT or SIGTERM exits at once
 * (128 + the signal's number, as a shell reports it), and so does the deadline should the
 * drain overrun it (exit 1), since a process manager waits for the exit, not for the drain.
 */
export function exitAtSecondSignal(deadlineMs: number): () => void {
  const now = (signal: NodeJS.Signals) => {
    process.stderr.write(`xswarm: ${signal} again, exiting now\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', now);
  process.once('SIGTERM', now);
  // Closing after the drain (the server, the store) is given a little more than the drain.
  const overrun = setTimeout(() => {
    process.stderr.write(`xswarm: the drain did not end within ${deadlineMs} ms, exiting\n`);
    process.exit(EXIT.failed);
  }, deadlineMs + 1_000);
  overrun.unref();
  return () => {
    clearTimeout(overrun);
    process.off('SIGINT', now);
    process.off('SIGTERM', now);
  };
}
