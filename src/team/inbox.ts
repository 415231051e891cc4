/**
 * The inbox of a team (seed 004): the six message types teammates exchange, written to one
 * teammate or broadcast to all, read in order from a cursor. An inbox belongs to one team and
 * knows its members; anyone else (a worker of another team included) is refused, whether
 * writing or reading. Messages older than `inboxRetentionMs` are dropped and never returned.
 * The state is JSON ({@link Inbox.snapshot}) and comes back exactly with {@link restoreInbox};
 * a delivery, a read and a prune cost the same however many messages the inbox keeps.
 *
 * @module
 */
import { z } from 'zod';
import { TeamError } from '../errors.js';
import { resolveTeamLimits, type TeamLimits } from '../define/team-limits.js';

/**
 * The message types: seed 004's six, in the order the seed lists them, then `message` (free
 * text a user or a worker's model writes or broadcasts) and `help_answer` (the answer to a
 * `help_request`, see docs/team-inbox.md). Inboxes stored before the last two existed read the
 * same (their counts of them are 0).
 */
export const INBOX_MESSAGE_TYPES = [
  'task_completed',
  'task_failed',
  'idle_notification',
  'help_request',
  'shutdown_request',
  'shutdown_approved',
  'message',
  'help_answer',
] as const;

/** The types that came after seed 004's six: a stored inbox may have no count of them. */
const LATER_TYPES: readonly InboxMessageType[] = ['message', 'help_answer'];

/** Who writes as the team's user (the client, REST): a sender that is never a member. */
export const TEAM_USER_ID = 'user';

/** One of {@link INBOX_MESSAGE_TYPES}. */
export type InboxMessageType = (typeof INBOX_MESSAGE_TYPES)[number];

const id = z.string().min(1);

/** The runtime schema of each message type's payload; unknown fields are refused. */
const inboxPayloadSchemas = {
  task_completed: z.strictObject({ taskId: id, result: z.unknown().optional(), durationMs: z.number().nonnegative().optional() }),
  task_failed: z.strictObject({ taskId: id, error: z.string(), attempt: z.number().int().positive() }),
  idle_notification: z.strictObject({ workerId: id, completedTasks: z.number().int().nonnegative().optional() }),
  help_request: z.strictObject({ taskId: id.optional(), question: z.string().min(1), requestId: id.optional() }),
  shutdown_request: z.strictObject({ reason: z.string() }),
  shutdown_approved: z.strictObject({ workerId: id }),
  message: z.strictObject({ text: z.string().min(1) }),
  help_answer: z.strictObject({ requestId: id, answer: z.string(), by: z.enum(['leader', 'user']) }),
} satisfies Record<InboxMessageType, z.ZodType>;

/** The payload of each message type. */
export type InboxPayloads = { [T in InboxMessageType]: z.output<(typeof inboxPayloadSchemas)[T]> };

/** A teammate as a sender or reader names itself: its team and its id in that team. */
export interface TeamMember {
  readonly teamId: string;
  readonly id: string;
}

/** One delivered message. `seq` orders the team's messages; `at` is epoch milliseconds. */
export type InboxMessage = {
  [T in InboxMessageType]: {
    /** `${teamId}:${seq}`. */
    readonly id: string;
    readonly seq: number;
    readonly teamId: string;
    readonly from: string;
    readonly to: string;
    readonly type: T;
    readonly payload: InboxPayloads[T];
    readonly at: number;
  };
}[InboxMessageType];

/** What {@link Inbox.read} returns: the messages and the cursor to pass as `since` next time. */
export interface InboxRead {
  readonly messages: readonly InboxMessage[];
  /** The seq of the last message returned (or the `since` given, when there was none). */
  readonly cursor: number;
}

