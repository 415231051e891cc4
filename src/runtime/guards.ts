/**
 * The runtime's side of guardrails: which guardrails guard a step (a swarm definition's, an
 * agent's, or an ad-hoc swarm's by name) and running them in order until one rejects.
 *
 * @module
 */
import type { GuardDecision, GuardSite } from '../../actors/index.js';
import { errorText } from '../../machines/error-text.js';
import type { GuardrailNames, GuardrailStep } from '../../machines/guardrail.js';
import type { Catalog } from '../catalog/catalog.js';
import type { GuardedToolCall, Guardrail } from '../define/guardrail.js';

const NONE: readonly Guardrail<unknown>[] = [];

/** A stand-in for a guardrail an ad-hoc swarm names but this runtime does not know: it rejects (fail closed). */
function unknownGuardrail(name: string): Guardrail<unknown> {
  return { name, check: () => 'this guardrail is not registered with the runtime (createRuntime({ guardrails }))' };
}

/**
 * The guardrails of `step` at `site`: the orchestrator's come from its swarm definition and,
 * for an ad-hoc swarm, from the names in its configuration; an agent's from its definition.
 * `version`: the definition version the swarm runs on (absent: the current one).
 */
export function guardrailsOf(catalog: Catalog, step: GuardrailStep, site: GuardSite, names: GuardrailNames | undefined, version?: number): readonly Guardrail<unknown>[] {
  if (!site.orchestrator) {
    if (step !== 'response' && step !== 'toolCall') return NONE;
    return (catalog.agent(site.speaker)?.guardrails?.[step] as readonly Guardrail<unknown>[] | undefined) ?? NONE;
  }
  const own = (catalog.swarm(site.definitionId, version)?.guardrails[step] as readonly Guardrail<unknown>[] | undefined) ?? NONE;
  const named = names?.[step];
  if (!named || named.length === 0) return own;
  return [...own, ...named.map((name) => catalog.guardrail(name) ?? unknownGuardrail(name))];
}

/**
 * A tool call as its guardrails see it: the actors pass the arguments as the model's JSON text
 * (they parsed when the call was planned), parsed here only for guardrails that read them.
 */
export function guardedToolCall(value: unknown): GuardedToolCall {
  const call = value as Omit<GuardedToolCall, 'arguments'> & { arguments: string };
  let args: Record<string, unknown> = {};
  try {
    args = JSON.parse(call.arguments.trim() === '' ? '{}' : call.arguments) as Record<string, unknown>;
  } catch {
    // Planned calls' arguments always parse; an empty object is all a guardrail could read.
  }
  return { name: call.name, arguments: args, callId: call.callId, agentId: call.agentId };
}

/**
 * The first rejection of `guardrails` for `value`, or undefined when all allow it. A check that
 * throws rejects, whatever its `onReject` says (fail closed), naming the error.
 */
export async function runGuards(guardrails: readonly Guardrail<unknown>[], value: unknown, swarmId: string): Promise<GuardDecision | undefined> {
  for (const g of guardrails) {
    let verdict: true | string;
    try {
      verdict = await g.check(value, { swarmId });
    } catch (e) {
      return { guardrail: g.name, reason: `the guardrail threw an error: ${errorText(e)}`, action: 'reject' };
    }
    if (verdict !== true) return { guardrail: g.name, reason: typeof verdict === 'string' && verdict ? verdict : 'rejected', action: g.onReject ?? 'reject' };
  }
  return undefined;
}
