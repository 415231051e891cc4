/**
 * The view a history policy sends (`machines/history.ts`), checked on every cut of a
 * conversation with parallel tool calls and human notes: under budget, pinned messages kept,
 * order kept, never a tool result without its call nor a call without its results.
 */
import { describe, expect, it } from 'vitest';
import { estimateAll, historyView, summaryMessage } from '../../machines/history.js';
import type { ChatMessage } from '../../machines/messages.js';

/** A conversation of `turns` rounds: every 3rd calls three tools at once, every 5th is followed by a human note. */
function conversation(turns: number): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You read.' },
    { role: 'user', content: 'Read it.' },
  ];
  for (let t = 0; t < turns; t++) {
    const calls = Array.from({ length: t % 3 === 0 ? 3 : 1 }, (_, i) => ({ id: `c${t}.${i}`, name: 'read', arguments: `{"page":${t}}` }));
    messages.push({ role: 'assistant', content: '', toolCalls: calls });
    for (const c of calls) messages.push({ role: 'tool', toolCallId: c.id, content: `result ${c.id} ${'x'.repeat(40 + (t % 4) * 30)}` });
    if (t % 5 === 4) messages.push({ role: 'user', content: `note ${t}` });
  }
  return messages;
}

function checkView(sent: readonly ChatMessage[], all: readonly ChatMessage[], summary?: string) {
  expect(sent.slice(0, 2)).toEqual(all.slice(0, 2));
  let open = new Set<string>();
  let last = -1;
  for (const m of sent) {
    if (summary !== undefined && m.content === summaryMessage(summary).content) continue;
    // Every sent message is a stored one, in the stored order.
    const at = all.indexOf(m);
    expect(at).toBeGreaterThan(last);
    last = at;
    if (m.role === 'tool') {
      expect(open.delete(m.toolCallId!)).toBe(true);
      continue;
    }
    expect(open.size).toBe(0);
    open = new Set((m.toolCalls ?? []).map((c) => c.id));
  }
  expect(open.size).toBe(0);
}

describe('historyView', () => {
  const all = conversation(60);

  it('sends the stored array itself while it fits', () => {
    expect(historyView(all, { policy: { maxTokens: estimateAll(all), strategy: 'trim' }, pinned: 1 }).messages).toBe(all);
  });

  it("'trim': at every length and budget, under budget with the newest turn, no orphan, pinned and order kept", () => {
    for (let n = 3; n <= all.length; n++) {
      const messages = all.slice(0, n);
      // Cut only where a step would send: after a turn's last result (never mid-round).
      if (messages.at(-1)!.role === 'assistant' || (messages.at(-1)!.role === 'tool' && all[n]?.role === 'tool')) continue;
      for (const maxTokens of [300, 700, 1500]) {
        const sent = historyView(messages, { policy: { maxTokens, strategy: 'trim' }, pinned: 1 }).messages;
        checkView(sent, messages);
        expect(estimateAll(sent)).toBeLessThanOrEqual(maxTokens);
        expect(sent.at(-1)).toBe(messages.at(-1));
      }
    }
  });

  it("'summarize': asks for a summary of whole turns, then sends the summary and the newest turns under budget", () => {
    const policy = { maxTokens: 800, strategy: 'summarize' as const };
    const first = historyView(all, { policy, pinned: 1 });
    expect(first.summarize).toBeDefined();
    const { upTo, messages: covered } = first.summarize!;
    // The covered turns are whole and end where the kept ones begin.
    expect(all[upTo]!.role).not.toBe('tool');
    expect(covered).toEqual(all.slice(2, upTo));
    const summary = { text: 'S'.repeat(200), upTo };
    const view = historyView(all, { policy, pinned: 1, summary });
    expect(view.summarize).toBeUndefined();
    expect(view.messages[2]).toEqual(summaryMessage(summary.text));
    checkView(view.messages, all, summary.text);
    expect(estimateAll(view.messages)).toBeLessThanOrEqual(policy.maxTokens);
    // Later turns fit beside the summary for a while: no new summary at once.
    expect(historyView(all.slice(0, all.length), { policy, pinned: 1, summary }).summarize).toBeUndefined();
  });

  it("keeps an agent's request (pinned past the session's exchanges) and drops the exchanges first", () => {
    const agent: ChatMessage[] = [
      { role: 'system', content: 'Agent.' },
      { role: 'user', content: `(to other) ${'q'.repeat(400)}` },
      { role: 'assistant', content: `(other) ${'a'.repeat(400)}` },
      { role: 'user', content: 'The request.' },
      ...conversation(20).slice(2),
    ];
    const sent = historyView(agent, { policy: { maxTokens: 600, strategy: 'trim' }, pinned: 3 }).messages;
    expect(sent.slice(0, 2)).toEqual([agent[0], agent[3]]);
    expect(estimateAll(sent)).toBeLessThanOrEqual(600);
  });
});
