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
 * import { createRuntime, defineAgent, defineSwarm, handoff, scriptedModel } from 'xswarm';
 *
 * @module
 */
export { defineAgent, defineSwarm, DEFAULT_MAX_TURNS } from './define.js';
export type { AgentDefinition, FromInput, Guardrail, SwarmDefinition, SwarmOverrides, ToolEntry } from './define.js';
export { swarmRegistry } from './swarm-registry.js';
export type { SwarmCard, SwarmRegistryTools } from './swarm-registry.js';
export { tool, jsonSchemaOf } from './tool.js';
export type { Tool, ToolContext } from './tool.js';
export { handoff, handoffToolName } from './handoff.js';
export type { AgentHandoff, Handoff, InlineHandoff, RemoteHandoff, SwarmHandoff } from './handoff.js';
export type { RemoteAgentClient, RemoteCard, RemoteHooks } from './remote.js';
export { createRuntime } from './runtime.js';
export type { Runtime, RuntimeOptions } from './runtime.js';
export { AdhocClient, SwarmClient } from './client.js';
export type { AdhocParameters } from './client.js';
export type { InFlightCall, SwarmResult, SwarmStatus } from './result.js';
export { scriptedModel } from './model.js';
export type { ChatMessage, Model, ModelRequest, ModelResponse, ToolCall, ToolSpec, Usage } from './model.js';
export { openaiModel } from './models/openai.js';
export type { OpenAIModelOptions } from './models/openai.js';
export { memoryStore } from './store/memory.js';
export { DEFAULT_DB_PATH, sqliteStore } from './store/sqlite.js';
export type { SqliteStoreOptions } from './store/sqlite.js';
export { ReplayDivergenceError } from './replay.js';
export { a2aRemoteAgents, serve } from './lazy.js';
export type { ServeOptions, SwarmServer } from './server/index.js';
export type { A2ARemoteOptions } from './a2a/remote.js';
export type { Commit, Lease, SwarmFilter, SwarmRecord, SwarmStore, SwarmSummary } from './store/types.js';
export { CorruptEventError, LeaseLostError, RevisionConflictError } from './store/types.js';
export { DefinitionError, SwarmError } from './errors.js';
export type { SwarmErrorCode } from './errors.js';
export { isSwarmId, MAX_SWARM_ID_LENGTH, swarmIdProblem } from './swarm-id.js';
export { factOf, isFinalEvent } from './events.js';
export type {
  EventStamp,
  Part,
  PauseReason,
  SwarmEvent,
  SwarmEventBody,
  SwarmFact,
  SwarmFactType,
  TaskState,
} from '../machines/events.js';
