/**
 * The HMAC signatures of A2A push deliveries (a webhook registered with `authentication.scheme`
 * `HMAC-SHA256`), and their verification by a receiver. Two signatures go with each delivery:
 *
 * - `X-A2A-Signature: sha256=<hex>`: the HMAC-SHA256 of the body alone, as receivers written
 *   before the timestamp check it (kept as it was);
 * - `X-A2A-Signature-Timestamp: <unix seconds>` and `X-A2A-Signature-V2: t=<unix seconds>,sha256=<hex>`:
 *   the HMAC-SHA256 of `<timestamp>.<body>`. A receiver that checks this one and refuses a
 *   timestamp outside a tolerance window (default 5 minutes) refuses a request captured and
 *   sent again later (a replay), which the body-only signature cannot tell from the original.
 *
 * @module
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header of the body-only signature. */
export const SIGNATURE_HEADER = 'x-a2a-signature';

/** The header of the time the timestamped signature was made, in unix seconds. */
export const SIGNATURE_TIMESTAMP_HEADER = 'x-a2a-signature-timestamp';

/** The header of the timestamped signature: `t=<unix seconds>,sha256=<hex>`. */
export const SIGNATURE_V2_HEADER = 'x-a2a-signature-v2';

/** How far (seconds) a timestamp may be from the receiver's clock by default. */
export const DEFAULT_SIGNATURE_TOLERANCE_S = 300;

function hmac(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text, 'utf8').digest('hex');
}

/** `sha256=<hex>`: the HMAC-SHA256 of `body` keyed with `secret`, as `X-A2A-Signature` carries it. */
export function pushSignature(secret: string, body: string): string {
  return `sha256=${hmac(secret, body)}`;
}

/** `t=<timestamp>,sha256=<hex>`: the HMAC-SHA256 of `<timestamp>.<body>`, as `X-A2A-Signature-V2` carries it. */
export function pushSignatureV2(secret: string, body: string, timestamp: number): string {
  return `t=${timestamp},sha256=${hmac(secret, `${timestamp}.${body}`)}`;
}

/** The signature headers of a delivery of `body` signed with `secret` at `now` (ms since the epoch). */
export function signatureHeaders(secret: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    [SIGNATURE_HEADER]: pushSignature(secret, body),
    [SIGNATURE_TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_V2_HEADER]: pushSignatureV2(secret, body, timestamp),
  };
}

/** What {@link verifyPushSignature} checks. */
export interface PushSignatureCheck {
  /** The webhook's secret (the config's `authentication.credentials`). */
  secret: string;
  /** The raw body as received, before any parsing. */
  body: string | Uint8Array;
  /** The request's headers (Node's `req.headers`, or a fetch `Headers`). */
  headers: Readonly<Record<string, string | string[] | undefined>> | Headers;
  /** How far (seconds) the timestamp may be from `now`, either way. Default 300. */
  toleranceSeconds?: number;
  /** The receiver's clock (ms since the epoch). Default `Date.now()`. */
  now?: number;
}

function header(headers: PushSignatureCheck['headers'], name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Whether a push delivery carries a valid timestamped signature (`X-A2A-Signature-V2`) made
 * within the tolerance window: false when it is missing, malformed, signed with another secret,
 * over another body, or too old (a replay) or too far ahead. Compares in constant time.
 *
 * @example
 * import { createServer } from 'node:http';
 * import { verifyPushSignature } from 'xswarm/server';
 * const secret = process.env.HOOK_SECRET ?? '';
 * const receiver = createServer((req, res) => {
 *   const chunks: Buffer[] = [];
 *   req.on('data', (c: Buffer) => chunks.push(c));
 *   req.on('end', () => {
 *     // The raw bytes, before parsing; a request older than 5 minutes (a replay) is refused.
 *     const ok = verifyPushSignature({ secret, body: Buffer.concat(chunks), headers: req.headers });
 *     res.writeHead(ok ? 204 : 401).end();
 *   });
 * });
 */
export function verifyPushSignature(check: PushSignatureCheck): boolean {
  const given = header(check.headers, SIGNATURE_V2_HEADER);
  const match = given === undefined ? null : /^t=(\d{1,15}),sha256=([0-9a-f]{64})$/.exec(given.trim());
  if (!match) return false;
  const timestamp = Number(match[1]);
  const now = (check.now ?? Date.now()) / 1000;
  if (Math.abs(now - timestamp) > (check.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_S)) return false;
  // Over the bytes as received (a Uint8Array is not decoded: no text conversion to disagree on).
  const expected = createHmac('sha256', check.secret).update(`${timestamp}.`, 'utf8').update(check.body).digest('hex');
  return sameText(match[2]!, expected);
}
