/**
 * One delivery of a push notification: a POST of the serialized update to a checked webhook,
 * over `node:http`/`node:https` with the connection pinned to the address the policy checked
 * (`push-policy.ts`; its `lookup` answers that address only, so DNS rebinding cannot redirect
 * it; TLS still verifies the URL's host name). Redirects are not followed: a 3xx is a failed
 * delivery like any other non-2xx answer, retried later; except `410 Gone`, the receiver saying
 * it wants nothing more ({@link PushGoneError}), which ends the subscription.
 *
 * Headers (see docs/a2a-push.md):
 * - `X-A2A-Event-Id`: `<taskId>:<seq>`, the same for every attempt of one update, across
 *   restarts: the receiver's de-duplication key;
 * - `Authorization: Bearer <credentials>` for `authentication.scheme` `Bearer` (any other HTTP
 *   scheme likewise, `<scheme> <credentials>`);
 * - `X-A2A-Signature: sha256=<hex HMAC-SHA256 of the body with the credentials as key>` for the
 *   scheme `HMAC-SHA256`, with `X-A2A-Signature-Timestamp` and `X-A2A-Signature-V2` (a signature
 *   over the timestamp and the body, against replays: `push-signature.ts`);
 * - `X-A2A-Notification-Token: <token>` when the config has a `token`.
 *
 * @module
 */
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { PushAuthentication } from '../../store/push-outbox.js';
import type { CheckedTarget } from './push-policy.js';
import { signatureHeaders } from './push-signature.js';

export { pushSignature, SIGNATURE_HEADER } from './push-signature.js';

/** The scheme name (case-insensitive) that asks for an HMAC signature instead of an `Authorization` header. */
export const HMAC_SCHEME = 'HMAC-SHA256';

/** The header of the event id. */
export const EVENT_ID_HEADER = 'x-a2a-event-id';

/** The receiver answered 410 Gone: it wants no more notifications at this URL. */
export class PushGoneError extends Error {
  override readonly name = 'PushGoneError';
}

/** The receiver answered with a status other than 2xx (and 410): the delivery is retried. */
export class PushStatusError extends Error {
  override readonly name = 'PushStatusError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** What one delivery sends. */
export interface PushMessage {
  eventId: string;
  body: string;
  contentType: string;
  token?: string;
  authentication?: PushAuthentication;
}

/** The request headers of a delivery. */
export function pushHeaders(message: PushMessage): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': message.contentType,
    'content-length': String(Buffer.byteLength(message.body)),
    [EVENT_ID_HEADER]: message.eventId,
  };
  const auth = message.authentication;
  if (auth?.scheme && auth.credentials) {
    if (auth.scheme.toUpperCase() === HMAC_SCHEME) Object.assign(headers, signatureHeaders(auth.credentials, message.body));
    else headers.authorization = `${auth.scheme} ${auth.credentials}`;
  }
  if (message.token) headers['x-a2a-notification-token'] = message.token;
  return headers;
}

/**
 * POSTs `message` to `target`; resolves once a 2xx answer came, rejects otherwise (the status,
 * a network error, or no answer within `timeoutMs`).
 */
export function postPush(target: CheckedTarget, message: PushMessage, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const { url, address } = target;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
  const options: RequestOptions = { method: 'POST', headers: pushHeaders(message), lookup: pinned, timeout: timeoutMs, ...(signal ? { signal } : {}) };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, options, (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      res.once('end', () => {
        if (status >= 200 && status < 300) resolve();
        // The host only: a webhook's path may hold a secret, and these messages reach the logs.
        else reject(status === 410 ? new PushGoneError(`${url.host} is gone (HTTP 410)`) : new PushStatusError(`${url.host} answered HTTP ${status}`, status));
      });
      res.once('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`${url.host} gave no answer within ${timeoutMs} ms`)));
    req.once('error', reject);
    req.end(message.body);
  });
}
