/**
 * The scripted model of the team example: each worker's task swarm answers with what it built
 * for its user story after a simulated think, and one story's first attempt stalls for good
 * (the worker "crashes": no progress, no heartbeat) so the team respawns that worker.
 *
 * @module
 */
import { scriptedModel, type Model, type ModelRequest } from '../../src/index.js';

/** Options of {@link prdModel}. */
export interface PrdModelOptions {
  /** Thinking time of one task (ms). Default 120. */
  latencyMs?: number;
  /** The story whose first attempt stalls until its worker is given up (default `ui-login`; '' for none). */
  crashOn?: string;
}

/** The story a task swarm works on: its swarm id is `<team>:<story>:<attempt>`. */
export function storyOf(req: ModelRequest): { story: string; attempt: number } {
  const [, story = '?', attempt = '1'] = req.swarmId.split(':');
  return { story, attempt: Number(attempt) };
}

/** A model for the PRD build; `calls` counts the model calls per story. */
export function prdModel(options: PrdModelOptions = {}): Model & { calls: Map<string, number> } {
  const latencyMs = options.latencyMs ?? 120;
  const crashOn = options.crashOn ?? 'ui-login';
  const calls = new Map<string, number>();
  const model = scriptedModel(async (req) => {
    const { story, attempt } = storyOf(req);
    calls.set(story, (calls.get(story) ?? 0) + 1);
    const stall = story === crashOn && attempt === 1;
    await new Promise<void>((resolve, reject) => {
      // A stalled call waits until its worker is replaced (the abort), like a hung process.
      const timer = setTimeout(resolve, stall ? 600_000 : latencyMs);
      req.signal.addEventListener('abort', () => (clearTimeout(timer), reject(req.signal.reason)), { once: true });
    });
    return { text: `${req.agentId} implemented ${story} (attempt ${attempt})` };
  });
  return Object.assign(model, { calls });
}
