/**
 * The crash demo's fault: a store that kills this process with SIGKILL right after a given
 * turn of a swarm is durable, as `kill -9` or a power cut would, at a point that does not
 * depend on timing. The swarm's every later step is still ahead (the runtime waits for each
 * commit before its next step), so the next `npm start` has something to continue.
 *
 * @module
 */
import { writeSync } from 'node:fs';
import { factOf, type Commit, type SwarmStore } from '../../src/index.js';

/**
 * When to crash: after the commit that records turn `turn` of the swarm `swarmId()` names
 * (read at each commit, so it may be set once the swarm's id is known).
 *
 * @example
 * const crash: CrashPoint = { turn: 2, swarmId: () => client.swarmId, message: (id) => `killed during ${id}` };
 */
export interface CrashPoint {
  turn: number;
  swarmId: () => string | undefined;
  /** What to print on stderr just before dying (it is written synchronously, so it is not lost). */
  message: (swarmId: string) => string;
}

/**
 * `store`, whose commits kill the process (SIGKILL) once the commit recording `crash.turn` of
 * the swarm is written. Everything else is the store itself.
 *
 * @example
 * import { sqliteStore } from 'xswarm';
 * const store = crashAfterTurn(sqliteStore('.xswarm/state.db'), { turn: 2, swarmId: () => client.swarmId, message: () => 'crash' });
 */
export function crashAfterTurn<S extends SwarmStore>(store: S, crash: CrashPoint): S {
  const recordsTurn = (c: Commit) => c.swarmId === crash.swarmId() && c.events.some((e) => factOf(e, 'turn-completed')?.turn === crash.turn);
  const commit = async (c: Commit): Promise<void> => {
    await store.commit(c);
    if (!recordsTurn(c)) return;
    writeSync(2, `${crash.message(c.swarmId)}\n`);
    process.kill(process.pid, 'SIGKILL');
  };
  // A proxy, not a copy: the store's other members (its path, optional methods) stay as they are.
  return new Proxy(store, {
    get(target, property) {
      if (property === 'commit') return commit;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
