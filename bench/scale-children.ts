/**
 * Child processes of the scale-out rows: any fixture of the bench script (`--fixture <name>
 * '<spec JSON>'`, see `run.ts`) started as a real process that prints JSON lines on stdout —
 * one with `ready` once it serves, one with `counts` once it stopped — and stops when its stdin
 * ends, so none outlives its row however the row ends.
 *
 * @module
 */
import { spawn } from 'node:child_process';

/** A started child: its pid (for its CPU time), its ready line, and its end. */
export interface Child {
  readonly pid: number;
  /** The `ready` line's value. */
  readonly ready: Record<string, unknown>;
  /** Ends its stdin and resolves with its `counts` line's value once it exited. */
  stop(): Promise<Record<string, number>>;
}

/**
 * Starts `fixture` with `spec` (this script again, under the same node options: the bench
 * bundle in a bench run, tsx when a row runs directly) and resolves once it printed its ready line.
 */
export async function startChild(fixture: string, spec: object): Promise<Child> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, '--fixture', fixture, JSON.stringify(spec)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiting = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiting]) w();
  };
  let buffer = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      lines.push(JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>);
      buffer = buffer.slice(nl + 1);
    }
    wake();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  void exited.then(wake);
  /** The first line with `key`, or an error once the process exited without one. */
  const line = async (key: string): Promise<unknown> => {
    for (;;) {
      const found = lines.find((l) => key in l);
      if (found) return found[key];
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${fixture} exited (${child.exitCode ?? child.signalCode}) before a "${key}" line`);
      await new Promise<void>((r) => {
        const done = () => {
          waiting.delete(done);
          r();
        };
        waiting.add(done);
      });
    }
  };
  const ready = (await line('ready')) as Record<string, unknown>;
  return {
    pid: child.pid!,
    ready,
    async stop() {
      child.stdin!.end();
      const counts = (await line('counts')) as Record<string, number>;
      await exited;
      return counts;
    },
  };
}

/**
 * Keeps the calling fixture alive until its stdin ends (its row is done, or the row's process
 * died) or SIGTERM, then runs `close`, prints `{ counts }` and exits.
 */
export function untilStdinEnds(close: () => Promise<void>, counts: () => Record<string, number>): void {
  let closing = false;
  const end = async () => {
    if (closing) return;
    closing = true;
    await close();
    process.stdout.write(`${JSON.stringify({ counts: counts() })}\n`);
    process.exit(0);
  };
  process.stdin.on('end', () => void end());
  process.stdin.resume();
  process.once('SIGTERM', () => void end());
}
