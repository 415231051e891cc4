/**
 * The timestamped signature of A2A push deliveries (`X-A2A-Signature-V2`) as a receiver checks
 * it with `verifyPushSignature`: valid within the tolerance window, refused when replayed later,
 * ahead of the clock, tampered with, signed with another secret, or missing; fetch `Headers` too.
 */
import { describe, expect, it } from 'vitest';
import { verifyPushSignature } from '../../../src/entries/server.js';
import { pushHeaders } from '../../../src/server/a2a/push-post.js';

const body = '{"statusUpdate":{"taskId":"t"}}';
const signedAt = Date.UTC(2026, 11, 7, 8, 0, 0);

function signed(secret = 'k', at = signedAt): Record<string, string> {
  const realNow = Date.now;
  Date.now = () => at;
  try {
    return pushHeaders({ eventId: 't:1', body, contentType: 'application/json', authentication: { scheme: 'HMAC-SHA256', credentials: secret } });
  } finally {
    Date.now = realNow;
  }
}

describe('push signature with a timestamp', () => {
  it('is valid within the window and refused when replayed, tampered with or missing', () => {
    const headers = signed();
    expect(headers['x-a2a-signature-timestamp']).toBe(String(signedAt / 1000));
    expect(verifyPushSignature({ secret: 'k', body, headers, now: signedAt + 1000 })).toBe(true);
    expect(verifyPushSignature({ secret: 'k', body, headers, now: signedAt + 299_000 })).toBe(true);
    // Replayed six minutes later: outside the default 5-minute window; a wider one takes it.
    expect(verifyPushSignature({ secret: 'k', body, headers, now: signedAt + 360_000 })).toBe(false);
    expect(verifyPushSignature({ secret: 'k', body, headers, now: signedAt + 360_000, toleranceSeconds: 600 })).toBe(true);
    // A timestamp far ahead of the receiver's clock.
    expect(verifyPushSignature({ secret: 'k', body, headers, now: signedAt - 360_000 })).toBe(false);
    expect(verifyPushSignature({ secret: 'k', body: `${body} `, headers, now: signedAt })).toBe(false);
    expect(verifyPushSignature({ secret: 'other', body, headers, now: signedAt })).toBe(false);
    // A fresh timestamp put on an old signature: the signature covers the timestamp.
    const moved = { ...headers, 'x-a2a-signature-v2': headers['x-a2a-signature-v2']!.replace(/^t=\d+/, `t=${signedAt / 1000 + 600}`) };
    expect(verifyPushSignature({ secret: 'k', body, headers: moved, now: signedAt + 600_000 })).toBe(false);
    expect(verifyPushSignature({ secret: 'k', body, headers: { 'x-a2a-signature': headers['x-a2a-signature'] }, now: signedAt })).toBe(false);
    expect(verifyPushSignature({ secret: 'k', body, headers: new Headers(headers), now: signedAt })).toBe(true);
  });
});
