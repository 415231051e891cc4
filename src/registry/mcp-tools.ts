/**
 * The agent registry's MCP tools (seed 003), added to our MCP server when it is given a
 * registry:
 *
 * | tool | does |
 * |---|---|
 * | `create_task` `{ id?, skill?, agent?, message, dependsOn?, wait? }` | dispatches a task; returns it (`submitted`), or with `wait: true` once it has ended |
 * | `list_agents` `{ skill? }` | the agents with health, skills, load and check timestamps |
 * | `agent_message` `{ agent, message }` or `{ taskId, message }` | sends a message to the named agent and returns its answer; with `taskId`, answers that task's question (a task in `input-required`) and returns the task |
 * | `get_task_status` `{ taskId, wait? }` | a task's state, agent, result or error and timestamps |
 * | `cancel_task` `{ taskId, reason? }` | cancels a task not ended yet (its A2A task too); returns it, `canceled` |
 *
 * Errors follow MCP's split: arguments that do not match a tool's schema, and unknown tools,
 * are refused by the SDK; a failure the caller can act on (an unknown task or agent, an
 * unhealthy agent, a duplicate id) is an `isError` result whose text starts with the
 * `TeamError` code, e.g. `unknown-task: No task "t9"`, which a model can read and act on.
 *
 * @module
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { errorText } from '../../machines/error-text.js';
import { TeamError } from '../errors.js';
import type { AgentRegistry } from './registry.js';

const DEPENDENCY = z.object({
  taskId: z.string().min(1).describe('An earlier task of this registry.'),
  kind: z
    .enum(['blocking', 'parallel', 'optional'])
    .describe('blocking: wait for it to complete, fail if it fails; parallel: run at once; optional: wait for it to end, run either way.'),
});

const CREATE_TASK_INPUT = z.object({
  id: z.string().min(1).optional().describe('Task id (default: a random UUID); unique in the registry.'),
  skill: z.string().min(1).optional().describe('The skill wanted: matched against card skills (id, name, tags), case-insensitively.'),
  agent: z.string().min(1).optional().describe('A named agent (see list_agents) instead of a skill.'),
  message: z.string().describe('What the agent is asked.'),
  dependsOn: z.array(DEPENDENCY).optional(),
  wait: z.boolean().optional().describe('Wait until the task has completed or failed, or asks for input.'),
});
const LIST_AGENTS_INPUT = z.object({ skill: z.string().optional().describe('Only agents with this skill.') });
const AGENT_MESSAGE_INPUT = z.object({
  agent: z.string().min(1).optional().describe('The agent id (see list_agents).'),
  message: z.string(),
  taskId: z.string().min(1).optional().describe('Instead of an agent: a task waiting for input (input-required); the message is its answer.'),
});
const GET_TASK_STATUS_INPUT = z.object({ taskId: z.string().min(1), wait: z.boolean().optional().describe('Wait until the task has ended or asks for input.') });

const CANCEL_TASK_INPUT = z.object({ taskId: z.string().min(1), reason: z.string().min(1).optional().describe('Why (kept as the task’s error).') });

const TASK_STATE = z.enum(['submitted', 'working', 'input-required', 'completed', 'failed', 'canceled']);
const TASK_OUTPUT = z.object({
  id: z.string(),
  skill: z.string().optional(),
  requestedAgent: z.string().optional(),
  message: z.string(),
  dependsOn: z.array(DEPENDENCY),
  state: TASK_STATE,
  agentId: z.string().optional(),
  result: z.string().optional(),
  error: z.string().optional(),
  question: z.string().optional(),
  submittedAt: z.number(),
  startedAt: z.number().optional(),
  endedAt: z.number().optional(),
  history: z.array(z.object({ state: TASK_STATE, at: z.number(), agentId: z.string().optional(), error: z.string().optional() })),
});
const SKILL = z.object({ id: z.string(), name: z.string(), description: z.string(), tags: z.array(z.string()) });
const AGENT_OUTPUT = z.object({
  id: z.string(),
  kind: z.enum(['remote', 'local']),
  name: z.string(),
  description: z.string(),
  cardUrl: z.string().optional(),
  endpoint: z.string().optional(),
  skills: z.array(SKILL),
  health: z.enum(['unknown', 'healthy', 'unhealthy']),
  load: z.number(),
  order: z.number(),
  registeredAt: z.number(),
  lastChecked: z.number().optional(),
  lastHealthy: z.number().optional(),
  lastError: z.string().optional(),
});
const LIST_AGENTS_OUTPUT = z.object({ agents: z.array(AGENT_OUTPUT) });
const AGENT_MESSAGE_OUTPUT = z.object({ agent: z.string(), answer: z.string().optional(), task: TASK_OUTPUT.optional() });

/** Adds `create_task`, `list_agents`, `agent_message`, `get_task_status` and `cancel_task` for `registry` to `server`. */
export function registerRegistryTools(server: McpServer, registry: AgentRegistry): void {
  server.registerTool(
    'create_task',
    {
      title: 'Create a task',
      description:
        'Dispatches a task to the best healthy agent for a skill (least loaded, first registered on ties) or to a named agent, ' +
        'after its dependencies allow. Returns the task; poll get_task_status, or pass wait: true.',
      inputSchema: CREATE_TASK_INPUT,
      outputSchema: TASK_OUTPUT,
    },
    ({ wait, ...spec }, ctx) =>
      safely(async () => {
        const task = registry.dispatch(spec);
        return answer(wait ? await registry.wait(task.id, ctx.mcpReq.signal) : task);
      }),
  );

  server.registerTool(
    'list_agents',
    {
      title: 'List agents',
      description: 'The registered agents: health (with last check and last healthy times), skills, and current load.',
      inputSchema: LIST_AGENTS_INPUT,
      outputSchema: LIST_AGENTS_OUTPUT,
      annotations: { readOnlyHint: true },
    },
    ({ skill }) => safely(async () => answer({ agents: registry.agents(skill ? { skill } : {}) })),
  );

  server.registerTool(
    'agent_message',
    {
      title: 'Message an agent',
      description:
        'Sends a message to a named agent over A2A and returns its answer; or, with taskId instead of agent, answers the question ' +
        'of a task in input-required and returns the task (working again).',
      inputSchema: AGENT_MESSAGE_INPUT,
      outputSchema: AGENT_MESSAGE_OUTPUT,
    },
    ({ agent, message, taskId }, ctx) =>
      safely(async () => {
        if (taskId !== undefined) {
          const task = registry.answer(taskId, message);
          return answer({ agent: task.agentId ?? '', task });
        }
        if (agent === undefined) throw new TeamError('agent_message needs an agent, or a taskId to answer', 'invalid-task');
        return answer({ agent, answer: await registry.message(agent, message, ctx.mcpReq.signal) });
      }),
  );

  server.registerTool(
    'get_task_status',
    {
      title: 'Task status',
      description:
        'A task: submitted, working, input-required (with the question: answer it with agent_message and taskId), completed (with the result), ' +
        'failed (with the error) or canceled, its agent and timestamps. wait: true waits until it has ended or asks for input.',
      inputSchema: GET_TASK_STATUS_INPUT,
      outputSchema: TASK_OUTPUT,
      annotations: { readOnlyHint: true },
    },
    ({ taskId, wait }, ctx) =>
      safely(async () => {
        const task = wait ? await registry.wait(taskId, ctx.mcpReq.signal) : registry.task(taskId);
        if (!task) throw new TeamError(`No task "${taskId}"`, 'unknown-task');
        return answer(task);
      }),
  );

  server.registerTool(
    'cancel_task',
    {
      title: 'Cancel a task',
      description:
        'Cancels a task that has not ended (submitted, working or input-required): it is canceled at once, and the A2A task it went to ' +
        'is canceled on its agent. Returns the task (canceled). A completed or failed task cannot be canceled.',
      inputSchema: CANCEL_TASK_INPUT,
      outputSchema: TASK_OUTPUT,
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    ({ taskId, reason }) => safely(async () => answer(registry.cancel(taskId, reason))),
  );
}

/** A tool result: the JSON as text (for models) and as structured content (for programs). */
function answer(value: object): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
}

/** Runs a tool body; an error becomes an `isError` result, prefixed with its code when it has one. */
async function safely(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (e) {
    const text = e instanceof TeamError ? `${e.code}: ${e.message}` : errorText(e);
    return { isError: true, content: [{ type: 'text', text }] };
  }
}
