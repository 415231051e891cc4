/**
 * The support side of the triage example: the `support` child swarm with its own billing
 * agent and help-center tool, plus what only a customization can add to it: the
 * `escalation-agent` and the `issue_refund` tool, registered with the runtime but part of no
 * definition's own configuration.
 *
 * @module
 */
import { z } from 'zod';
import { defineAgent, defineSwarm, handoff, tool } from '../../src/index.js';
import { hash } from '../shared/demo.js';

/**
 * The fake order amount in EUR (stable per order id).
 *
 * @example
 * orderAmount('4417') // 89
 */
export function orderAmount(orderId: string): number {
  return orderId === '4417' ? 89 : 20 + (hash(orderId) % 150);
}

/**
 * `order_history({order_id})`: the payments of an order. Every demo order was charged twice,
 * the billing error the example's tickets complain about.
 *
 * @example
 * await orderHistory.execute({ order_id: '4417' }, ctx) // { order_id: '4417', charges: [{ amount: 89, … }, { amount: 89, … }], … }
 */
export const orderHistory = tool({
  name: 'order_history',
  description: 'Payments recorded for an order: each charge with its amount, date and card.',
  parameters: z.object({ order_id: z.string().describe('The order number, digits only') }),
  execute: ({ order_id }) => {
    const amount = orderAmount(order_id);
    const charge = (time: string) => ({ amount, currency: 'EUR', at: `2025-03-14T${time}Z`, card: 'visa •••• 4242' });
    return { order_id, item: 'Noise-cancelling headphones', charges: [charge('10:02:11'), charge('10:02:13')] };
  },
});

/**
 * `search_help_center({query})`: the best-matching help-center article.
 *
 * @example
 * await searchHelpCenter.execute({ query: 'duplicate charge' }, ctx) // { title: 'Duplicate charges', … }
 */
export const searchHelpCenter = tool({
  name: 'search_help_center',
  description: 'Searches the help center; returns the best-matching article with its key guidance.',
  parameters: z.object({ query: z.string() }),
  execute: ({ query }) =>
    /charge|refund|bill|payment/i.test(query)
      ? {
          title: 'Duplicate charges',
          url: 'https://help.example.com/billing/duplicate-charges',
          guidance: 'A verified duplicate charge is reversed automatically within 5-7 business days; no action is needed from the customer.',
        }
      : { title: 'Contact us', url: 'https://help.example.com/contact', guidance: 'Reply to the ticket; an agent answers within 2 business days.' },
});

/**
 * `issue_refund({order_id, amount, reason})`: refunds at once. Registered with the runtime
 * only, so a support swarm gets it only when a parent's customization adds it.
 *
 * @example
 * await issueRefund.execute({ order_id: '4417', amount: 89, reason: 'duplicate charge' }, ctx) // { refund_id: 'RF-…', status: 'issued', … }
 */
export const issueRefund = tool({
  name: 'issue_refund',
  description: 'Refunds an amount of an order to the original payment method immediately.',
  parameters: z.object({ order_id: z.string(), amount: z.number().positive(), reason: z.string() }),
  execute: ({ order_id, amount, reason }) => ({
    refund_id: `RF-${hash(`${order_id}|${amount}`).toString(36).toUpperCase().slice(0, 6)}`,
    order_id,
    amount,
    reason,
    status: 'issued',
    arrives: 'within 24 hours',
  }),
});

/**
 * `open_priority_case({summary})`: opens a case for the senior support team.
 *
 * @example
 * await openPriorityCase.execute({ summary: 'VIP double charge' }, ctx) // { case_id: 'PC-…', owner: 'Dana Kim (senior support)', … }
 */
export const openPriorityCase = tool({
  name: 'open_priority_case',
  description: 'Opens a priority case owned by a senior support agent, who follows up personally.',
  parameters: z.object({ summary: z.string() }),
  execute: ({ summary }) => ({
    case_id: `PC-${hash(summary).toString(36).toUpperCase().slice(0, 5)}`,
    owner: 'Dana Kim (senior support)',
    follow_up: 'within 1 hour',
  }),
});

/**
 * Checks orders and payments; part of the support swarm's own configuration.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * createRuntime({ agents: [billingAgent], swarms: [support], model });
 */
export const billingAgent = defineAgent({
  id: 'billing-agent',
  name: 'Billing Agent',
  description: "Checks an order's payments (charges, amounts, duplicates). Give it the order number.",
  instructions:
    'You check billing. Call order_history for the order in the request, then state in one or two sentences what was charged and whether there is a duplicate charge.',
  tools: [orderHistory],
});

/**
 * Escalates to the senior team. Registered with the runtime, in no swarm's handoffs: only a
 * customization adds it (the VIP path).
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * createRuntime({ agents: [billingAgent, escalationAgent], swarms: [support], model });
 */
export const escalationAgent = defineAgent({
  id: 'escalation-agent',
  name: 'Escalation Agent',
  description: 'Escalates a case to a senior support agent who follows up personally. Give it a short case summary.',
  instructions: 'You escalate cases. Call open_priority_case with the summary you are given, then answer with the case id, its owner and when they follow up.',
  tools: [openPriorityCase],
});

/**
 * What the support swarm returns.
 *
 * @example
 * SupportOutcome.parse({ resolution: 'Refunded.', actions: ['issue_refund'] });
 */
export const SupportOutcome = z.object({
  resolution: z.string().describe('What the customer is told'),
  actions: z.array(z.string()).describe('Agents consulted and tools used, in order'),
});

/**
 * The support outcome's type.
 *
 * @example
 * const o: SupportOutcome = { resolution: 'Refunded.', actions: ['issue_refund'] };
 */
export type SupportOutcome = z.output<typeof SupportOutcome>;

/**
 * First-line support: input is the ticket text. Its own configuration is deliberately modest
 * (a billing agent, the help center, 4 turns); a parent extends it per ticket through
 * `handoff.toSwarm(support).customizable()`.
 *
 * @example
 * const client = runtime.forSwarm(support); // SwarmClient<string, SupportOutcome>
 */
export const support = defineSwarm({
  id: 'support',
  name: 'Support',
  description: 'First-line customer support: checks billing, consults the help center and resolves the ticket.',
  input: z.string().min(1),
  result: SupportOutcome,
  instructions: [
    'You resolve a customer support ticket.',
    'If it mentions an order, hand off to billing-agent to check its payments first.',
    'Then resolve it with what you have: use the help center for policy, and any other tools or agents you are given when they fit.',
    'Call complete with the resolution for the customer and the list of agents and tools you used, in order.',
  ].join('\n'),
  handoffs: [handoff.toAgent(billingAgent)],
  tools: [searchHelpCenter],
  maxTurns: 4,
  customizable: true,
});
