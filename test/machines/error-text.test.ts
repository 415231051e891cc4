/**
 * `errorText`: the one way anything thrown becomes the text a swarm's failure, a store error or
 * a log line shows.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { errorText } from '../../machines/error-text.js';

describe('errorText', () => {
  it('an Error gives its message, of this realm or another (a vm context), whose Error is no instanceof Error here', () => {
    expect(errorText(new TypeError('bad input'))).toBe('bad input');
    const foreign: unknown = runInNewContext('new RangeError("out of range")');
    expect(foreign instanceof Error).toBe(false);
    expect(errorText(foreign)).toBe('out of range');
  });

  it('a string as it is; anything else as JSON, or as String() when it cannot be', () => {
    expect(errorText('plain')).toBe('plain');
    expect(errorText({ code: 'SQLITE_ERROR' })).toBe('{"code":"SQLITE_ERROR"}');
    expect(errorText(undefined)).toBe('undefined');
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(errorText(cyclic)).toBe('[object Object]');
    expect(errorText(12n)).toBe('12');
  });
});
