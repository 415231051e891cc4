/**
 * The `runTool` actor: executes one regular tool call.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import { errorText } from '../machines/error-text.js';
import type { ToolRunInput } from '../machines/calls/tool.js';
import type { CallResult } from '../machines/calls/kind.js';
import { filesOf } from '../machines/file-parts.js';
import { type CallTimeoutError, isCallTimeout, withinDeadline } from './call-timeout.js';
import { gatedCall } from './durable-gate.js';
import type { SwarmPorts } from './ports.js';

/**
 * Creates the `runTool` actor logic. A failing tool, invalid arguments, a result that cannot
 * be serialized or a call past its deadline (the tool's `timeoutMs`) become `{ ok: false }`
 * results for the model to read; it rejects only when its swarm was stopped before the tool
 * began, which nobody reads.
 */
export function createRunTool(ports: SwarmPorts) {
  return fromPromise<CallResult, ToolRunInput>(({ input, signal }) =>
    gatedCall(ports, input.swarmId, signal, () =>
      ports.traceToolCall ? ports.traceToolCall(input, () => runTool(ports, input, signal)) : runTool(ports, input, signal),
    ),
  );
}

/** One tool call, past its durability gate. */
async function runTool(ports: SwarmPorts, input: ToolRunInput, signal: AbortSignal): Promise<CallResult> {
  let args: unknown;
  try {
    args = JSON.parse(input.arguments);
  } catch (e) {
    return { ok: false, content: `Arguments for "${input.name}" are not valid JSON: ${(e as Error).message}` };
  }
  const checked = ports.checkToolArgs(input.name, args);
  if (!checked.ok) return { ok: false, content: `Invalid arguments for "${input.name}": ${checked.error}` };
  // Reserved before the tool runs (a swarm without a budget gets undefined at once); a call
  // that ran counts, whatever its outcome.
  const reserving = ports.reserveToolCall?.(input, signal);
  if (reserving) (await reserving)();
  const timedOut = (e: CallTimeoutError): CallResult => ({
    ok: false,
    content: `Tool "${input.name}" ${e.message}`,
    ...(input.timeout?.fails ? { failsSwarm: true as const } : {}),
  });
  return withinDeadline(
    input.timeout,
    signal,
    async (bounded) => {
      try {
        const value = await ports.executeTool(input, checked.value, bounded);
        // Files it returned become an artifact too; the model reads the value as it does any other.
        const files = filesOf(value);
        return { ok: true, content: toContent(value), ...(files ? { files } : {}) };
      } catch (e) {
        // A tool that rejects with its aborted signal's reason at the deadline timed out.
        if (isCallTimeout(e)) return timedOut(e);
        return { ok: false, content: `Tool "${input.name}" failed: ${errorText(e)}` };
      }
    },
    timedOut,
  );
}

/** What the model reads for a tool's return value: strings as they are, the rest as JSON. */
function toContent(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'null';
  const json = JSON.stringify(value);
  if (json === undefined) throw new Error(`returned a ${typeof value}, which cannot be sent to a model`);
  return json;
}
