/**
 * What a swarm definition offers to test, read from the definition itself: its handoff targets
 * (agents, child swarms, inline agents, remote agents), the tools of its orchestrator and of its
 * agents, its tools gated on approval, its guardrails, `maxTurns` and budget. Paths are derived
 * from this (`paths.ts`).
 *
 * @module
 */
import type { AgentDefinition } from '../define/agent.js';
import { handoffToolName, type Handoff } from '../define/handoff.js';
import { resolveFromInput, type SwarmDefinition, type ToolEntry } from '../define/swarm.js';
import { jsonSchemaOf, type Tool } from '../define/tool.js';
import { sampleOf } from './sample.js';
import type { GuardrailStep } from '../../machines/guardrail.js';

/** Whether a `tools` entry is a plain tool (not the swarm registry's tool set). */
export function isTool(entry: ToolEntry): entry is Tool {
  return (entry as { kind?: unknown }).kind === 'tool';
}

/** One handoff of a swarm, as its paths use it. */
export interface HandoffTarget {
  kind: 'agent' | 'swarm' | 'inline' | 'remote';
  /** The agent's, child swarm's or inline agent's id; for a remote agent, the name its test card gives it. */
  id: string;
  /** The `handoff_to_<id>` tool the model calls. */
  toolName: string;
  /** The tools of the agent (none for a child swarm or a remote agent). */
  tools: readonly Tool[];
  /** The child swarm's definition (kind `swarm`). */
  child?: SwarmDefinition;
  /** The agent card's URL (kind `remote`). */
  url?: string;
}

/** A tool and who calls it: the orchestrator (`owner` is the swarm's id) or an agent. */
export interface OwnedTool {
  owner: string;
  tool: Tool;
  /** For an agent's tool: the handoff that reaches the agent. */
  via?: HandoffTarget;
}

/** A guardrail of the swarm by its step and index in that step's list. */
export interface GuardrailRef {
  step: GuardrailStep;
  index: number;
  name: string;
  onReject: 'reject' | 'pause' | 'block';
}

/** What a swarm definition offers to test (see the module comment). */
export interface SwarmShape {
  definition: SwarmDefinition;
  input: unknown;
  targets: HandoffTarget[];
  /** The orchestrator's tools, then each agent's. */
  tools: OwnedTool[];
  /** Tools whose calls may wait for a human's approval (`needsApproval` set). */
  gated: OwnedTool[];
  guardrails: GuardrailRef[];
  maxTurns: number;
  hasBudget: boolean;
  /** What the paths leave out, and why (a registry tool set, a best-agent handoff). */
  skipped: string[];
}

/** Where `handoff.toAgent('id')` and `handoff.toSwarm('id')` by id are looked up. */
export interface ShapeLookup {
  agents?: readonly AgentDefinition[];
  swarms?: readonly SwarmDefinition<any, any>[];
}

/** The {@link SwarmShape} of `definition` for the run input `given` (default: a sample of its input schema). */
export function shapeOf(definition: SwarmDefinition<any, any>, given: unknown, lookup: ShapeLookup = {}): SwarmShape {
  const input = given !== undefined ? given : sampleOf(jsonSchemaOf(definition.input));
  const skipped: string[] = [];
  const targets: HandoffTarget[] = [];
  const handoffs = resolveFromInput(definition.handoffs, input) as readonly Handoff[];
  handoffs.forEach((h, i) => {
    const target = targetOf(h, i, lookup, skipped);
    if (target) targets.push(target);
  });
  const own = (resolveFromInput(definition.tools, input) as readonly ToolEntry[]).filter((entry) => {
    if (isTool(entry)) return true;
    skipped.push('the swarm registry tools (their answers come from the runtime, not from a tool to script)');
    return false;
  }) as Tool[];
  const tools: OwnedTool[] = [
    ...own.map((tool) => ({ owner: definition.id, tool })),
    ...targets.flatMap((via) => via.tools.map((tool) => ({ owner: via.id, tool, via }))),
  ];
  const guardrails: GuardrailRef[] = [];
  for (const step of ['input', 'response', 'toolCall', 'output'] as const) {
    (definition.guardrails[step] ?? []).forEach((g, index) => guardrails.push({ step, index, name: g.name, onReject: g.onReject ?? 'reject' }));
  }
  return {
    definition,
    input,
    targets,
    tools,
    gated: tools.filter((t) => t.tool.needsApproval !== undefined && t.tool.needsApproval !== false),
    guardrails,
    maxTurns: resolveFromInput(definition.maxTurns, input) as number,
    hasBudget: definition.budget !== undefined,
    skipped,
  };
}

/** The test card name of the remote handoff at `index` (what the testing remote client answers). */
export function remoteName(index: number): string {
  return `remote-agent-${index + 1}`;
}

function targetOf(h: Handoff, index: number, lookup: ShapeLookup, skipped: string[]): HandoffTarget | undefined {
  switch (h.kind) {
    case 'agent': {
      const agent = typeof h.agent === 'string' ? lookup.agents?.find((a) => a.id === h.agent) : h.agent;
      if (!agent) throw new Error(`describeSwarm: the handoff to agent "${String(h.agent)}" names an agent not given in the options' agents`);
      return { kind: 'agent', id: agent.id, toolName: handoffToolName(agent.id), tools: agent.tools };
    }
    case 'swarm': {
      const child = typeof h.swarm === 'string' ? lookup.swarms?.find((s) => s.id === h.swarm) : h.swarm;
      if (!child) throw new Error(`describeSwarm: the handoff to swarm "${String(h.swarm)}" names a swarm not given in the options' swarms`);
      return { kind: 'swarm', id: child.id, toolName: handoffToolName(child.id), tools: [], child };
    }
    case 'inline':
      return { kind: 'inline', id: h.id, toolName: handoffToolName(h.id), tools: h.tools };
    case 'remote': {
      const id = remoteName(index);
      return { kind: 'remote', id, toolName: handoffToolName(id), tools: [], url: h.url };
    }
    case 'best':
      skipped.push(`the best-agent handoff for "${h.skill}" (its agent is chosen from a registry when the call runs)`);
      return undefined;
  }
}
