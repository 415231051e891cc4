/**
 * W1 on the swarm machine alone: the runtime's own machines and actors (`createSwarmLogic`:
 * the swarm and agent machines, the model step and its judge, the events each step emits),
 * driven without the runtime around them — no host numbering and stamping events, no store,
 * no leases, no client. Its model answers after the row's latency, like the other W1 rows',
 * and its other ports at once. It is not a floor: it shows how much of the runtime row's
 * distance from the bare XState row the product's machine itself takes (its states, pause and
 * stop paths, judge and events) and how much the runtime adds on top. The swarm's config is
 * read back from one runtime run made in the row's process before any timing.
 *
 * @module
 */
import { createActor, toPromise } from 'xstate';
import { createSwarmLogic, type SwarmPorts } from '../actors/index.js';
import type { SwarmConfig, SwarmOutcome } from '../machines/swarm.js';
import { memoryStore } from '../src/store/memory.js';
import { type CallCounts, createW1Runtime, W1_INPUT, W1_SWARM_ID, w1Call } from './w1.js';

/** A settled promise: the gate of a swarm whose steps need not wait for a store. */
const OPEN = Promise.resolve();

/** The W1 swarm's config exactly as the runtime resolves it: read back from one run's stored record. */
async function resolvedConfig(): Promise<SwarmConfig> {
  const store = memoryStore();
  const { runtime, swarm } = createW1Runtime(0, store);
  try {
    const swarmId = 'config-probe';
    const client = runtime.forSwarm(swarm, swarmId);
    await client.run(W1_INPUT);
    await client.wait();
    const snapshot = (await store.load(swarmId))?.snapshot as { context?: { config?: SwarmConfig } } | undefined;
    const config = snapshot?.context?.config;
    if (!config) throw new Error('the W1 run left no config in its record');
    return config;
  } finally {
    await runtime.close();
  }
}

/**
 * Ports that answer at once: the W1 script as every speaker's model (counting into `counts`,
 * after `latencyMs` when positive), no tools or guardrails, results taken as text.
 */
function immediatePorts(counts: CallCounts, latencyMs: number): SwarmPorts {
  const refuse = () => ({ ok: false as const, error: 'not part of W1' });
  const unused = () => Promise.reject(new Error('not part of W1'));
  return {
    modelFor: () => ({ name: 'w1', call: (request) => w1Call(request, counts, latencyMs) }),
    toolSpecs: () => [],
    checkToolArgs: refuse,
    checkResult: (_definitionId, _swarmId, value) => ({ ok: true, value }),
    resultIsText: () => true,
    childInput: refuse,
    checkCustomization: refuse,
    isCustomizable: () => false,
    toolTimeoutMs: () => undefined,
    swarmTimeoutMs: () => undefined,
    runChild: unused,
    runRemote: unused,
    guardInput: () => undefined,
    guardOutput: () => undefined,
    executeTool: unused,
    onText: () => undefined,
    durable: () => OPEN,
  };
}

/**
 * Builds W1 on the machine alone, its model answering after `latencyMs`; the returned function
 * runs it once and resolves with the machine's outcome. Each step's events are gathered and
 * then dropped, as a host takes them before it stamps and stores them.
 *
 * @example
 * const counts = newCounts();
 * const run = await createMachineW1(counts);
 * (await run()).status // 'completed'
 */
export async function createMachineW1(counts: CallCounts, latencyMs = 0): Promise<() => Promise<SwarmOutcome>> {
  const config = await resolvedConfig();
  const logic = createSwarmLogic(immediatePorts(counts, latencyMs));
  let runs = 0;
  return async () => {
    const swarmId = `w1-${++runs}`;
    const actor = createActor(logic, {
      input: { swarmId, definitionId: W1_SWARM_ID, input: W1_INPUT, userMessage: W1_INPUT, config },
      systemId: swarmId,
    });
    let events: unknown[] = [];
    actor.on('swarm.events', (e) => {
      for (const body of e.events) events.push(body);
    });
    actor.subscribe(() => {
      events = [];
    });
    const done = toPromise(actor);
    actor.start();
    return done;
  };
}
