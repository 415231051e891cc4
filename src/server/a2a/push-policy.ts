/**
 * Where a push notification may be sent (server-side request forgery): a webhook URL comes from
 * whoever calls the A2A endpoint, and the server POSTs to it, so left unchecked a client could
 * make the server reach its own loopback services, the cloud metadata address (169.254.169.254)
 * or the private network behind it. The rule:
 *
 * 1. only `http:` and `https:` URLs (no `file:`, `data:`, …), always;
 * 2. the host name is resolved and every address it resolves to must be public: no loopback
 *    (127/8, ::1), link-local (169.254/16, fe80::/10), private (10/8, 172.16/12, 192.168/16,
 *    fc00::/7), shared (100.64/10), unspecified (0.0.0.0, ::), multicast or broadcast, nor an
 *    IPv4-mapped IPv6 form of one;
 * 3. unless the operator allows the host (`serve(runtime, { allowedPushHosts })`, the
 *    {@link AllowedHosts} forms of the registry: `host`, `host:port`, `[v6]`, `*`), by the
 *    URL's host or by the address it resolves to.
 *
 * The check runs when a config is registered (a refusal is an invalid-params JSON-RPC error)
 * and again before every delivery, which then connects to the address just checked (see
 * `push-post.ts`): a name that resolves to a public address at the check and to a private one
 * at the connection (DNS rebinding) never reaches the private one. Redirects are not followed.
 *
 * @module
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { type AllowedHosts, hostAllowed } from '../../a2a/endpoint-policy.js';

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fe80::', 10],
  ['fc00::', 7],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** An address a webhook host resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A webhook URL that may be reached, with the address to connect to. */
export interface CheckedTarget {
  url: URL;
  /** The address checked: the delivery connects here, not to a fresh lookup. */
  address: ResolvedAddress;
}

/** A webhook URL refused by the policy; the message says why. */
export class PushTargetError extends Error {
  override readonly name = 'PushTargetError';
}

/** Resolves a host name to its addresses (replaceable in tests). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** Whether an IP address is in one of the ranges of rule 2 (an IPv4-mapped IPv6 address as its IPv4 one). */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return BLOCKED.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return BLOCKED.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * Checks a webhook URL (see the module doc) and returns the address to connect to; throws a
 * {@link PushTargetError} naming the URL and the reason.
 */
export async function checkPushTarget(raw: string, allowed: AllowedHosts, resolve: Resolver = systemResolver): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PushTargetError(`Push notification URL ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PushTargetError(`Push notification URL ${raw} is not an http: or https: URL`);
  if (url.username || url.password) throw new PushTargetError(`Push notification URL ${raw} carries credentials; use the config's authentication`);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await resolve(host);
    } catch (e) {
      throw new PushTargetError(`Push notification URL ${raw}: its host ${host} cannot be resolved (${(e as Error).message})`);
    }
    if (addresses.length === 0) throw new PushTargetError(`Push notification URL ${raw}: its host ${host} resolves to no address`);
  }
  if (hostAllowed(url, allowed)) return { url, address: addresses[0]! };
  const ok = addresses.find((a) => !isNonPublicAddress(a.address) || hostAllowed(withHost(url, a), allowed));
  const refused = addresses.find((a) => isNonPublicAddress(a.address) && !hostAllowed(withHost(url, a), allowed));
  if (refused || !ok) {
    const via = literal !== 0 ? '' : ` (${host} resolves to ${refused?.address})`;
    throw new PushTargetError(
      `Push notification URL ${raw} is refused: a loopback, link-local, private or unspecified address${via} is reached only when the server allows it (serve option allowedPushHosts)`,
    );
  }
  return { url, address: ok };
}

/** `url` with its host replaced by an address, to match allowedPushHosts entries naming addresses. */
function withHost(url: URL, a: ResolvedAddress): URL {
  const copy = new URL(url.href);
  copy.hostname = a.family === 6 ? `[${a.address}]` : a.address;
  return copy;
}