/** Counts for the team's metrics. `sent` counts deliveries (a broadcast to 3 is 3). */
export interface InboxStats {
  readonly sent: number;
  readonly byType: Readonly<Record<InboxMessageType, number>>;
  /** Messages dropped because they outlived the retention. */
  readonly expired: number;
  /** Messages currently kept. */
  readonly retained: number;
}

/** The state of an inbox as JSON: what is persisted and what {@link restoreInbox} takes back. */
export interface InboxSnapshot {
  readonly format: 1;
  readonly teamId: string;
  readonly retentionMs: number;
  /** In the order they joined (the order of a broadcast's deliveries). */
  readonly members: readonly string[];
  /** The seq the next message gets. */
  readonly nextSeq: number;
  readonly messages: readonly InboxMessage[];
  readonly sent: number;
  readonly byType: Readonly<Record<InboxMessageType, number>>;
  readonly expired: number;
}

/** How to create an inbox. */
export interface InboxOptions {
  readonly teamId: string;
  /** Team limits over the defaults; the inbox uses `inboxRetentionMs`. */
  readonly limits?: Partial<TeamLimits>;
  /** Members from the start (more join with {@link Inbox.join}). */
  readonly members?: readonly string[];
  /** The time (epoch ms) retention is measured against; `Date.now` unless given. */
  readonly clock?: () => number;
}

/** A new, empty inbox of one team. */
export function createInbox(options: InboxOptions): Inbox {
  if (typeof options.teamId !== 'string' || options.teamId.length === 0) throw new TeamError('an inbox needs a non-empty team id', 'invalid-message');
  const limits = resolveTeamLimits(options.limits);
  const byType = Object.fromEntries(INBOX_MESSAGE_TYPES.map((type) => [type, 0])) as Record<InboxMessageType, number>;
  const inbox = new Inbox(
    { teamId: options.teamId, retentionMs: limits.inboxRetentionMs, members: [], nextSeq: 1, messages: [], sent: 0, byType, expired: 0 },
    options.clock ?? Date.now,
  );
  for (const member of options.members ?? []) inbox.join(member);
  return inbox;
}

/**
 * The inbox a snapshot was taken of: same members, messages, cursor positions and counts.
 * Throws a {@link TeamError} `invalid-snapshot` for anything that is not an inbox snapshot.
 */
export function restoreInbox(snapshot: unknown, options: { readonly clock?: () => number } = {}): Inbox {
  const parsed = snapshotSchema.safeParse(snapshot);
  if (!parsed.success) throw new TeamError(`not an inbox snapshot: ${issues(parsed.error)}`, 'invalid-snapshot');
  const { format: _format, ...context } = parsed.data as unknown as InboxSnapshot;
  const byType = { ...context.byType } as Record<InboxMessageType, number>;
  for (const type of LATER_TYPES) byType[type] ??= 0;
  for (const message of context.messages) {
    if (message.teamId !== context.teamId) throw new TeamError(`inbox snapshot of team ${context.teamId} holds a message of team ${message.teamId}`, 'invalid-snapshot');
    if (message.seq >= context.nextSeq) throw new TeamError(`inbox snapshot: message seq ${message.seq} is not below nextSeq ${context.nextSeq}`, 'invalid-snapshot');
  }
  return new Inbox({ ...context, byType }, options.clock ?? Date.now);
}

/** A team's inbox. Create one with {@link createInbox} or {@link restoreInbox}. */
export class Inbox {
  readonly #clock: () => number;
  readonly #teamId: string;
  readonly #retentionMs: number;
  #members: string[];
  #nextSeq: number;
  #sent: number;
  readonly #byType: Record<InboxMessageType, number>;
  #expired: number;
  /** The messages kept are `#messages` from `#head` on (those before were dropped), in seq order. */
  #messages: InboxMessage[];
  #head = 0;
  /** Each recipient's messages, in seq order (dropped ones too, until `#messages` is compacted). */
  #byRecipient = new Map<string, InboxMessage[]>();
  readonly #onMessage: ((message: InboxMessage) => void)[] = [];
  readonly #onChange: (() => void)[] = [];

