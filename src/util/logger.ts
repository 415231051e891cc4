/**
 * Structured logs: the {@link Logger} a caller passes (`createRuntime({ logger })`), shaped as
 * pino's (`logger.info({ swarmId }, 'swarm started')`), so a pino, bunyan-style or hand-made
 * logger fits as it is. The library is silent unless given one; {@link jsonLogger} writes JSON
 * lines at a level, for the CLI's long-running commands.
 *
 * @module
 */

/** The levels, least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** A log level: `debug`, `info`, `warn` or `error`. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One level's method: the fields first, then the message (pino's order). */
export type LogMethod = (fields: Record<string, unknown>, message: string) => void;

/**
 * What the runtime logs through: pino-compatible. `child(bindings)`, when present, is used for
 * loggers whose every line carries the same fields.
 *
 * @example
 * import { createRuntime, type Logger } from 'xswarm';
 * // pino({ level: 'info' }) fits as it is; so does any object with these four methods.
 * const logger: Logger = {
 *   debug: () => {},
 *   info: (fields, message) => console.log(message, fields),
 *   warn: (fields, message) => console.warn(message, fields),
 *   error: (fields, message) => console.error(message, fields),
 * };
 * const runtime = createRuntime({ swarms, model, logger });
 */
export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  child?(bindings: Record<string, unknown>): Logger;
}

const nothing: LogMethod = () => {};

/** The logger of a library given none: every line dropped. */
export const silentLogger: Logger = { debug: nothing, info: nothing, warn: nothing, error: nothing };

/**
 * `logger` with each call kept from throwing into the runtime (a logger's failure must not fail
 * a swarm's step), and its methods bound (pino's methods read `this`).
 */
export function guardedLogger(logger: Logger): Logger {
  const guard = (level: LogLevel): LogMethod => {
    const method = logger[level];
    if (typeof method !== 'function') return nothing;
    return (fields, message) => {
      try {
        method.call(logger, fields, message);
      } catch {
        // The logger's own failure: the swarms go on.
      }
    };
  };
  return { debug: guard('debug'), info: guard('info'), warn: guard('warn'), error: guard('error') };
}

/** Options of {@link jsonLogger}. */
export interface JsonLoggerOptions {
  /** The least severe level written (default `'info'`). */
  level?: LogLevel;
  /** Where each line goes (default: `process.stderr`). */
  write?: (line: string) => void;
  /** Fields every line carries. */
  bindings?: Record<string, unknown>;
}

/**
 * A logger writing one JSON object per line (`{"level":"info","time":…,"msg":…,…fields}`) at
 * `level` and above: what `xswarm serve` and `xswarm worker` log to stderr.
 *
 * @example
 * import { jsonLogger } from 'xswarm';
 * const logger = jsonLogger({ level: 'debug' });
 * logger.info({ swarmId: 's1' }, 'swarm started'); // {"level":"info","time":…,"msg":"swarm started","swarmId":"s1"}
 */
export function jsonLogger(options: JsonLoggerOptions = {}): Logger {
  const least = LOG_LEVELS.indexOf(options.level ?? 'info');
  if (least < 0) throw new TypeError(`log level must be one of ${LOG_LEVELS.join(', ')}`);
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const bindings = options.bindings ?? {};
  const method =
    (level: LogLevel): LogMethod =>
    (fields, message) =>
      write(`${JSON.stringify({ level, time: Date.now(), msg: message, ...bindings, ...fields }, errorsAsText)}\n`);
  const at = (level: LogLevel): LogMethod => (LOG_LEVELS.indexOf(level) >= least ? method(level) : nothing);
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => jsonLogger({ ...options, bindings: { ...bindings, ...more } }),
  };
}

/** An Error as JSON: its message (JSON.stringify would write `{}`). */
function errorsAsText(_key: string, value: unknown): unknown {
  return value instanceof Error ? value.message : value;
}

/** Whether `value` is a log level name. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}
