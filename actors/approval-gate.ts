/**
 * The approval gate of tool calls (`tool({ needsApproval })`): after a response is judged, each
 * tool call whose tool asks for approval (and was not approved for the rest of the run) becomes a
 * gated call carrying a fresh approval id. The rule is a function, which no snapshot can hold: it
 * is evaluated here, once, and only its outcome (the gated call, with its id) is recorded — in the
 * round and in the step's `internal:llm-call` event, so a replay reuses the ids it made.
 *
 * @module
 */
import type { PlannedCall } from '../machines/calls/index.js';
import type { PlannedToolCall } from '../machines/calls/tool.js';
import type { ModelStepInput } from '../machines/contracts.js';
import type { SwarmPorts } from './ports.js';

/**
 * A new approval id: 128 random bits, so a client that did not receive the request cannot name
 * it, and no id of another swarm, pause or run ever matches.
 */
export function newApprovalId(): string {
  // Web Crypto (a global of Node), as actors import no package: a CSPRNG, not Math.random.
  return `apr_${Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(16))).toString('base64url')}`;
}

/**
 * `calls` with every tool call that needs approval gated. Answers at once (the same array) when
 * no tool of the step has a rule, as for most swarms; a rule that throws gates its call (fail
 * closed).
 */
export function gateCalls(calls: PlannedCall[], input: ModelStepInput, ports: SwarmPorts): PlannedCall[] | Promise<PlannedCall[]> {
  if (!ports.approvalRule) return calls;
  let gated: PlannedCall[] | undefined;
  let waits: Promise<void>[] | undefined;
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    if (call.kind !== 'tool' || input.approvedTools?.includes(call.name)) continue;
    const rule = ports.approvalRule(call.name);
    if (!rule) continue;
    gated ??= calls.slice();
    const index = i;
    let verdict: boolean | Promise<boolean>;
    try {
      const checked = ports.checkToolArgs(call.name, JSON.parse(call.arguments));
      verdict = rule(checked.ok ? checked.value : {}, { swarmId: input.swarmId, agentId: input.speaker, toolCallId: call.id });
    } catch {
      verdict = true;
    }
    if (verdict instanceof Promise) {
      const list = gated;
      (waits ??= []).push(
        verdict
          .then(
            (v) => v !== false,
            () => true,
          )
          .then((v) => void (v && (list[index] = gate(call)))),
      );
    } else if (verdict !== false) {
      gated[index] = gate(call);
    }
  }
  if (!gated) return calls;
  const result = gated;
  return waits ? Promise.all(waits).then(() => result) : result;
}

function gate(call: PlannedToolCall): PlannedCall {
  return { ...call, kind: 'gated', approvalId: newApprovalId() };
}
