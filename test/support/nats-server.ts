/**
 * A real `nats-server -js` for tests: started on 127.0.0.1 on a port of the kernel's choosing
 * (`-p -1`, no pick-then-bind race), its port read from the ports file it writes, stopped by the
 * test. `restart()` brings it back on the same port with the same store directory (JetStream
 * state kept), as an operator restarting the server would.
 *
 * When the binary is missing locally, {@link natsServerMissing} says why and suites skip; in CI
 * (`CI` set) a missing binary is an error, since `.ci/run` installs it.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './sleep.js';

/** Why NATS suites cannot run here, or undefined when `nats-server` is on the PATH. */
export const natsServerMissing: string | undefined = (() => {
  try {
    execFileSync('nats-server', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    if (process.env.CI) throw new Error('nats-server is not installed: .ci/run installs it with apt-get (package nats-server)');
    return 'nats-server is not installed (apt-get install -y nats-server); NATS suites are skipped';
  }
})();

/** A running test server. */
export interface NatsServer {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** The JetStream store directory (kept across restarts, removed by `stop`). */
  readonly storeDir: string;
  readonly pid: number;
  /** SIGKILL, then start again on the same port and store directory. */
  restart(options?: { downMs?: number }): Promise<void>;
  /** Kills the server (SIGKILL) and leaves it down. */
  kill(): Promise<void>;
  /** Starts it again after `kill` (same port, same store). */
  start(): Promise<void>;
  /** Stops it and removes its store directory. */
  stop(): Promise<void>;
}

/**
 * Starts `nats-server -js` on 127.0.0.1. `config` is extra configuration text (accounts, for
 * the isolation tests) written to a file passed with `-c`.
 */
export async function startNatsServer(options: { config?: string } = {}): Promise<NatsServer> {
  const storeDir = mkdtempSync(join(tmpdir(), 'xswarm-nats-'));
  const configFile = options.config === undefined ? undefined : join(storeDir, 'server.conf');
  if (configFile) writeFileSync(configFile, options.config!);
  let child: ChildProcess | undefined;
  let port = -1;

  const launch = async (): Promise<void> => {
    for (const f of readdirSync(storeDir)) if (f.endsWith('.ports')) rmSync(join(storeDir, f));
    const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, '--ports_file_dir', storeDir];
    if (configFile) args.push('-c', configFile);
    const proc = spawn('nats-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let log = '';
    proc.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const ports = readdirSync(storeDir).find((f) => f.endsWith('.ports'));
      if (ports && log.includes('Server is ready')) {
        // The file may be caught half written: read it again on the next tick.
        const written = parsePorts(readFileSync(join(storeDir, ports), 'utf8'));
        if (written) {
          port = Number(new URL(written[0]!).port);
          return;
        }
      }
      if (proc.exitCode !== null) throw new Error(`nats-server exited (${proc.exitCode}): ${log}`);
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`nats-server did not become ready in 10 s: ${log}`);
      }
      await sleep(10);
    }
  };
  const kill = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  };

  await launch();
  return {
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    storeDir,
    get pid() {
      return child?.pid ?? -1;
    },
    async restart({ downMs = 0 } = {}) {
      await kill();
      if (downMs > 0) await sleep(downMs);
      await launch();
    },
    kill,
    start: launch,
    async stop() {
      await kill();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/** The client URLs of a ports file, or undefined while it is incomplete. */
function parsePorts(text: string): string[] | undefined {
  try {
    const { nats } = JSON.parse(text) as { nats?: string[] };
    return nats && nats.length > 0 ? nats : undefined;
  } catch {
    return undefined;
  }
}
