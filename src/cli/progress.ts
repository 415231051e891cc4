/**
 * How the CLI shows a swarm's events: one line per step that matters to a person (turns,
 * handoffs, tool calls, child swarms, pauses, the end), colored in a terminal and plain when
 * the output is a pipe or a file; or every event as one JSON line (NDJSON) for programs.
 *
 * @module
 */
import { agentOfHosted } from '../define/ids.js';
import type { SwarmEvent, SwarmFact } from '../../machines/events.js';
import type { SwarmResult } from '../store/result.js';

/** How a {@link Progress} writes. */
export interface ProgressOptions {
  /** Every event as one JSON line, nothing else on the stream. */
  json: boolean;
  /** Colors (a terminal that did not ask for `NO_COLOR`). */
  color: boolean;
  /** Every event, also those with nothing to say to a person (the `events` listing). */
  all: boolean;
}

/** Writes events and results to a stream as {@link ProgressOptions} say. */
export class Progress {
  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly options: ProgressOptions,
  ) {}

  /** The options for `stream`: colors when it is a terminal and `NO_COLOR` is not set. */
  static for(stream: NodeJS.WriteStream, options: { json?: boolean; all?: boolean }): Progress {
    const color = !options.json && stream.isTTY === true && !process.env.NO_COLOR;
    return new Progress(stream, { json: options.json === true, color, all: options.all === true });
  }

  /** Whether events go out as JSON lines (then no line shows a person the question of a pause). */
  get json(): boolean {
    return this.options.json;
  }

  /** Writes one event; bookkeeping (model calls, checkpoints, artifacts) only when every event is asked for. */
  event(e: SwarmEvent): void {
    if (this.options.json) {
      this.out.write(`${JSON.stringify(e)}\n`);
      return;
    }
    const line = describeEvent(e);
    if (line.minor && !this.options.all) return;
    this.out.write(`${this.paint('dim', String(e.seq).padStart(4))}  ${this.paint(line.tone, line.text)}\n`);
  }

  /** Writes a swarm's outcome: a completed swarm's result (text as it is, data as JSON), else nothing. */
  result(result: SwarmResult): void {
    if (this.options.json || result.status !== 'completed') return;
    const value = result.result;
    this.out.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
  }

  private paint(tone: Tone, text: string): string {
    return this.options.color && tone !== 'plain' ? `${COLORS[tone]}${text}\x1b[0m` : text;
  }
}

/** How a line is colored in a terminal. */
type Tone = 'plain' | 'dim' | 'handoff' | 'tool' | 'pause' | 'good' | 'bad';

const COLORS: Record<Exclude<Tone, 'plain'>, string> = {
  dim: '\x1b[2m',
  handoff: '\x1b[36m',
  tool: '\x1b[35m',
  pause: '\x1b[33m',
  good: '\x1b[32m',
  bad: '\x1b[31m',
};

/** A long text on one line, cut to `max` characters. */
function clip(text: string, max = 100): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** What an event says to a person: a line, its tone, and whether it is bookkeeping (`minor`). */
interface EventLine {
  tone: Tone;
  text: string;
  /** The task, model calls, tool starts, checkpoints, artifacts: shown by `xswarm events`, not by `run`. */
  minor?: true;
}

/** The line for an event. */
function describeEvent(e: SwarmEvent): EventLine {
  const minor = (text: string): EventLine => ({ tone: 'dim', text, minor: true });
  switch (e.kind) {
    case 'task':
      return minor('task submitted');
    case 'artifact-update': {
      const text = e.artifact.parts.map((p) => (p.kind === 'text' ? p.text : p.kind === 'data' ? JSON.stringify(p.data) : `[file ${p.file.name ?? ''}]`)).join(' ');
      return minor(`artifact ${e.artifact.name ?? e.artifact.artifactId}: ${clip(text)}`);
    }
    case 'internal:llm-call':
      return minor(`model answered ${e.agent} (turn ${e.turn}, ${Math.round(e.durationMs)} ms)`);
    case 'internal:tool-start':
      return minor(`tool ${e.toolName} started`);
    case 'internal:tool-complete':
      return { tone: 'tool', text: `tool ${e.toolName} ${e.ok ? 'returned' : 'failed'}: ${clip(e.content)}` };
    case 'internal:checkpoint':
      return minor(`checkpoint (${e.step})`);
    case 'status-update':
      return describeFact(e.metadata, e.swarmId);
  }
}

/**
 * A handoff's target as the user named it: `swarm <id>`, or `agent <id>` for an agent hosted by
 * another process (it runs there as a swarm of its own, under a reserved definition id).
 */
function target(definitionId: string): string {
  const agent = agentOfHosted(definitionId);
  return agent === undefined ? `swarm ${definitionId}` : `agent ${agent}`;
}

/** The line for a status update's fact. */
function describeFact(f: SwarmFact, swarmId: string): EventLine {
  switch (f.type) {
    case 'started':
      return { tone: 'plain', text: `started ${f.definitionId} (${swarmId})` };
    case 'turn-completed':
      return { tone: 'dim', text: `turn ${f.turn}/${f.maxTurns} done (${f.activeAgent})` };
    case 'agent-handoff':
      return { tone: 'handoff', text: `handoff ${f.from} → ${f.to}: ${clip(f.request)}` };
    case 'swarm-handoff':
      return { tone: 'handoff', text: `handoff ${f.from} → ${target(f.to)} (${f.childSwarmId})` };
    case 'handoff-result':
      return { tone: 'handoff', text: `${agentOfHosted(f.from) ?? f.from} answered ${f.to}${f.ok ? '' : ' (failed)'}: ${clip(f.content)}` };
    case 'child-swarm':
      return {
        tone: f.lifecycle === 'failed' ? 'bad' : f.lifecycle === 'paused' ? 'pause' : 'handoff',
        // A paused child's reason is its question, shown whole: `run` asks for the answer below it.
        text: `child ${target(f.definitionId)} (${f.childSwarmId}) ${f.lifecycle}${f.reason ? `: ${f.lifecycle === 'paused' ? f.reason : clip(f.reason)}` : ''}`,
      };
    case 'tool-call':
      return { tone: 'tool', text: `tool ${f.agent} → ${f.toolName}` };
    case 'paused':
      return { tone: 'pause', text: `paused (${f.reason.type}): ${f.reason.message}` };
    case 'resumed':
      return { tone: 'pause', text: `resumed${f.message ? `: ${clip(f.message)}` : ''}` };
    case 'extended':
      return { tone: 'pause', text: `limits raised: maxTurns ${f.maxTurns}${f.budget ? `, budget ${JSON.stringify(f.budget)}` : ''}` };
    case 'migrated':
      return { tone: 'pause', text: `migrated ${f.definitionId} from version ${f.from} to ${f.to}` };
    case 'approval':
      return { tone: 'pause', text: `${f.decision} ${f.approvalId}${f.always ? ' (always)' : ''}${f.reason ? `: ${clip(f.reason)}` : ''}` };
    case 'completed':
      return { tone: 'good', text: 'completed' };
    case 'failed':
      return { tone: 'bad', text: `failed: ${f.reason}` };
    case 'stopped':
      return { tone: 'bad', text: `stopped: ${f.reason}` };
    case 'forked':
      return { tone: 'plain', text: `forked from ${f.forkedFrom.swarmId} at seq ${f.forkedFrom.seq} (${f.sideEffects.length} recorded call(s) after it may run again)` };
  }
}
