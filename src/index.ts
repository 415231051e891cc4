/**
 * xswarm: an actor runtime for LLM swarms on XState v5.
 *
 * This entry point needs only xstate and zod. The heavy parts are optional peer packages that
 * load when used: `serve` (the servers), `sqliteStore` (better-sqlite3), the A2A client behind
 * remote handoffs (@a2a-js/sdk); `openaiModel` needs openai (loaded with xswarm where it is
 * installed). Each also has a subpath of its own (`xswarm/server`, `xswarm/sqlite`,
 * `xswarm/a2a`, `xswarm/openai`).
 *
 * @example
 * import { z } from 'zod';
 * import { createRuntime, defineAgent, defineSwarm, handoff, scriptedModel, tool } from 'xswarm';
 *
 * const forecast = tool({
 *   name: 'get_forecast', description: 'Weather forecast for a day',
 *   parameters: z.object({ day: z.string() }),
 *   execute: async ({ day }) => ({ day, sky: 'sunny' }),
 * });
 * const weather = defineAgent({ id: 'weather-agent', instructions: 'Answer with the forecast.', tools: [forecast] });
 * const planner = defineSwarm({ id: 'planner', instructions: 'Plan outdoor activities.', handoffs: [handoff.toAgent(weather)] });
 * const model = scriptedModel(() => ({ text: 'Go hiking on Saturday.' }));
 * const client = createRuntime({ swarms: [planner], model }).forSwarm(planner);
 * await client.run('this weekend');
 * console.log(await client.wait()); // { status: 'completed', result: 'Go hiking on Saturday.' }
 *
 * @module
 */
