/**
 * The inspection observer as the runtime hands it to XState: XState calls it inside an actor's
 * step, where a throw would fail the step (a swarm's `run` would reject). An observer's errors
 * are its own, as a throwing `subscribe` listener's are: ignored.
 *
 * @module
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { InspectObserver } from './types.js';

/** `observer` with each of its calls kept from throwing into the actor that reports. */
export function guardedObserver(observer: InspectObserver): Observer<InspectionEvent> {
  if (typeof observer === 'function') return { next: (event) => ignoreThrow(() => observer(event)) };
  return {
    next: (event) => ignoreThrow(() => observer.next?.(event)),
    error: (error) => ignoreThrow(() => observer.error?.(error)),
    complete: () => ignoreThrow(() => observer.complete?.()),
  };
}

function ignoreThrow(call: () => void): void {
  try {
    call();
  } catch {
    // The observer's own failure: the swarms go on.
  }
}
