/**
 * `--log-level` of the long-running commands (`xswarm serve`, `xswarm worker`): their runtime
 * logs JSON lines to stderr at this level and above (default `info`); stdout keeps the
 * commands' own lines for people.
 *
 * @module
 */
import { isLogLevel, jsonLogger, LOG_LEVELS, type Logger } from '../util/logger.js';
import { CliError, EXIT } from './module.js';

/** The option `parseArgs` reads. */
export const LOG_LEVEL_OPTION = { 'log-level': { type: 'string' } } as const;

/** The JSON-lines logger of `--log-level` (default `info`); a level it does not know is a usage error. */
export function cliLogger(level: string | undefined): Logger {
  const chosen = level ?? 'info';
  if (!isLogLevel(chosen)) throw new CliError(`--log-level takes one of ${LOG_LEVELS.join(', ')}, not "${level}"`, EXIT.usage);
  return jsonLogger({ level: chosen });
}
