/**
 * The support-triage demo model: scripts for the triage orchestrator, the support swarm's
 * orchestrator and the billing and escalation agents. The support script decides from the
 * tools it was given, as a real model would: with `issue_refund` and `handoff_to_escalation_agent`
 * (the VIP customization) it refunds and escalates, without them it points to the policy.
 *
 * @module
 */
import { handoffToolName, type Model, type ModelRequest, type ModelResponse } from '../../src/index.js';
import { calls, createScriptedDemo, exchanges, inputOf, lastUserMessage, parseJson, type DemoModelOptions } from '../shared/demo.js';
import { billingAgent, escalationAgent, issueRefund, openPriorityCase, orderHistory, searchHelpCenter, support, type SupportOutcome } from './support.js';

/**
 * The triage swarm's id (declared here, not in index.ts, so the script can name it without
 * importing index.ts, which imports this module).
 *
 * @example
 * runtime.forSwarm(SUPPORT_TRIAGE_ID, 'vip')
 */
export const SUPPORT_TRIAGE_ID = 'support-triage';

/**
 * What a triage model adds to support for a VIP: one place, so the script and the docs agree.
 *
 * @example
 * vipCustomization('Ada Lovelace') // { additional_instructions: 'Ada Lovelace is a VIP…', additional_agents: ['escalation-agent'], … }
 */
export function vipCustomization(name: string) {
  return {
    additional_instructions: `${name} is a VIP customer: resolve on first contact. Refund verified billing errors at once with issue_refund, and hand the case to escalation-agent so a senior agent follows up personally.`,
    additional_agents: [escalationAgent.id],
    additional_tools: [issueRefund.name],
    max_turns_override: 8,
  };
}

/** The triage orchestrator: look the customer up, hand off (customized for VIPs), report. */
function triageScript(req: ModelRequest): ModelResponse {
  const ticket = inputOf(req.messages);
  const done = exchanges(req.messages);
  const lookup = done.find((e) => e.name === 'lookup_customer');
  const handed = done.find((e) => e.name === handoffToolName(support.id));
  const id = /\bC-\d{4}\b/i.exec(ticket)?.[0]?.toUpperCase();
  if (!lookup && id) return calls(req, [['lookup_customer', { customer_id: id }]]);
  const customer = parseJson<{ found: boolean; id: string; name: string; tier: 'vip' | 'standard' }>(lookup?.result);
  const known = customer?.found ? customer : undefined;
  const vip = known?.tier === 'vip';
  if (!handed) {
    const who = known ? `${known.name} (${known.id}, ${known.tier})` : 'an unidentified customer';
    const args = { request: `Ticket from ${who}: ${ticket}`, ...(vip ? { customization: vipCustomization(known.name) } : {}) };
    return calls(req, [[handoffToolName(support.id), args]]);
  }
  const outcome = parseJson<SupportOutcome>(handed.result);
  if (!outcome) return calls(req, [['fail', { reason: `Support could not resolve the ticket: ${handed.result}` }]]);
  const result = { customer: known?.name ?? 'unknown', tier: vip ? 'vip' : 'standard', customized: vip, ...outcome };
  return calls(req, [['complete', { result }]]);
}

