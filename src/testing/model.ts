/**
 * The scripted model of one path: a pure function of each request (who speaks, what they were
 * asked, how many results they have read), so a runtime that restarts the swarm after a crash
 * gets exactly the answers the first one got. Arguments are sampled from the JSON Schema of the
 * tools the request offers, unless the options give them.
 *
 * @module
 */
import type { ChatMessage, ModelResponse, ToolSpec } from '../../machines/messages.js';
import type { Model, ModelRequest } from '../../actors/ports.js';
import { scriptedModel } from '../models/scripted.js';
import type { PathRun } from './control.js';
import type { PathStep } from './paths.js';
import { sampleOf } from './sample.js';

/** What the testing model answers with, where sampling from the schemas is not enough. */
export interface ModelSamples {
  /** Arguments per tool name (the orchestrator's and the agents' tools). */
  args?: Readonly<Record<string, unknown>>;
  /** The swarm's result (the `complete` call's `result`), per swarm id; default: sampled from the result schema. */
  results?: Readonly<Record<string, unknown>>;
}

const STEP = /\bstep (\d+)\b/;
/** Usage reported by each answer of a budget path, so a token or USD budget trips as well as a call count. */
const BUDGET_USAGE = { inputTokens: 2_000, outputTokens: 1_000 };

/** The scripted model of `run` (see the module comment). */
export function pathModel(run: PathRun, samples: ModelSamples = {}): Model {
  const root = run.shape.definition.id;
  return scriptedModel(async (req) => {
    const response = await answer(req);
    return run.path.control.loop === 'budget' ? { ...response, usage: BUDGET_USAGE } : response;
  }, 'xswarm/testing');

  async function answer(req: ModelRequest): Promise<ModelResponse> {
    if (req.purpose === 'summary') return { text: 'A summary of the earlier turns.' };
    const orchestrator = req.tools.some((t) => t.name === 'complete');
    if (orchestrator && req.swarmId === run.swarmId && req.agentId === root) return orchestrate(req);
    if (orchestrator) return childSwarm(req);
    return agent(req);
  }

  async function orchestrate(req: ModelRequest): Promise<ModelResponse> {
    const n = req.messages.filter((m) => m.role === 'tool').length;
    if (n === 0 && run.interruptsModel()) await run.interrupt(req.signal);
    const { steps, control } = run.path;
    const step = control.loop ? steps[0] : steps[n];
    if (!step) return complete(req, root);
    return act(req, step, n);
  }

  function act(req: ModelRequest, step: PathStep, n: number): ModelResponse {
    const id = `s${n}`;
    if (step.do === 'fail') return callOf(id, 'fail', { reason: 'The test path gives up.' });
    if (step.do === 'pause') return callOf(id, 'pause', { reason: 'A question from the test path' });
    if (step.do === 'tool') return callOf(id, step.tool.tool.name, argsFor(req, step.tool.tool.name));
    const spec = specOf(req, step.target.toolName);
    const args = { ...(sampleOf(spec?.parameters) as Record<string, unknown>) };
    // The step's number rides in a text request, so the agent (or child) knows its part.
    if (typeof args.request === 'string' || spec === undefined) args.request = `step ${n}`;
    return callOf(id, step.target.toolName, args);
  }

  /** An agent: calls the tool its step names (once), then answers. */
  function agent(req: ModelRequest): ModelResponse {
    const last = req.messages.at(-1);
    if (last?.role === 'tool') return { text: `${req.agentId} is done.` };
    const step = stepFor(req.messages, req.agentId);
    const tool = step?.do === 'handoff' ? step.agentTool : undefined;
    if (!tool) return { text: `${req.agentId} answers.` };
    const n = req.messages.filter((m) => m.role === 'user').length;
    return callOf(`a${n}`, tool.tool.tool.name, argsFor(req, tool.tool.tool.name));
  }

  /** A child swarm: completes at once, or fails where the path says. */
  function childSwarm(req: ModelRequest): ModelResponse {
    const step = stepFor(req.messages, req.agentId);
    if (step?.do === 'handoff' && step.child === 'fail') return callOf('c0', 'fail', { reason: 'failed by the test path' });
    return complete(req, req.agentId);
  }

  /** The step a speaker plays a part in: named in its request (`step N`), else the first naming it. */
  function stepFor(messages: readonly ChatMessage[], speaker: string): PathStep | undefined {
    const asked = [...messages].reverse().find((m) => m.role === 'user');
    const n = asked ? STEP.exec(asked.content)?.[1] : undefined;
    const { steps, control } = run.path;
    if (n !== undefined) return control.loop ? steps[0] : steps[Number(n)];
    return steps.find((s) => s.do === 'handoff' && s.target.id === speaker);
  }

  function complete(req: ModelRequest, swarm: string): ModelResponse {
    const given = samples.results?.[swarm];
    const spec = specOf(req, 'complete');
    const result = given !== undefined ? given : sampleOf((spec?.parameters.properties as Record<string, unknown> | undefined)?.result);
    return callOf('done', 'complete', { result });
  }

  function argsFor(req: ModelRequest, tool: string): unknown {
    return samples.args?.[tool] ?? sampleOf(specOf(req, tool)?.parameters);
  }
}

function specOf(req: ModelRequest, name: string): ToolSpec | undefined {
  return req.tools.find((t) => t.name === name);
}

function callOf(id: string, name: string, args: unknown): ModelResponse {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}
