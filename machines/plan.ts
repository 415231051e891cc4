/**
 * The planning vocabulary: what the machines know of a model response once it has been judged
 * (`actors/judge.ts`, handoffs in `actors/plan-handoff.ts`) besides its planned calls (whose
 * kinds are in `calls/`). Plain JSON, because targets and verdicts live in snapshots and in the
 * `internal:llm-call` replay journal.
 *
 * @module
 */
import type { GuardrailRejection } from './guardrail.js';

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
      /** How long each call may take (the handoff's `timeoutMs`). */
      timeoutMs?: number;
      /** Its timeout fails the swarm (the handoff's `onTimeout: 'fail'`). */
      onTimeout?: 'fail';
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
      /** How long each run may take (the handoff's `timeoutMs`, else the child definition's). */
      timeoutMs?: number;
      /** Its timeout fails the swarm (the handoff's `onTimeout`, else the child definition's, is `'fail'`). */
      onTimeout?: 'fail';
    };

/**
 * What the runtime concluded from a model response, before any call runs.
 * `continue`: run the planned calls. `complete`/`fail`: terminate. `correct`: no calls to run;
 * feed `message` back to the model as a correction (it counts as a round).
 */
export type StepVerdict =
  | HeldVerdict
  /** A guardrail rejected the step (`onReject: 'reject'`): the swarm ends rejected. */
  | { type: 'reject'; reason: string; rejected: GuardrailRejection }
  /**
   * A guardrail paused the step (`onReject: 'pause'`): the response is taken, its calls wait,
   * and a resume goes on with `then` (the verdict the step had without the guardrail).
   */
  | { type: 'pause'; reason: string; rejected: GuardrailRejection; then: HeldVerdict };

/** The verdicts a step has without a guardrail's: what a guardrail's pause holds until resumed. */
export type HeldVerdict = { type: 'continue' } | { type: 'complete'; result: unknown } | { type: 'fail'; reason: string } | { type: 'correct'; message: string };