/** The support orchestrator: billing first, then refund + escalate when it can, else policy. */
function supportScript(req: ModelRequest): ModelResponse {
  const ticket = inputOf(req.messages);
  const orderId = /order\s*#?\s*(\d{3,})/i.exec(ticket)?.[1];
  const done = exchanges(req.messages);
  const has = (name: string) => req.tools.some((t) => t.name === name);
  const result = (name: string) => done.find((e) => e.name === name)?.result;
  const billing = handoffToolName(billingAgent.id);
  const escalate = handoffToolName(escalationAgent.id);

  if (orderId && !done.some((e) => e.name === billing)) {
    return calls(req, [[billing, { request: `Check the payments of order ${orderId}: the customer reports being charged twice.` }]]);
  }
  const billed = result(billing) ?? '';
  const amount = Number(/(\d+(?:\.\d+)?) EUR/.exec(billed)?.[1] ?? 0);
  const duplicate = /duplicate/i.test(billed) && !/no duplicate/i.test(billed);
  // Use every extra capability the run was given, in one response: they run concurrently.
  const extra: [string, unknown][] = [];
  if (has(issueRefund.name) && duplicate && orderId && !done.some((e) => e.name === issueRefund.name)) {
    extra.push([issueRefund.name, { order_id: orderId, amount, reason: 'Duplicate charge' }]);
  }
  if (has(escalate) && !done.some((e) => e.name === escalate)) {
    extra.push([escalate, { request: `VIP ticket, please follow up personally: ${ticket}` }]);
  }
  if (extra.length > 0) return calls(req, extra);
  const acted = done.some((e) => e.name === issueRefund.name || e.name === escalate);
  if (!acted && !done.some((e) => e.name === searchHelpCenter.name)) {
    return calls(req, [[searchHelpCenter.name, { query: duplicate ? 'duplicate charge refund' : ticket }]]);
  }

  // Compose the answer from what the agents and tools said.
  const checked = orderId ? `We checked order #${orderId}: ${duplicate ? `you were charged ${amount} EUR twice.` : billed}` : '';
  const refund = parseJson<{ refund_id: string; arrives: string }>(result(issueRefund.name));
  const escalation = result(escalate);
  const article = parseJson<{ title: string; url: string; guidance: string }>(result(searchHelpCenter.name));
  const parts = [
    checked,
    refund ? `We refunded the duplicate ${amount} EUR right away (refund ${refund.refund_id}, arriving ${refund.arrives}).` : '',
    escalation ? escalation : '',
    article ? `${article.guidance} See "${article.title}": ${article.url}` : '',
  ];
  const actions = done.map((e) => (e.name.startsWith('handoff_to_') ? agentOf(e.name) : e.name));
  return calls(req, [['complete', { result: { resolution: parts.filter(Boolean).join(' '), actions } }]]);
}

/** The agent id behind a handoff tool name of this example. */
function agentOf(toolName: string): string {
  return [billingAgent, escalationAgent].find((a) => handoffToolName(a.id) === toolName)?.id ?? toolName;
}

/** The billing agent: read the order, then say what was charged. */
function billingScript(req: ModelRequest): ModelResponse {
  const last = req.messages.at(-1);
  if (last?.role === 'tool') {
    const o = parseJson<{ order_id: string; charges: { amount: number; at: string; card: string }[] }>(last.content);
    if (!o) return { text: `The billing system said: ${last.content}` };
    const [first] = o.charges;
    const twice = o.charges.length > 1 && o.charges.every((c) => c.amount === first!.amount);
    return {
      text: twice
        ? `Order ${o.order_id} was charged ${o.charges.length} times: ${first!.amount} EUR each, seconds apart on ${first!.card}. The second charge is a duplicate.`
        : `Order ${o.order_id} was charged once (${first?.amount ?? 0} EUR); no duplicate.`,
    };
  }
  const orderId = /order\s*#?\s*(\d{3,})/i.exec(lastUserMessage(req.messages))?.[1] ?? '';
  return calls(req, [[orderHistory.name, { order_id: orderId }]]);
}

/** The escalation agent: open a priority case, then report who owns it. */
function escalationScript(req: ModelRequest): ModelResponse {
  const last = req.messages.at(-1);
  if (last?.role === 'tool') {
    const c = parseJson<{ case_id: string; owner: string; follow_up: string }>(last.content);
    return { text: c ? `${c.owner} will follow up personally ${c.follow_up} (case ${c.case_id}).` : `Escalation failed: ${last.content}` };
  }
  return calls(req, [[openPriorityCase.name, { summary: lastUserMessage(req.messages).slice(0, 200) }]]);
}

/**
 * Creates the demo model of the support-triage example.
 *
 * @example
 * const model = createTriageDemoModel({ latencyMs: [0, 0], chunkDelayMs: 0 });
 */
export function createTriageDemoModel(options: DemoModelOptions = {}): Model {
  return createScriptedDemo(
    'support-triage demo',
    {
      [SUPPORT_TRIAGE_ID]: triageScript,
      [support.id]: supportScript,
      [billingAgent.id]: billingScript,
      [escalationAgent.id]: escalationScript,
    },
    options,
  );
}
