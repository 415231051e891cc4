/**
 * How the inspector's conversation reads a message's parts (inspector/fold.js `partsText`): a
 * run started with files (an A2A message) shows its text and names each file.
 */
import { describe, expect, it } from 'vitest';
import { partsText } from '../../../inspector/fold.js';

describe('partsText', () => {
  it('names a run input’s files beside its text; data parts read as JSON only without text', () => {
    const parts = [
      { kind: 'text' as const, text: 'Summarize these' },
      { kind: 'file' as const, file: { name: 'table.csv', mimeType: 'text/csv', bytes: 'YSxi' } },
      { kind: 'file' as const, file: { name: 'r.pdf', uri: 'https://example.com/r.pdf' } },
    ];
    expect(partsText(parts)).toBe('Summarize these\n[file table.csv (text/csv)]\n[file r.pdf https://example.com/r.pdf]');
    expect(partsText([{ kind: 'data', data: { a: 1 } }])).toBe('{"a":1}');
  });
});
