/**
 * The agent registry (seed 003): A2A agents found by their cards, health-checked, selected by
 * skill and load, and sent tasks with dependencies; plus its MCP tools.
 *
 * @module
 */
export { createAgentRegistry, type AgentRegistry, type AgentRegistryOptions, type LocalAgentRun } from './registry.js';
export { fetchAgentCard, validateAgentCard, type AgentEndpoint, type CheckedCard, type RegistrySkill } from './card-check.js';
export { checkAgentHealth, pingAgent, type HealthResult } from './health.js';
export type { AllowedHosts } from '../a2a/endpoint-policy.js';
export { hasSkill, selectAgent } from './selection.js';
export { registerRegistryTools } from './mcp-tools.js';
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
} from './types.js';
