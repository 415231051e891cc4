/**
 * The A2A agent card of a swarm definition.
 *
 * @module
 */
import { AgentCard, type AgentSkill } from '@a2a-js/sdk';
import type { SwarmDefinition, ToolEntry } from '../../define/swarm.js';
import type { AgentDefinition } from '../../define/agent.js';
import type { Handoff } from '../../define/handoff.js';
import type { Runtime } from '../../runtime/types.js';

/** The name of the bearer security scheme declared when the server has a token. */
export const BEARER_SCHEME = 'bearer';

/** Where a definition's JSON-RPC endpoint is. */
export function a2aEndpoint(baseUrl: string, definitionId: string): string {
  return `${baseUrl}/a2a/${encodeURIComponent(definitionId)}`;
}

/** Where a definition's agent card is. */
export function agentCardUrl(baseUrl: string, definitionId: string): string {
  return `${a2aEndpoint(baseUrl, definitionId)}/.well-known/agent-card.json`;
}

/**
 * The agent card of a registered swarm definition, or undefined for an unknown id.
 *
 * - name, description and version come from the definition;
 * - one skill for the swarm itself (with its input schema when the input is structured), and
 *   one per tool and per handoff target among its capabilities (`runtime.definitions()`);
 *   tools and handoffs computed from the input at run time are not known in advance;
 * - modes: `text/plain`, plus `application/json` where input or result is structured;
 * - `capabilities.streaming` and `capabilities.pushNotifications` (push-configs.ts);
 * - `supportedInterfaces`: JSON-RPC at `<base>/a2a/<id>` for v1.0 and for v0.3 (the SDK's
 *   compat layer accepts v0.3 requests only when the card lists a 0.3 interface);
 * - with a token, an HTTP bearer scheme that every request must satisfy.
 *
 * The object is the SDK's in-memory shape (what its request handlers and v0.3 translator
 * read) with a `toJSON` that yields ProtoJSON: the SDK's v1.0 card handler serializes the
 * card with a plain `JSON.stringify`, which would otherwise put ts-proto's `$case` wrappers
 * for the security scheme on the wire.
 */
export function swarmAgentCard(runtime: Runtime, definitionId: string, baseUrl: string, token: string | undefined): AgentCard | undefined {
  const def = runtime.definition(definitionId);
  const summary = runtime.definitions().find((c) => c.id === definitionId);
  if (!def || !summary) return undefined;
  const structuredInput = summary.inputSchema.type !== 'string';
  const structuredResult = summary.resultSchema.type !== 'string';
  const inputModes = structuredInput ? ['text/plain', 'application/json'] : ['text/plain'];
  const outputModes = structuredResult ? ['text/plain', 'application/json'] : ['text/plain'];
  const url = a2aEndpoint(baseUrl, definitionId);

  const swarmSkill: AgentSkill = {
    id: def.id,
    name: def.name,
    description: structuredInput ? `${def.description}\n\nInput (a JSON data part, or JSON text): ${JSON.stringify(summary.inputSchema)}` : def.description,
    tags: ['swarm'],
    examples: [],
    inputModes,
    outputModes,
    securityRequirements: [],
  };
  const described = describeCapabilities(def);
  const skills = [
    swarmSkill,
    ...summary.capabilities.map((capability): AgentSkill => {
      const known = described.get(capability);
      return {
        id: `${known?.kind ?? 'capability'}:${capability}`,
        name: known?.name ?? capability,
        description: known?.description ?? capability,
        tags: known ? [known.kind, ...(known.kind === 'handoff' ? [known.target] : [])] : ['capability'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      };
    }),
  ];

  const card: AgentCard = {
    name: def.name,
    description: def.description,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
    ],
    provider: undefined,
    version: String(def.version),
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: token
      ? {
          [BEARER_SCHEME]: {
            scheme: {
              $case: 'httpAuthSecurityScheme',
              value: { description: 'Bearer token given to `xswarm serve --token`', scheme: 'Bearer', bearerFormat: '' },
            },
          },
        }
      : {},
    securityRequirements: token ? [{ schemes: { [BEARER_SCHEME]: { list: [] } } }] : [],
    defaultInputModes: inputModes,
    defaultOutputModes: outputModes,
    skills,
    signatures: [],
  };
  Object.defineProperty(card, 'toJSON', { value: () => AgentCard.toJSON(card), enumerable: false });
  return card;
}

interface Described {
  kind: 'tool' | 'handoff';
  /** For handoffs: agent, swarm, inline or remote. */
  target: string;
  name: string;
  description: string;
}

/** Names and descriptions of a definition's static tools and handoffs, by capability name. */
function describeCapabilities(def: SwarmDefinition): Map<string, Described> {
  const out = new Map<string, Described>();
  if (Array.isArray(def.tools)) {
    for (const t of def.tools as readonly ToolEntry[]) {
      if (t.kind === 'tool') out.set(t.name, { kind: 'tool', target: 'tool', name: t.name, description: t.description });
    }
  }
  if (Array.isArray(def.handoffs)) {
    for (const h of def.handoffs as readonly Handoff[]) {
      if (h.kind === 'agent') {
        const agent: AgentDefinition | string = h.agent;
        const id = typeof agent === 'string' ? agent : agent.id;
        const name = typeof agent === 'string' ? agent : agent.name;
        const description = h.description ?? (typeof agent === 'string' ? `Hands off to agent "${agent}"` : agent.description);
        out.set(id, { kind: 'handoff', target: 'agent', name, description });
      } else if (h.kind === 'swarm') {
        const swarm = h.swarm;
        const id = typeof swarm === 'string' ? swarm : swarm.id;
        const name = typeof swarm === 'string' ? swarm : swarm.name;
        const description = h.description ?? (typeof swarm === 'string' ? `Hands off to swarm "${swarm}"` : swarm.description);
        out.set(id, { kind: 'handoff', target: 'swarm', name, description });
      } else if (h.kind === 'inline') {
        out.set(h.id, { kind: 'handoff', target: 'inline', name: h.id, description: h.description });
      } else if (h.kind === 'best') {
        const description = h.description ?? `The best available agent for ${h.skill} (from the agent registry)`;
        out.set(`best:${h.skill}`, { kind: 'handoff', target: 'remote', name: `best agent for ${h.skill}`, description });
      } else {
        out.set(h.url, { kind: 'handoff', target: 'remote', name: h.url, description: h.description ?? `Remote A2A agent (${h.url})` });
      }
    }
  }
  return out;
}
