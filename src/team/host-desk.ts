/**
 * The team's desk: what the inbox tools and the client add on top of the inbox. Messages users
 * and worker models write and broadcast, each worker's read cursor (so a read returns each
 * message once), the keys of the tool calls already done (so a call run again after a restart
 * sends nothing twice), and the help requests: asked by a worker, answered by the leader (the
 * team definition's `onHelpRequest`) or escalated to the user. Its state is JSON, stored in the
 * team's record (`desk`); a record written before it existed reads as an empty desk.
 *
 * @module
 */
import type { HelpRequestHandler, Task } from '../define/team.js';
import { TeamError } from '../errors.js';
import type { TeamFact } from './events.js';
import { TEAM_USER_ID, type Inbox } from './inbox.js';

/** One worker's question and where it stands. */
export interface HelpRequest {
  readonly id: string;
  readonly workerId: string;
  readonly taskId: string;
  readonly question: string;
  /** `open`: the leader is asked; `escalated`: the user must answer; `answered`. */
  readonly status: 'open' | 'escalated' | 'answered';
  readonly answer?: string;
  readonly by?: 'leader' | 'user';
  readonly at: number;
  /** The tool call that asked (its idempotency key). */
  readonly key: string;
}

/** The desk as stored in the team's record. */
export interface DeskState {
  readonly format: 1;
  readonly help: readonly HelpRequest[];
  readonly nextHelp: number;
  /** Each worker's last read: the call's key, where it read from and to. */
  readonly reads: Readonly<Record<string, { key: string; since: number; cursor: number }>>;
  /** The keys of the latest write and broadcast calls done (bounded). */
  readonly sent: readonly string[];
  /** Pending tasks assigned to a worker (`updateTask(id, { assignTo })`), by task id. */
  readonly pins?: Readonly<Record<string, string>>;
}

/** How many answered requests and sent keys are kept (the record stays the size of the team). */
const KEEP = 200;

/** What the desk needs of its host. */
export interface DeskDeps {
  readonly teamId: string;
  inbox(): Inbox;
  task(taskId: string): Task | undefined;
  clock(): number;
  fact(fact: TeamFact): void;
  /** Resolves once every change so far is durable. */
  durable(): Promise<void>;
  /** Tells the leader machine of the request (its `relayHelp` effect calls {@link TeamDesk.relay}). */
  tellLeader(request: HelpRequest): boolean;
  handler(): HelpRequestHandler | undefined;
}

/** The desk of one team (see the module's comment). */
export class TeamDesk {
  #state: DeskState;
  readonly #waiters = new Map<string, ((answer: string) => void)[]>();
  /** Requests whose leader's answer is being computed in this process. */
  readonly #asking = new Set<string>();

  constructor(
    private readonly deps: DeskDeps,
    stored?: unknown,
  ) {
    this.#state = readDesk(stored);
  }

  /** The state to store. */
  state(): DeskState {
    return this.#state;
  }

  /** Takes a stored state back (a restore). */
  restore(stored: unknown): void {
    this.#state = readDesk(stored);
  }

  /** The worker task `taskId` is assigned to, if any. */
  pinOf(taskId: string): string | undefined {
    return this.#state.pins?.[taskId];
  }

  /** Assigns the pending task `taskId` to `workerId` (the caller checked both). */
  pin(taskId: string, workerId: string): void {
    this.#state = { ...this.#state, pins: { ...this.#state.pins, [taskId]: workerId } };
  }

  /** The help requests not answered yet (and the answered ones still kept), oldest first. */
  helpRequests(): readonly HelpRequest[] {
    return this.#state.help;
  }

  /**
   * The workers waiting on an answer: they make progress (not silent) meanwhile. Only a request
   * whose task the worker still holds counts: one left behind by a released attempt does not
   * keep its worker from being found silent.
   */
  waitingWorkers(): string[] {
    return this.#state.help
      .filter((h) => {
        if (h.status === 'answered') return false;
        const task = this.deps.task(h.taskId);
        return task?.status === 'in_progress' && task.owner === h.workerId;
      })
      .map((h) => h.workerId);
  }

