/**
 * The swarm of the guardrail crash test (`test/runtime/guardrails-crash.test.ts`, fixture
 * `test/fixtures/guardrail-crash.ts`): an operator whose tool calls on /etc a guardrail pauses,
 * and a stateless model that deletes /etc/passwd, then reports what its call returned.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineSwarm } from '../../src/define/swarm.js';
import { tool } from '../../src/define/tool.js';
import { scriptedModel } from '../../src/models/scripted.js';
import { call } from './script.js';

/** The `ops` swarm; each run of its tool appends a line to `effects` when given. */
export function opsSwarm(effects?: string) {
  const deleteFile = tool({
    name: 'delete_file',
    description: 'Deletes a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => {
      if (effects) appendFileSync(effects, `${path}\n`);
      return `deleted ${path}`;
    },
  });
  return defineSwarm({
    id: 'ops',
    instructions: 'Operate.',
    tools: [deleteFile],
    guardrails: {
      toolCall: [{ name: 'no-system-files', onReject: 'pause', check: (c) => !String(c.arguments.path).startsWith('/etc') || 'may not touch /etc' }],
    },
  });
}

/** The model: one call to delete /etc/passwd, then the call's result as its answer. */
export function deleterModel() {
  return scriptedModel((req) => {
    const result = req.messages.find((m) => m.role === 'tool');
    return result ? { text: `after: ${result.content}` } : call('delete_file', { path: '/etc/passwd' }, 'd1');
  });
}
