/**
 * The planning vocabulary: what the machines know of a model response once it has been judged
 * (`actors/judge.ts`, handoffs in `actors/plan-handoff.ts`). Plain JSON, because planned calls and
 * verdicts live in snapshots and in the `internal:llm-call` replay journal.
 *
 * @module
 */
import type { PauseReason } from './events.js';

/** A handoff as the machine knows it once a definition is resolved: names only, JSON-safe. */
export type HandoffTarget =
  | {
      /** The tool name the model calls, `handoff_to_<id>`. */
      toolName: string;
      kind: 'agent';
      agentId: string;
      description: string;
    }
  | {
      toolName: string;
      kind: 'remote';
      /** The remote agent's name (from its A2A agent card). */
      agentId: string;
      /** Where its agent card is. */
      url: string;
      description: string;
    }
  | {
      toolName: string;
      kind: 'swarm';
      /** The child swarm's definition id. */
      definitionId: string;
      description: string;
      /** The child takes structured input: the tool's parameters are its input schema. */
      structured: boolean;
      /** The tool has a `customization` argument. */
      customizable: boolean;
    };

/**
 * How a parent's model may extend a customizable child swarm for one run. It only ever adds
 * to the child's own configuration.
 */
export interface Customization {
  additional_instructions?: string;
  additional_agents?: string[];
  additional_tools?: string[];
  max_turns_override?: number;
}

/**
 * A tool call after the runtime parsed and checked it against the definition.
 * `invalid` carries the error text that goes back to the model as the tool result.
 */
export type PlannedCall =
  | { id: string; name: string; kind: 'tool'; arguments: string }
  | { id: string; name: string; kind: 'agent'; agentId: string; request: string }
  | { id: string; name: string; kind: 'remote'; agentId: string; url: string; request: string }
  | { id: string; name: string; kind: 'swarm'; definitionId: string; input: unknown; customization?: Customization }
  | { id: string; name: string; kind: 'pause'; reason: PauseReason }
  | { id: string; name: string; kind: 'invalid'; error: string };

/**
 * What the runtime concluded from a model response, before any call runs.
 * `continue`: run the planned calls. `complete`/`fail`: terminate. `correct`: no calls to run;
 * feed `message` back to the model as a correction (it counts as a round).
 */
export type StepVerdict =
  | { type: 'continue' }
  | { type: 'complete'; result: unknown }
  | { type: 'fail'; reason: string }
  | { type: 'correct'; message: string };