  /** @internal Use {@link createInbox} or {@link restoreInbox}. */
  constructor(context: InboxContext, clock: () => number) {
    this.#clock = clock;
    this.#teamId = context.teamId;
    this.#retentionMs = context.retentionMs;
    this.#members = [...context.members];
    this.#nextSeq = context.nextSeq;
    this.#sent = context.sent;
    this.#byType = { ...context.byType };
    this.#expired = context.expired;
    this.#messages = [...context.messages];
    this.#index();
  }

  /** The team this inbox belongs to. */
  get teamId(): string {
    return this.#teamId;
  }

  /** The members, in the order they joined. */
  members(): readonly string[] {
    return this.#members;
  }

  /** Registers a member of the team; an id already in use is refused (`duplicate-member`). */
  join(member: string): void {
    if (typeof member !== 'string' || member.length === 0) throw new TeamError('a member id must be a non-empty string', 'not-a-member');
    if (this.#members.includes(member)) throw new TeamError(`${member} is already a member of team ${this.teamId}`, 'duplicate-member');
    this.#members = [...this.#members, member];
    this.#changed();
  }

  /**
   * Removes a member (after a graceful shutdown); it can no longer write or read. Messages
   * already delivered to it stay until retention drops them, so a member that joins again
   * under the same id (a respawn) reads them.
   */
  leave(member: string): void {
    if (!this.#members.includes(member)) throw new TeamError(`${member} is not a member of team ${this.teamId}`, 'not-a-member');
    this.#members = this.#members.filter((m) => m !== member);
    this.#changed();
  }

  /**
   * Delivers one message from `from` to the teammate `to`. Both must be members of this team
   * (`not-a-member`); the payload must fit the type (`invalid-message`).
   */
  write<T extends InboxMessageType>(from: TeamMember, to: string, type: T, payload: InboxPayloads[T]): InboxMessage {
    const sender = this.#member(from, 'write to');
    if (typeof to !== 'string' || !this.#members.includes(to)) throw new TeamError(`cannot write to ${String(to)}: not a member of team ${this.teamId}`, 'not-a-member');
    const checked = checkPayload(type, payload);
    return this.#deliver(sender, [to], type, checked)[0]!;
  }

  /**
   * Delivers one message from someone who is not a member (the team's user, {@link TEAM_USER_ID})
   * to the member `to`, or to every member (in join order) when `to` is absent. The recipients
   * must be members (`not-a-member`); the payload must fit the type (`invalid-message`).
   */
  post<T extends InboxMessageType>(from: string, to: string | undefined, type: T, payload: InboxPayloads[T]): InboxMessage[] {
    if (typeof from !== 'string' || from.length === 0 || this.#members.includes(from))
      throw new TeamError(`${String(from)} cannot post as an outsider to team ${this.teamId}`, 'not-a-member');
    if (to !== undefined && (typeof to !== 'string' || !this.#members.includes(to)))
      throw new TeamError(`cannot write to ${String(to)}: not a member of team ${this.teamId}`, 'not-a-member');
    const checked = checkPayload(type, payload);
    return this.#deliver(from, to === undefined ? this.#members : [to], type, checked);
  }

  /** Delivers one message to every member but the sender, in join order. */
  broadcast<T extends InboxMessageType>(from: TeamMember, type: T, payload: InboxPayloads[T]): InboxMessage[] {
    const sender = this.#member(from, 'broadcast to');
    const checked = checkPayload(type, payload);
    return this.#deliver(
      sender,
      this.#members.filter((member) => member !== sender),
      type,
      checked,
    );
  }

  /**
   * The messages to `member` after `since` (a seq; 0 or absent: from the start), oldest first,
   * leaving out those past retention. Reading does not consume: the same cursor reads the same
   * messages again, so a reader that crashed before acting on them loses nothing. O(log n) plus
   * the messages returned.
   */
  read(member: TeamMember, options: { readonly since?: number } = {}): InboxRead {
    const reader = this.#member(member, 'read');
    const since = options.since ?? 0;
    if (!Number.isSafeInteger(since) || since < 0) throw new TeamError(`since must be a seq (a non-negative integer), not ${String(since)}`, 'invalid-message');
    this.prune();
    const mine = this.#byRecipient.get(reader) ?? [];
    // Dropped messages have the lowest seqs: starting after both cursors skips them.
    const from = Math.max(since, this.keptFrom - 1);
    const messages = mine.slice(firstAfter(mine, from));
    return { messages, cursor: messages.at(-1)?.seq ?? since };
  }

  /** Drops the messages older than the retention at `now`; returns how many. */
  prune(now: number = this.#clock()): number {
    const before = now - this.#retentionMs;
    // Messages are kept in delivery order, which is time order: the old ones are at the front.
    let head = this.#head;
    while (head < this.#messages.length && this.#messages[head]!.at < before) head++;
    const count = head - this.#head;
    if (count === 0) return 0;
    this.#head = head;
    this.#expired += count;
    // The dropped front is cut once it is half the list, so dropping costs O(1) per message.
    if (this.#head * 2 >= this.#messages.length) {
      this.#messages = this.#messages.slice(this.#head);
      this.#head = 0;
      this.#index();
    }
    this.#changed();
    return count;
  }

  /** Counts for metrics. */
  stats(): InboxStats {
    return { sent: this.#sent, byType: { ...this.#byType }, expired: this.#expired, retained: this.#messages.length - this.#head };
  }

  /** The seq of the first message kept (those before were dropped), or the next seq when none is. */
  get keptFrom(): number {
    return this.#messages[this.#head]?.seq ?? this.#nextSeq;
  }

  /** The seq the next message gets. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** The inbox as JSON, for persistence; {@link restoreInbox} takes it back. O(messages kept). */
  snapshot(): InboxSnapshot {
    return { format: 1, ...this.head(), messages: this.#messages.slice(this.#head) };
  }

  /** The inbox's snapshot without its messages: its members, counters and the seq of the next message. O(members). */
  head(): Omit<InboxSnapshot, 'format' | 'messages'> {
    return {
      teamId: this.#teamId,
      retentionMs: this.#retentionMs,
      members: this.#members,
      nextSeq: this.#nextSeq,
      sent: this.#sent,
      byType: { ...this.#byType },
      expired: this.#expired,
    };
  }

  /** The messages kept, oldest first (a new array). */
  messages(): InboxMessage[] {
    return this.#messages.slice(this.#head);
  }

  /**
   * Calls `listener` with the new snapshot after every change; returns the unsubscribe. Each
   * call builds the whole snapshot: to follow changes of a busy inbox, use {@link onMessage} and
   * {@link onChange}.
   */
  subscribe(listener: (snapshot: InboxSnapshot) => void): () => void {
    return this.onChange(() => listener(this.snapshot()));
  }

  /** Calls `listener` after every change (a delivery, a member joining or leaving, a prune); returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#onChange.push(listener);
    return () => remove(this.#onChange, listener);
  }

  /** Calls `listener` with every delivered message, in seq order; returns the unsubscribe. */
  onMessage(listener: (message: InboxMessage) => void): () => void {
    this.#onMessage.push(listener);
    return () => remove(this.#onMessage, listener);
  }

  /** The member's id, when it names a member of this team; otherwise `not-a-member`. */
  #member(member: TeamMember, action: string): string {
    const teamId = typeof member === 'object' && member !== null ? member.teamId : undefined;
    const memberId = typeof member === 'object' && member !== null ? member.id : undefined;
    if (teamId !== this.teamId) {
      throw new TeamError(`${String(memberId)} of team ${String(teamId)} cannot ${action} the inbox of team ${this.teamId}`, 'not-a-member');
    }
    if (typeof memberId !== 'string' || !this.#members.includes(memberId)) {
      throw new TeamError(`${String(memberId)} is not a member of team ${this.teamId}`, 'not-a-member');
    }
    return memberId;
  }

  #deliver(from: string, recipients: readonly string[], type: InboxMessageType, payload: unknown): InboxMessage[] {
    const at = this.#clock();
    this.prune(at);
    const teamId = this.#teamId;
    const nextSeq = this.#nextSeq;
    const messages = recipients.map((to, i) => {
      const seq = nextSeq + i;
      return { id: `${teamId}:${seq}`, seq, teamId, from, to, type, payload, at } as InboxMessage;
    });
    if (messages.length === 0) return messages;
    this.#nextSeq += messages.length;
    this.#sent += messages.length;
    for (const message of messages) {
      this.#byType[message.type]++;
      this.#messages.push(message);
      this.#add(message);
    }
    for (const message of messages) for (const listener of [...this.#onMessage]) listener(message);
    this.#changed();
    return messages;
  }

  /** Rebuilds the per-recipient lists from the messages kept. */
  #index(): void {
    this.#byRecipient = new Map();
    for (let i = this.#head; i < this.#messages.length; i++) this.#add(this.#messages[i]!);
  }

  #add(message: InboxMessage): void {
    let list = this.#byRecipient.get(message.to);
    if (!list) this.#byRecipient.set(message.to, (list = []));
    list.push(message);
  }

  #changed(): void {
    for (const listener of [...this.#onChange]) listener();
  }
}

/** The store's context: an inbox snapshot without its format tag. */
type InboxContext = Omit<InboxSnapshot, 'format'>;

/** The index of the first message of `list` (in seq order) whose seq is above `seq`. */
function firstAfter(list: readonly InboxMessage[], seq: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.seq > seq) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function remove<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}

/** The payload checked against its type's schema and copied as JSON (detached from the caller). */
function checkPayload(type: InboxMessageType, payload: unknown): unknown {
  if (typeof type !== 'string' || !Object.hasOwn(inboxPayloadSchemas, type)) {
    throw new TeamError(`unknown message type ${JSON.stringify(type)} (known: ${INBOX_MESSAGE_TYPES.join(', ')})`, 'invalid-message');
  }
  const parsed = inboxPayloadSchemas[type].safeParse(payload);
  if (!parsed.success) throw new TeamError(`invalid ${type} payload: ${issues(parsed.error)}`, 'invalid-message');
  try {
    return JSON.parse(JSON.stringify(parsed.data)) as unknown;
  } catch (error) {
    throw new TeamError(`invalid ${type} payload: not JSON (${(error as Error).message})`, 'invalid-message');
  }
}

const count = z.number().int().nonnegative();
const messageSchema = z.discriminatedUnion(
  'type',
  INBOX_MESSAGE_TYPES.map((type) =>
    z.strictObject({
      id: z.string().min(1),
      seq: z.number().int().positive(),
      teamId: z.string().min(1),
      from: z.string().min(1),
      to: z.string().min(1),
      type: z.literal(type),
      payload: inboxPayloadSchemas[type],
      at: z.number(),
    }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
);
const snapshotSchema = z.strictObject({
  format: z.literal(1),
  teamId: z.string().min(1),
  retentionMs: z.number().int().positive(),
  members: z.array(z.string().min(1)),
  nextSeq: z.number().int().positive(),
  messages: z.array(messageSchema),
  sent: count,
  // The later types' counts may be missing: an inbox stored before they existed.
  byType: z.strictObject(
    Object.fromEntries(INBOX_MESSAGE_TYPES.map((type) => [type, LATER_TYPES.includes(type) ? count.optional() : count])) as Record<InboxMessageType, typeof count>,
  ),
  expired: count,
});

function issues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`).join('; ');
}
