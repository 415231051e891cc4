/**
 * Customer-support triage with LLM-driven customization. The triage orchestrator looks the
 * customer up with `lookup_customer`; for a VIP it hands the ticket to the `support` child
 * swarm with a `customization` (extra instructions, the `escalation-agent`, the `issue_refund`
 * tool, more turns), for anyone else it hands off to the plain child. The customized child
 * refunds and escalates; the plain one points to the refund policy.
 *
 * @example
 * const { runtime } = createTriageRuntime({ env: {} });
 * const vip = runtime.forSwarm(supportTriage, 'vip');
 * await vip.run('Customer C-1001: I was charged twice for order #4417.');
 * (await vip.wait()) // { status: 'completed', result: { tier: 'vip', customized: true, actions: ['billing-agent', 'issue_refund', 'escalation-agent'], … } }
 *
 * @module
 */
import { z } from 'zod';
import { createRuntime, defineSwarm, handoff, tool } from '../../src/index.js';
import { chooseModel, type ExampleRuntime, type ExampleRuntimeOptions } from '../shared/demo.js';
import { createTriageDemoModel, SUPPORT_TRIAGE_ID } from './model.js';
import { billingAgent, escalationAgent, issueRefund, support, SupportOutcome } from './support.js';

export {
  billingAgent,
  escalationAgent,
  issueRefund,
  openPriorityCase,
  orderHistory,
  searchHelpCenter,
  support,
  SupportOutcome,
} from './support.js';
export { createTriageDemoModel, vipCustomization } from './model.js';

/** The fake customer database. */
const CUSTOMERS: Record<string, { name: string; tier: 'vip' | 'standard'; since: number; lifetimeValueEur: number }> = {
  'C-1001': { name: 'Ada Lovelace', tier: 'vip', since: 2016, lifetimeValueEur: 12480 },
  'C-2002': { name: 'Sam Taylor', tier: 'standard', since: 2024, lifetimeValueEur: 139 },
};

/**
 * `lookup_customer({customer_id})`: the customer's record, with the tier that decides the
 * VIP path.
 *
 * @example
 * await lookupCustomer.execute({ customer_id: 'C-1001' }, ctx) // { found: true, id: 'C-1001', name: 'Ada Lovelace', tier: 'vip', … }
 */
export const lookupCustomer = tool({
  name: 'lookup_customer',
  description: 'Looks a customer up by id (like C-1001): name, tier ("vip" or "standard"), customer since, lifetime value.',
  parameters: z.object({ customer_id: z.string() }),
  execute: ({ customer_id }) => {
    const id = customer_id.trim().toUpperCase();
    const c = CUSTOMERS[id];
    return c ? { found: true, id, ...c } : { found: false, id };
  },
});

/**
 * The triage result.
 *
 * @example
 * TriageResult.parse({ customer: 'Sam Taylor', tier: 'standard', customized: false, resolution: '…', actions: ['billing-agent'] });
 */
export const TriageResult = SupportOutcome.extend({
  customer: z.string(),
  tier: z.enum(['vip', 'standard']),
  customized: z.boolean().describe('Whether support ran with a VIP customization'),
});

/**
 * The triage result's type.
 *
 * @example
 * const isVip = (r: TriageResult) => r.tier === 'vip';
 */
export type TriageResult = z.output<typeof TriageResult>;

/**
 * The triage swarm: input is the customer's message, which names their customer id.
 *
 * @example
 * const client = runtime.forSwarm(supportTriage); // SwarmClient<string, TriageResult>
 */
export const supportTriage = defineSwarm({
  id: SUPPORT_TRIAGE_ID,
  name: 'Support Triage',
  description: 'Triages customer tickets: looks the customer up and routes the ticket to support, customized for VIPs.',
  input: z.string().min(1),
  result: TriageResult,
  instructions: [
    'You triage customer support tickets.',
    '1. Call lookup_customer with the customer id in the message (like C-1001).',
    "2. Hand the ticket off to support, with the customer's name and id in the request.",
    '   For a VIP (tier "vip") pass a customization: additional_instructions saying the customer is a VIP to resolve on first contact',
    `   (refund verified billing errors at once, escalate for a personal follow-up), additional_agents ["${escalationAgent.id}"],`,
    `   additional_tools ["${issueRefund.name}"], max_turns_override 8. For anyone else, hand off without a customization.`,
    "3. Call complete with the customer's name, their tier, whether you customized support, and support's resolution and actions.",
  ].join('\n'),
  tools: [lookupCustomer],
  handoffs: [
    handoff
      .toSwarm(support)
      .withDescription('First-line support: checks billing and resolves the ticket. Customize it to give it more agents, tools or turns.')
      .customizable(),
  ],
  maxTurns: 5,
});

/**
 * Creates a runtime with triage, support and both agents; `issue_refund` is registered as a
 * runtime tool, so customizations may add it by name.
 *
 * @example
 * const { runtime } = createTriageRuntime({ env: {}, demo: { latencyMs: [0, 0] } });
 */
export function createTriageRuntime(options: ExampleRuntimeOptions = {}): ExampleRuntime {
  const { model, offline } = chooseModel(options, () => createTriageDemoModel(options.demo));
  const runtime = createRuntime({
    swarms: [supportTriage, support],
    agents: [billingAgent, escalationAgent],
    tools: [issueRefund],
    model,
    ...(options.store ? { store: options.store } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  return { runtime, model, offline };
}
