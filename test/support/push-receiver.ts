/**
 * A push-notification receiver for the A2A push tests: an HTTP server on 127.0.0.1 that records
 * every POST (headers and raw body) and can be taken down (its port closed: connections are
 * refused) and brought up again on the same port.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver took. */
export interface Received {
  eventId: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/** A receiver; `url` stays the same across down/up. */
export interface PushReceiver {
  url: string;
  /** Every POST taken, duplicates included, in arrival order. */
  received: Received[];
  /** The POSTs with distinct event ids, first arrival of each: what a de-duplicating receiver keeps. */
  unique(): Received[];
  /** Answer 503 (or `status`) to the next POSTs after `n` more were taken (undefined: take all). */
  takeOnly(n: number | undefined, status?: number): void;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a receiver (up, or `down` to start with its port reserved but closed). */
export async function pushReceiver(options: { down?: boolean } = {}): Promise<PushReceiver> {
  const received: Received[] = [];
  let budget: number | undefined;
  let refusal = 503;
  let server: Server | undefined;
  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const s = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          if (budget !== undefined && budget <= 0) {
            res.writeHead(refusal).end();
            return;
          }
          if (budget !== undefined) budget--;
          received.push({ eventId: String(req.headers['x-a2a-event-id'] ?? ''), headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
          res.writeHead(200).end();
        });
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve(s));
    });
  server = await listen(0);
  const port = (server.address() as AddressInfo).port;
  const stop = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  if (options.down) await stop();
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    received,
    unique() {
      const seen = new Set<string>();
      return received.filter((r) => !seen.has(r.eventId) && seen.add(r.eventId));
    },
    takeOnly(n, status = 503) {
      budget = n;
      refusal = status;
    },
    down: stop,
    async up() {
      if (!server) server = await listen(port);
    },
    close: stop,
  };
}

/** The sequence number in an event id `<taskId>:<seq>`. */
export function seqOf(eventId: string): number {
  return Number(eventId.slice(eventId.lastIndexOf(':') + 1));
}
