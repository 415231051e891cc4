/**
 * The judge with its guardrails around it: each model response's guardrails before the judge
 * (`judge.ts`), each planned tool call's after it, before the call runs: the place approvals
 * and budgets hook into as well. Output guardrails run inside the judge (`guardResult`).
 *
 * @module
 */
import type { ModelStepInput } from '../machines/contracts.js';
import type { ModelResponse } from '../machines/messages.js';
import type { StepVerdict } from '../machines/plan.js';
import { after, type Maybe, siteOf, verdictOf } from './guardrails.js';
import { type Judgement, judgeResponse } from './judge.js';
import type { GuardDecision, GuardSite, SwarmPorts } from './ports.js';

/**
 * The judgement with its tool calls guarded, in the model's order: a blocked call becomes an
 * invalid one whose error the model reads, a rejection rejects the step, a pause holds it.
 */
function guardCalls(judgement: Judgement, input: ModelStepInput, site: GuardSite, ports: SwarmPorts): Maybe<Judgement> {
  const guard = ports.guard;
  if (!guard || judgement.verdict.type !== 'continue') return judgement;
  // Copied on the first block only: most steps change nothing.
  let calls = judgement.calls;
  let paused: StepVerdict | undefined;
  // The decision on call `i`: the finished judgement when it rejects, else undefined.
  const apply = (i: number, d: GuardDecision | undefined): Judgement | undefined => {
    const call = calls[i]!;
    if (!d) return undefined;
    if (d.action === 'block') {
      if (calls === judgement.calls) calls = [...calls];
      calls[i] = { id: call.id, name: call.name, kind: 'invalid', error: `Guardrail "${d.guardrail}" blocked this call: ${d.reason}` };
      return undefined;
    }
    const verdict = verdictOf(d, 'toolCall', `the call to "${call.name}"`, { type: 'continue' }, input.orchestrator, call.id);
    if (verdict.type === 'reject') return { calls: [], verdict };
    paused ??= verdict;
    return undefined;
  };
  const from = (start: number): Maybe<Judgement> => {
    for (let i = start; i < calls.length; i++) {
      const call = calls[i]!;
      if (call.kind !== 'tool') continue;
      // The arguments as the model sent them (they parsed when planned): the ports parse them
      // for the guardrails, when there are any.
      const d = guard('toolCall', site, { name: call.name, arguments: call.arguments, callId: call.id, agentId: input.speaker });
      if (d instanceof Promise) return d.then((x) => apply(i, x) ?? from(i + 1));
      const done = apply(i, d);
      if (done) return done;
    }
    return { calls, verdict: paused ?? judgement.verdict };
  };
  return from(0);
}

/**
 * Judges a model response with its guardrails: the response's run first (a rejection skips
 * the judge), then the judge plans the calls and decides (output guardrails included), then
 * each planned tool call is guarded. A response guardrail's pause holds whatever was decided.
 */
export function judgeStep(response: ModelResponse, input: ModelStepInput, ports: SwarmPorts): Maybe<Judgement> {
  const site = siteOf(input);
  const decided = ports.guard?.('response', site, response);
  const judge = (d: GuardDecision | undefined): Maybe<Judgement> => {
    if (d && (d.action !== 'pause' || !input.orchestrator)) {
      return { calls: [], verdict: verdictOf({ ...d, action: 'reject' }, 'response', 'the response', { type: 'continue' }, input.orchestrator) };
    }
    const judged = after(judgeResponse(response, input, ports), (j) => guardCalls(j, input, site, ports));
    if (!d) return judged;
    return after(judged, (j): Judgement => {
      const v = j.verdict;
      if (v.type === 'reject' || v.type === 'pause') return j;
      return { calls: j.calls, verdict: verdictOf(d, 'response', 'the response', v, true) };
    });
  };
  return decided === undefined ? judge(undefined) : after(decided, judge);
}
