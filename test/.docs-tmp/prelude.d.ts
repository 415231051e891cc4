import type { AgentDefinition, Model, Runtime, SwarmClient, SwarmDefinition, Tool } from 'xswarm';
declare global {
  const runtime: Runtime;
  const client: SwarmClient<string>;
  const model: Model;
  const myModel: Model;
  const planner: SwarmDefinition;
  const ticketing: SwarmDefinition;
  const weather: AgentDefinition;
  const forecast: Tool;
  const swarms: SwarmDefinition[];
  const line: string;
}
export {};
