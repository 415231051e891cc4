// @ts-check
/**
 * The shapes the page reads, as JSDoc types: the recorded events (machines/events.ts, loosely:
 * the page shows what it gets and ignores what it does not know), the inspector API's rows and
 * the generated chart. Types only; nothing runs here.
 *
 * @module
 */

/**
 * @typedef {{ kind: 'text', text: string } | { kind: 'data', data: Record<string, unknown> } | { kind: 'file', file: { name?: string, mimeType?: string, bytes?: string, uri?: string } }} Part
 * @typedef {{ kind: 'message', role: 'agent' | 'user', parts: Part[], messageId?: string }} A2AMessage
 * @typedef {{ id: string, name: string, arguments: string }} ToolCall
 * @typedef {{ inputTokens: number, outputTokens: number }} Usage
 * @typedef {{ text?: string, toolCalls?: ToolCall[], usage?: Usage }} ModelResponse
 * @typedef {{ id: string, name: string, kind: string, agentId?: string, definitionId?: string, url?: string, request?: string, reason?: { type: string, message: string } }} PlannedCall
 * @typedef {{ type: string, message: string }} PauseReason
 */

/**
 * The swarm-level facts of a status update (`metadata`), discriminated by `type`.
 * @typedef {{ type: 'started', definitionId: string }
 *   | { type: 'agent-handoff', from: string, to: string, callId: string, request: string }
 *   | { type: 'swarm-handoff', from: string, to: string, childSwarmId: string, callId: string, input: unknown }
 *   | { type: 'handoff-result', from: string, to: string, callId: string, ok: boolean, childSwarmId?: string, content: string, key: string }
 *   | { type: 'child-swarm', childSwarmId: string, definitionId: string, callId: string, lifecycle: string, reason?: string, childSeq: number }
 *   | { type: 'tool-call', agent: string, toolName: string, callId: string }
 *   | { type: 'turn-completed', turn: number, maxTurns: number, activeAgent: string }
 *   | { type: 'paused', reason: PauseReason }
 *   | { type: 'resumed', message?: string }
 *   | { type: 'extended', maxTurns: number, previousMaxTurns: number }
 *   | { type: 'migrated', definitionId: string, from: number, to: number }
 *   | { type: 'completed', result: unknown }
 *   | { type: 'failed', reason: string }
 *   | { type: 'stopped', reason: string }} SwarmFact
 */

/**
 * One recorded event of a swarm, as the `/events` WebSocket sends it.
 * @typedef {{ kind: 'task', id: string, seq: number, swarmId: string, status: { state: string, timestamp: string }, history?: A2AMessage[], metadata: { definitionId: string } }} TaskEvent
 * @typedef {{ kind: 'status-update', seq: number, swarmId: string, status: { state: string, timestamp: string, message?: A2AMessage }, final: boolean, metadata: SwarmFact }} StatusEvent
 * @typedef {{ kind: 'artifact-update', seq: number, swarmId: string, artifact: { artifactId: string, name?: string, parts: Part[] }, append?: boolean, lastChunk?: boolean, metadata?: { agent: string, turn: number } }} ArtifactEvent
 * @typedef {{ kind: 'internal:llm-call', seq: number, swarmId: string, timestamp: number, agent: string, scope: string, turn: number, response: ModelResponse, usage?: Usage, durationMs: number, calls: PlannedCall[], verdict: { type: string, result?: unknown, reason?: string, message?: string } }} LlmCallEvent
 * @typedef {{ kind: 'internal:tool-start', seq: number, swarmId: string, timestamp: number, agent: string, toolName: string, callId: string, arguments: string }} ToolStartEvent
 * @typedef {{ kind: 'internal:tool-complete', seq: number, swarmId: string, timestamp: number, agent: string, toolName: string, callId: string, ok: boolean, content: string, key: string }} ToolCompleteEvent
 * @typedef {{ kind: 'internal:checkpoint', seq: number, swarmId: string, timestamp: number, step: string }} CheckpointEvent
 * @typedef {TaskEvent | StatusEvent | ArtifactEvent | LlmCallEvent | ToolStartEvent | ToolCompleteEvent | CheckpointEvent} SwarmEvent
 */

/**
 * A row of `GET /inspector/api/overview`'s `swarms`, and the answer of `GET /inspector/api/swarms/:id`.
 * @typedef {{ swarmId: string, definitionId: string, status: string, startedAt: number | null, updatedAt: number, lastSeq: number,
 *   turns: number | null, tokens: { input: number, output: number, total: number } | null, parentSwarmId?: string,
 *   label?: { name?: string, description?: string, componentId?: string } }} SwarmRow
 * @typedef {{ teamId: string, definitionId: string, status: string, counts: Record<string, number> }} TeamRow
 * @typedef {{ swarms: SwarmRow[], teams: TeamRow[] }} Overview
 */

/**
 * `inspector/swarm-chart.json`: the swarm machine laid out (by elkjs, at build time), absolute coordinates.
 * @typedef {{ id: string, label: string, x: number, y: number, width: number, height: number, parent: string | null, initial: boolean, final: boolean }} ChartNode
 * @typedef {{ id: string, source: string, target: string, label: string, points: { x: number, y: number }[], labelAt?: { x: number, y: number } | null, from?: string }} ChartEdge
 * @typedef {{ id: string, text: string, x: number, y: number, width: number, height: number }} ChartNote
 * @typedef {{ width: number, height: number, nodes: ChartNode[], edges: ChartEdge[], notes?: ChartNote[] }} Chart
 */

/**
 * A team's task (`GET /teams/:def/:teamId/board`'s `tasks`) and an inbox message (`…/inbox`'s `messages`).
 * @typedef {{ id: string, subject: string, description?: string, status: string, owner?: string, attempts: number, failures: number, dependencies: string[], lastError?: string, updatedAt?: number }} BoardTask
 * @typedef {{ tasks: BoardTask[], counts?: Record<string, number> }} Board
 * @typedef {{ id: string, seq: number, from: string, to: string, type: string, payload: Record<string, unknown>, at: number }} InboxMessage
 * @typedef {{ leader: string, members: string[], messages: InboxMessage[], cursor: number }} Inbox
 */

export {};