export { defineSwarm, DEFAULT_MAX_TURNS } from './define/swarm.js';
export { defineAgent } from './define/agent.js';
export type { FromInput, Guardrail, OnLimit, SwarmDefinition, SwarmOverrides, ToolEntry } from './define/swarm.js';
export type { Migrate, MigrationArgs, MigrationSnapshot } from './define/migrate.js';
export type { AgentGuardrails, GuardedToolCall, SwarmGuardrails } from './define/guardrail.js';
export type { GuardrailAction, GuardrailRejection, GuardrailStep } from '../machines/guardrail.js';
export { GUARDRAIL_PAUSE } from '../machines/guardrail.js';
export type { StallRule } from '../machines/stall.js';
export type { HistoryPolicy } from './define/history.js';
export type { OnTimeout } from './define/timeout.js';
export { LIMIT_PAUSE, PAUSE_TYPES } from '../machines/pause.js';
export type { LimitTrip, PauseType } from '../machines/pause.js';
export type { ApprovalAnswer, PendingApproval } from '../machines/approvals.js';
export type { AgentDefinition } from './define/agent.js';
export { swarmRegistry } from './define/swarm-registry.js';
export type { SwarmCard, SwarmRegistryTools } from './define/swarm-registry.js';
export { tool, jsonSchemaOf } from './define/tool.js';
export type { ApprovalContext, NeedsApproval, Tool, ToolContext } from './define/tool.js';
export { CallTimeoutError, isCallTimeout } from '../actors/call-timeout.js';
export { MAX_TIMEOUT_MS } from './define/timeout.js';
export { handoff, handoffToolName } from './define/handoff.js';
export type { AgentHandoff, BestAgentHandoff, Handoff, HandoffOptions, InlineHandoff, RemoteHandoff, SwarmHandoff } from './define/handoff.js';
export type { RemoteAgentClient, RemoteCard, RemoteHooks } from './a2a/remote.js';
export { createRuntime } from './runtime/index.js';
export { jsonLogger, LOG_LEVELS } from './util/logger.js';
export type { JsonLoggerOptions, Logger, LogLevel, LogMethod } from './util/logger.js';
export type { MetricsRegistry } from './runtime/metrics-registry.js';
export type { HostingOptions, InspectObserver, ListedSwarm, ListOptions, Runtime, RuntimeOptions } from './runtime/types.js';
export type { DrainOptions } from './runtime/drain.js';
export { LocalBus, localTransport } from './transport/local.js';
export { TransportError } from './transport/types.js';
export type { Transport, TransportMessage, TransportStatus, TransportSubscription } from './transport/types.js';
export type { NatsOptions } from './nats/options.js';
export { createAgentRegistry } from './registry/registry.js';
export type { AgentRegistry, AgentRegistryOptions, LocalAgentRun } from './registry/registry.js';
export type { AllowedHosts } from './a2a/endpoint-policy.js';
export type {
  AgentHealth,
  AgentInfo,
  DependencyKind,
  DispatchSpec,
  RegistrySnapshot,
  RegistryTask,
  RegistryTaskState,
  RegistryTaskStep,
  TaskDependency,
} from './registry/types.js';
export { TeamError } from './errors.js';
export type { TeamErrorCode } from './errors.js';
export { defineTeam } from './define/team.js';
export type { TeamDefinition, TeamDefinitionInput, TeamWorkerDefinition } from './define/team.js';
export { TeamClient } from './team/client.js';
export type { TeamBoardView, TeamInboxView, TeamSummary } from './team/client.js';
export type { TeamEvent, TeamFact } from './team/events.js';
export type { TeamListing } from './team/teams.js';
export type { TeamRunMetrics, TeamRunSummary, TeamStatus } from './team/host-types.js';
export { DEFAULT_TEAM_LIMITS } from './define/team-limits.js';
export type { TeamLimits } from './define/team-limits.js';
export type { BlockedTask, BoardCounts } from './team/board-types.js';
export type { Task, TaskMetadata, TaskSpec, TaskStatus } from './define/team.js';
export type { InboxMessage, InboxMessageType } from './team/inbox.js';
export type { HelpRequestHandler, HelpRequestInfo } from './define/team.js';
export type { HelpRequest } from './team/host-desk.js';
export type { TaskUpdate } from './team/host.js';
export { TEAM_TOOL_NAMES, teamTools } from './team/team-tools.js';
export { AdhocClient, SwarmClient } from './client/client.js';
export type { AdhocParameters, ApproveOptions, PauseRequest, ResumeOptions, SwarmLimits } from './client/client.js';
export type { InFlightCall, PausedChild, SwarmResult, SwarmStatus } from './store/result.js';
export { scriptedModel } from './models/scripted.js';
export type { ChatMessage, Model, ModelRequest, ModelResponse, ToolCall, ToolSpec, Usage } from './models/scripted.js';
export type { ModelPrice, ModelUsageReport, Prices, UsageReport, UsageTotals } from './usage/report.js';
export type { BudgetSpend, BudgetStatus } from './usage/report.js';
export type { Budget, KeyBudget } from './define/budget.js';
export type { BudgetLimit } from '../machines/budget.js';
export type { ModelUsage, UsageByModel } from '../machines/usage.js';
export { openaiModel } from './models/openai.js';
export type { OpenAIModelOptions } from './models/openai.js';
export { memoryStore } from './store/memory.js';
export { DEFAULT_DB_PATH, sqliteStore } from './store/sqlite/store.js';
export type { SqliteStore, SqliteStoreOptions } from './store/sqlite/store.js';
export { ReplayDivergenceError } from './runtime/replay.js';
export { ForkError } from './runtime/fork-plan.js';
export type { ForkOptions, ForkPlan, ForkPoint, ForkRefusal } from './runtime/fork-plan.js';
export { serve } from './server/lazy.js';
export { a2aRemoteAgents } from './a2a/lazy.js';
export { fileResult, fileResultSchema, type FileResult } from './a2a/files.js';
export type { ServeOptions, SwarmServer } from './server/options.js';
export type { A2ARemoteOptions } from './a2a/client.js';
export { a2aPushInbox, type A2APushInbox, type PushInboxOptions, type PushInboxSubscription } from './a2a/push-inbox.js';
export type { Commit, Lease, SwarmFilter, StoreStats, SwarmRecord, SwarmStore, SwarmSummary } from './store/types.js';
export { CorruptEventError, LeaseLostError, RevisionConflictError } from './store/types.js';
export type { BudgetAccount, BudgetAmount, BudgetLedger, BudgetRefusal, BudgetReservation, ReserveRequest } from './store/budgets.js';
export { DefinitionError, RuntimeDrainingError, SwarmError } from './errors.js';
export type { SwarmErrorCode } from './errors.js';
export { isSwarmId, MAX_SWARM_ID_LENGTH, swarmIdProblem } from './define/swarm-id.js';
export { factOf, isFinalEvent } from './events/helpers.js';
export { internalSwarmEventSchema, publicSwarmEventSchema, swarmEventSchema, swarmFactSchema } from './events/schema.js';
export type {
  Artifact,
  ArtifactUpdateEvent,
  DataPart,
  EventStamp,
  FilePart,
  ForkedCall,
  InternalEvent,
  Message,
  Part,
  PauseReason,
  PublicSwarmEvent,
  StatusUpdateEvent,
  SwarmEvent,
  SwarmEventBody,
  SwarmFact,
  SwarmFactType,
  SwarmFailure,
  SwarmFailureKind,
  TaskEvent,
  TaskState,
  TextPart,
} from '../machines/events.js';
