/**
 * The MCP tools that answer a swarm's approvals: `<name>_approve` `{ swarmId, approvalId,
 * always?, wait? }` and `<name>_reject` `{ swarmId, approvalId, reason, wait? }`. A paused
 * result (`<name>_run`, `<name>_get_result`) lists the pending approvals in
 * `reason.pendingApprovals`; a running one lists its child swarms' in `pendingApprovals`. An id
 * that is not pending comes back as an `isError` result, nothing changed.
 *
 * @module
 */
import type { CallToolResult, McpServer, ServerContext as McpContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { SwarmDefinition } from '../../define/swarm.js';
import type { Runtime } from '../../runtime/types.js';
import type { SwarmResult } from '../../store/result.js';

/** What the tools borrow from the swarm server (`swarm-server.ts`): one way to answer, to fail, to follow. */
export interface ApprovalToolHelpers {
  safely(body: () => Promise<CallToolResult>): Promise<CallToolResult>;
  answer(value: Record<string, unknown>): CallToolResult;
  ownSwarm(runtime: Runtime, definitionId: string, swarmId: string): Promise<void>;
  follow(runtime: Runtime, definitionId: string, swarmId: string, since: number, ctx: McpContext): Promise<SwarmResult>;
  lastSeq(runtime: Runtime, swarmId: string): Promise<number>;
}

const SWARM_ID = z.string().min(1).describe('The swarm instance id (what <id>_run returned).');
const APPROVAL_ID = z.string().min(1).describe('The approval id, from reason.pendingApprovals of the paused result (or pendingApprovals of a running one).');
const WAIT = z.boolean().optional().describe('Wait until the swarm completes, fails, is stopped or pauses again, like <id>_run.');
const APPROVE_INPUT = z.object({
  swarmId: SWARM_ID,
  approvalId: APPROVAL_ID,
  always: z.boolean().optional().describe('Approve this tool for the rest of the run: its later calls need no approval.'),
  wait: WAIT,
});
const REJECT_INPUT = z.object({
  swarmId: SWARM_ID,
  approvalId: APPROVAL_ID,
  reason: z.string().min(1).describe("Why the call is rejected: the model reads it as the call's result."),
  wait: WAIT,
});

/** Registers `<name>_approve` and `<name>_reject` for one definition. */
export function registerApprovalTools(server: McpServer, runtime: Runtime, entry: { def: SwarmDefinition; name: string; output: unknown }, h: ApprovalToolHelpers): void {
  const { def, name } = entry;
  const outputSchema = entry.output as never;
  const answered = async (swarmId: string, wait: boolean | undefined, ctx: McpContext, act: () => Promise<void>) => {
    await h.ownSwarm(runtime, def.id, swarmId);
    const since = await h.lastSeq(runtime, swarmId);
    await act();
    const result = wait ? await h.follow(runtime, def.id, swarmId, since, ctx) : await runtime.forSwarm(def.id, swarmId).getResult();
    return h.answer({ swarmId, ...result });
  };
  server.registerTool(
    `${name}_approve`,
    {
      title: `Approve a call of a ${def.name} swarm`,
      description: `Approves a tool call a swarm "${def.id}" waits for (paused with APPROVAL_NEEDED): the call runs; once every pending approval is answered the swarm goes on.`,
      inputSchema: APPROVE_INPUT,
      outputSchema,
    },
    ({ swarmId, approvalId, always, wait }, ctx) =>
      h.safely(() => answered(swarmId, wait, ctx, () => runtime.forSwarm(def.id, swarmId).approve(approvalId, always ? { always: true } : {}))),
  );
  server.registerTool(
    `${name}_reject`,
    {
      title: `Reject a call of a ${def.name} swarm`,
      description: `Rejects a tool call a swarm "${def.id}" waits for: it does not run, and the model reads the reason as its result.`,
      inputSchema: REJECT_INPUT,
      outputSchema,
      annotations: { destructiveHint: false },
    },
    ({ swarmId, approvalId, reason, wait }, ctx) => h.safely(() => answered(swarmId, wait, ctx, () => runtime.forSwarm(def.id, swarmId).reject(approvalId, reason))),
  );
}