  /** The user writes to `to` (a member), or to every member when `to` is absent. */
  async post(to: string | undefined, text: string): Promise<number[]> {
    const seqs = this.deps
      .inbox()
      .post(TEAM_USER_ID, to, 'message', { text })
      .map((m) => m.seq);
    await this.deps.durable();
    return seqs;
  }

  /** A worker's model writes (or broadcasts, `to` absent); a key already done sends nothing. Returns the first seq (0 when done before). */
  async memberWrite(workerId: string, to: string | undefined, text: string, key: string): Promise<number> {
    if (this.#state.sent.includes(key)) return 0;
    const inbox = this.deps.inbox();
    const from = { teamId: this.deps.teamId, id: workerId };
    const sent = to === undefined ? inbox.broadcast(from, 'message', { text }) : [inbox.write(from, to, 'message', { text })];
    this.#state = { ...this.#state, sent: [...this.#state.sent, key].slice(-KEEP) };
    await this.deps.durable();
    return sent[0]?.seq ?? 0;
  }

  /** The messages to `workerId` since its last read; the same call (`key`) run again reads the same ones. */
  async memberRead(workerId: string, key: string): Promise<{ from: string; type: string; text: string; seq: number }[]> {
    const last = this.#state.reads[workerId];
    const since = last?.key === key ? last.since : (last?.cursor ?? 0);
    const read = this.deps.inbox().read({ teamId: this.deps.teamId, id: workerId }, { since });
    const messages = last?.key === key ? read.messages.filter((m) => m.seq <= last.cursor) : read.messages;
    const cursor = last?.key === key ? last.cursor : read.cursor;
    this.#state = { ...this.#state, reads: { ...this.#state.reads, [workerId]: { key, since, cursor } } };
    await this.deps.durable();
    return messages.map((m) => ({ from: m.from, type: m.type, text: messageText(m.type, m.payload), seq: m.seq }));
  }

  /**
   * A worker asks: the request is stored and sent to the leader as a `help_request`, then waited
   * for. The same call (`key`) asked again (after a restart) waits for the same request.
   */
  async askForHelp(request: { workerId: string; taskId: string; question: string; key: string }, signal: AbortSignal): Promise<string> {
    let asked = this.#state.help.find((h) => h.key === request.key);
    if (!asked) {
      const id = `help-${this.#state.nextHelp}`;
      asked = { id, workerId: request.workerId, taskId: request.taskId, question: request.question, status: 'open', at: this.deps.clock(), key: request.key };
      this.#state = { ...this.#state, help: [...this.#state.help, asked], nextHelp: this.#state.nextHelp + 1 };
      this.deps
        .inbox()
        .write({ teamId: this.deps.teamId, id: request.workerId }, 'leader', 'help_request', { taskId: request.taskId, question: request.question, requestId: id });
      this.deps.fact({ type: 'team-help-requested', requestId: id, workerId: request.workerId, taskId: request.taskId, question: request.question });
      await this.deps.durable();
      if (!this.deps.tellLeader(asked)) this.relay(asked.id);
    } else if (asked.status === 'open' && !this.#asking.has(asked.id)) {
      // Asked before a restart and not answered then: the leader is asked again.
      this.relay(asked.id);
    }
    // Read again: the user may have answered while the request was being written.
    const id = asked.id;
    const current = this.#state.help.find((h) => h.id === id);
    if (current?.status === 'answered') return current.answer ?? '';
    return new Promise<string>((resolve, reject) => {
      const list = this.#waiters.get(id) ?? [];
      const done = (answer: string) => {
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      };
      const onAbort = () => {
        this.#waiters.set(
          id,
          (this.#waiters.get(id) ?? []).filter((w) => w !== done),
        );
        reject(new Error(`help request ${id} was given up: the task swarm stopped`));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      list.push(done);
      this.#waiters.set(id, list);
    });
  }

  /**
   * The leader answers request `id`: the definition's handler is asked; a text answers it,
   * nothing (or a throw) escalates it to the user.
   */
  relay(id: string): void {
    const request = this.#state.help.find((h) => h.id === id);
    if (request?.status !== 'open' || this.#asking.has(id)) return;
    const handler = this.deps.handler();
    if (!handler) return this.#escalate(id, 'the team has no onHelpRequest handler');
    this.#asking.add(id);
    const task = this.deps.task(request.taskId);
    Promise.resolve()
      .then(() => handler({ id, teamId: this.deps.teamId, workerId: request.workerId, question: request.question, ...(task ? { task } : {}) }))
      .then(
        async (answer): Promise<void> => {
          if (typeof answer === 'string') await this.answer(id, answer, 'leader');
          else this.#escalate(id, 'the leader had no answer');
        },
        (error: unknown) => this.#escalate(id, `the leader's handler failed: ${error instanceof Error ? error.message : String(error)}`),
      )
      .catch(() => undefined)
      .finally(() => this.#asking.delete(id));
  }

  /** Answers request `id` (the leader, or the user for an escalated or open one); resolves once durable. */
  async answer(id: string, answer: string, by: 'leader' | 'user' = 'user'): Promise<HelpRequest> {
    if (typeof answer !== 'string') throw new TeamError('an answer is a text', 'invalid-message');
    const request = this.#state.help.find((h) => h.id === id);
    if (!request) throw new TeamError(`team ${this.deps.teamId} has no help request ${id}`, 'invalid-message');
    if (request.status === 'answered') throw new TeamError(`help request ${id} of team ${this.deps.teamId} is answered already`, 'wrong-team-state');
    const answered: HelpRequest = { ...request, status: 'answered', answer, by };
    const help = this.#state.help.map((h) => (h.id === id ? answered : h));
    // Answered requests beyond the last KEEP go: their calls have their answers.
    const extra = help.filter((h) => h.status === 'answered').length - KEEP;
    const kept = extra > 0 ? dropFirstAnswered(help, extra) : help;
    this.#state = { ...this.#state, help: kept };
    const inbox = this.deps.inbox();
    if (inbox.members().includes(request.workerId)) {
      if (by === 'leader') inbox.write({ teamId: this.deps.teamId, id: 'leader' }, request.workerId, 'help_answer', { requestId: id, answer, by });
      else inbox.post(TEAM_USER_ID, request.workerId, 'help_answer', { requestId: id, answer, by });
    }
    this.deps.fact({ type: 'team-help-answered', requestId: id, workerId: request.workerId, by });
    await this.deps.durable();
    const waiters = this.#waiters.get(id) ?? [];
    this.#waiters.delete(id);
    for (const resolve of waiters) resolve(answer);
    return answered;
  }

  #escalate(id: string, reason: string): void {
    const request = this.#state.help.find((h) => h.id === id);
    if (request?.status !== 'open') return;
    this.#state = { ...this.#state, help: this.#state.help.map((h) => (h.id === id ? { ...h, status: 'escalated' as const } : h)) };
    this.deps.fact({ type: 'team-help-escalated', requestId: id, workerId: request.workerId, question: request.question, reason });
  }
}

function dropFirstAnswered(help: readonly HelpRequest[], count: number): HelpRequest[] {
  let left = count;
  return help.filter((h) => !(h.status === 'answered' && left-- > 0));
}

/** The text of a message for a model: a `message`'s text, an answer, or the payload as JSON. */
function messageText(type: string, payload: unknown): string {
  const p = payload as { text?: unknown; answer?: unknown };
  if (type === 'message' && typeof p.text === 'string') return p.text;
  if (type === 'help_answer' && typeof p.answer === 'string') return p.answer;
  return JSON.stringify(payload);
}

/** A stored desk, or an empty one (a record written before the desk existed, or none). */
function readDesk(stored: unknown): DeskState {
  const s = stored as Partial<DeskState> | undefined;
  if (!s || typeof s !== 'object' || s.format !== 1) return { format: 1, help: [], nextHelp: 1, reads: {}, sent: [] };
  return {
    format: 1,
    help: Array.isArray(s.help) ? s.help : [],
    nextHelp: typeof s.nextHelp === 'number' ? s.nextHelp : 1,
    reads: s.reads && typeof s.reads === 'object' ? s.reads : {},
    sent: Array.isArray(s.sent) ? s.sent : [],
    ...(s.pins && typeof s.pins === 'object' ? { pins: s.pins } : {}),
  };
}
