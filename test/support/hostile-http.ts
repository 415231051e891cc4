/**
 * HTTP servers on 127.0.0.1 for the tests of what a peer's server can do to us (agent cards with
 * no end, answers that stall or trickle, redirects elsewhere): each records what it was asked
 * and how its answers ended, and is closed by the cleanup the test registers.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** Answers one request; gets the server too, for answers that name its own address. */
export type RecordingHandler = (req: IncomingMessage, res: ServerResponse, server: RecordingServer) => void;

/** A started server and what it saw. */
export interface RecordingServer {
  base: string;
  port: number;
  /** `METHOD path` of each request, in arrival order. */
  requests: string[];
  /** How many answers were cut because the client went away before they were complete. */
  clientAborts: number;
  /** The most bytes written on one connection by the end of an answer. */
  mostBytesSent: number;
  /** What answers the next requests (replaceable mid-test). */
  handle: RecordingHandler;
}

/**
 * Starts a server answering with `handle`; `onCleanup` receives its closer (which also cuts
 * the connections that endless or stalled answers keep open).
 */
export async function startRecordingServer(handle: RecordingHandler, onCleanup: (close: () => Promise<void>) => void): Promise<RecordingServer> {
  const s: RecordingServer = { base: '', port: 0, requests: [], clientAborts: 0, mostBytesSent: 0, handle };
  const server = createServer((req, res) => {
    s.requests.push(`${req.method} ${req.url}`);
    res.on('close', () => {
      if (!res.writableFinished) s.clientAborts++;
      s.mostBytesSent = Math.max(s.mostBytesSent, req.socket.bytesWritten);
    });
    s.handle(req, res, s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  s.port = (server.address() as { port: number }).port;
  s.base = `http://127.0.0.1:${s.port}`;
  onCleanup(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return s;
}

/**
 * A 200 JSON answer that never ends: `{"name":"` then spaces, 64 KiB at a time. Without
 * `paceMs` as fast as the client reads; with it, one chunk per `paceMs` while the client keeps
 * up, so a client without a byte limit fills its memory slowly, not at the speed of loopback.
 */
export function endlessBody(paceMs?: number): RecordingHandler {
  return (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"name":"');
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    if (paceMs === undefined) {
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      req.on('close', () => res.destroy());
      return pump();
    }
    const timer = setInterval(() => {
      if (!res.destroyed && !res.writableNeedDrain) res.write(chunk);
    }, paceMs);
    req.on('close', () => clearInterval(timer));
    res.on('close', () => clearInterval(timer));
  };
}

/** Answers nothing, ever: no status line, no headers. */
export const stalled: RecordingHandler = () => undefined;

/** Sends headers and `{`, then one space every 50 ms, forever. */
export const trickle: RecordingHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{');
  const timer = setInterval(() => res.write(' '), 50);
  req.on('close', () => clearInterval(timer));
  res.on('close', () => clearInterval(timer));
};
