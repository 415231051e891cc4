/**
 * The swarm lifecycle in the logs (`createRuntime({ logger })`): started, paused, resumed,
 * finished, failed, read from the runtime's durable events, so a log line means the store has
 * it. Model and tool calls are logged at `debug`. Attached only when a logger was given.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import type { Logger } from '../util/logger.js';

/** The listener that logs each event an operator cares about; `definitionOf` names an adopted swarm's definition. */
export function eventLogger(log: Logger, definitionOf: (swarmId: string) => string | undefined): (event: SwarmEvent) => void {
  return (e) => {
    const swarmId = e.swarmId;
    switch (e.kind) {
      case 'task':
        return log.info({ swarmId, definitionId: e.metadata.definitionId }, 'swarm started');
      case 'internal:llm-call':
        return log.debug(
          { swarmId, agent: e.agent, turn: e.turn, model: e.model, durationMs: e.durationMs, inputTokens: e.usage?.inputTokens, outputTokens: e.usage?.outputTokens },
          'model call',
        );
      case 'internal:tool-complete':
        return log.debug({ swarmId, agent: e.agent, tool: e.toolName, callId: e.callId, ok: e.ok }, 'tool call');
      case 'status-update': {
        const fact = e.metadata;
        const definitionId = definitionOf(swarmId);
        switch (fact.type) {
          case 'completed':
            return log.info({ swarmId, definitionId }, 'swarm completed');
          case 'failed':
            return log.warn({ swarmId, definitionId, reason: fact.reason }, 'swarm failed');
          case 'stopped':
            return log.info({ swarmId, definitionId, reason: fact.reason }, 'swarm stopped');
          case 'paused':
            return log.info({ swarmId, definitionId, pause: fact.reason.type }, 'swarm paused');
          case 'resumed':
            return log.info({ swarmId, definitionId }, 'swarm resumed');
          case 'agent-handoff':
          case 'swarm-handoff':
            return log.debug({ swarmId, from: fact.from, to: fact.to, callId: fact.callId }, 'handoff');
          default:
            return;
        }
      }
      default:
        return;
    }
  };
}
