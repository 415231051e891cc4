/**
 * The actor slots the machines declare in `setup({ actors })`: typed placeholders that the
 * runtime fills with `machine.provide({ actors })`. Declaring them by key keeps every snapshot
 * persistable (inline actor logic is not).
 *
 * @module
 */
import { fromPromise } from 'xstate';
import type { CallResult, ModelStepInput, ModelStepOutput, ToolRunInput } from './round.js';

/**
 * A model call and the judgement of its response.
 *
 * @example
 * swarmMachine.provide({ actors: { modelStep: createModelStep(ports) } });
 */
export const modelStepSlot = fromPromise<ModelStepOutput, ModelStepInput>(async () => {
  throw new Error('modelStep is provided by the runtime');
});

/**
 * One regular tool call.
 *
 * @example
 * agentMachine.provide({ actors: { runTool: createRunTool(ports) } });
 */
export const runToolSlot = fromPromise<CallResult, ToolRunInput>(async () => {
  throw new Error('runTool is provided by the runtime');
});
