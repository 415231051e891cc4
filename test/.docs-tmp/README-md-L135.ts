type SwarmResult<R> =
  | { status: 'running'; currentTurn: number; maxTurns: number; currentAgent?: string; currentChildSwarm?: string;
      inFlight?: { callId: string; kind: 'tool' | 'agent' | 'swarm' | 'remote'; target: string; childSwarmId?: string }[] }
  | { status: 'paused'; reason: PauseReason; currentTurn: number; maxTurns: number }
  | { status: 'completed'; result: R }
  | { status: 'failed'; reason: string }
  | { status: 'stopped'; reason: string };
type PauseReason = { type: 'HITL' | 'EMERGENCY' | 'APPROVAL_NEEDED'; message: string; pendingApprovalId?: string };
import type { SwarmResult as ApiSwarmResult } from 'xswarm';
export const sameSwarmResult = [(x: SwarmResult<string>): ApiSwarmResult<string> => x, (x: ApiSwarmResult<string>): SwarmResult<string> => x];
import type { PauseReason as ApiPauseReason } from 'xswarm';
export const samePauseReason = [(x: PauseReason): ApiPauseReason => x, (x: ApiPauseReason): PauseReason => x];
export {};
