/**
 * What the instrumented tools and the testing model of one path run share: the path, the ledger,
 * the tool overrides, and the external pause or stop a path makes in the middle of a call.
 *
 * @module
 */
import type { SwarmClient } from '../client/client.js';
import type { SwarmStore } from '../store/types.js';
import type { EffectLedger, TestToolContext } from './effects.js';
import type { SwarmPath } from './paths.js';
import type { SwarmShape } from './shape.js';

/** A replacement for a tool's `execute` in the tests: its arguments and a {@link TestToolContext}. */
export type ToolOverride = (args: any, ctx: TestToolContext) => unknown;

/** How long a call interrupted by an external pause or stop waits for its signal to abort. */
const ABORT_WAIT_MS = 5_000;

/** The state of one path run, shared by its tools and its model (see the module comment). */
export class PathRun {
  /** The store the swarm is durable in (the interrupt reads it), set per runtime. */
  store!: SwarmStore;
  /** The client of the swarm on the current runtime (the interrupt uses it), set per runtime. */
  client!: SwarmClient;

  constructor(
    readonly path: SwarmPath,
    readonly shape: SwarmShape,
    readonly swarmId: string,
    readonly ledger: EffectLedger,
    readonly overrides: Readonly<Record<string, ToolOverride>>,
  ) {}

  /** Whether the path makes `tool` of `owner` fail. */
  errs(owner: string, tool: string): boolean {
    return this.path.steps.some(
      (s) =>
        (s.do === 'tool' && s.outcome === 'error' && s.tool.owner === owner && s.tool.tool.name === tool) ||
        (s.do === 'handoff' && s.agentTool?.outcome === 'error' && s.agentTool.tool.owner === owner && s.agentTool.tool.tool.name === tool),
    );
  }

  /** Whether the path's external pause or stop happens in a call of `tool` of `owner` (else in the first model call). */
  interruptsTool(owner: string, tool: string): boolean {
    const first = this.path.steps[0];
    if (!this.path.control.midCall || !first) return false;
    const t = first.do === 'tool' ? first.tool : first.do === 'handoff' ? first.agentTool?.tool : undefined;
    return t !== undefined && t.owner === owner && t.tool.name === tool;
  }

  /** Whether the path's external pause or stop happens in the orchestrator's first model call. */
  interruptsModel(): boolean {
    const first = this.path.steps[0];
    if (!this.path.control.midCall || !first) return false;
    return !(first.do === 'tool' || (first.do === 'handoff' && first.agentTool));
  }

  /**
   * The external pause or stop in the middle of a call: made once (unless the store already
   * holds it: a restart runs the call again), then the call waits for its signal to abort, as
   * a pause or a stop must make it.
   */
  async interrupt(signal: AbortSignal): Promise<void> {
    const action = this.path.control.midCall;
    if (!action) return;
    const events = await this.store.readEvents(this.swarmId, 0);
    const made = events.some((e) => e.kind === 'status-update' && (e.metadata.type === 'paused' || e.metadata.type === 'stopped'));
    if (made) return;
    const client = this.client;
    if (action === 'pause') {
      // A pause waits for the calls in flight to end (they are not aborted): the call goes on.
      void client.pause('paused by the test path').catch(() => undefined);
      return;
    }
    void client.stop('stopped by the test path').catch(() => undefined);
    await new Promise<never>((_, reject) => {
      const timer = setTimeout(() => reject(new Error(`the call was not aborted ${ABORT_WAIT_MS} ms after an external ${action}`)), ABORT_WAIT_MS);
      const abort = () => {
        clearTimeout(timer);
        reject(signal.reason instanceof Error ? signal.reason : new Error(`aborted by the external ${action}`));
      };
      if (signal.aborted) abort();
      else signal.addEventListener('abort', abort, { once: true });
    });
  }
}
