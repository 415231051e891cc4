/**
 * `GET /metrics`: the runtime's Prometheus metrics (`createRuntime({ metrics })`) in the text
 * exposition format, behind the server's bearer token unless `serve(..., { publicMetrics: true })`
 * (the check is the server's, see `index.ts`). A runtime without metrics answers 404 saying how
 * to turn them on.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, type HttpHandler, type ServerContext } from '../http/http.js';

/** The path of the metrics endpoint. */
export const METRICS_PATH = '/metrics';

/** The handler of `GET /metrics`. */
export function createMetricsHandler(ctx: ServerContext): HttpHandler {
  return {
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
      if (url.pathname !== METRICS_PATH) return false;
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, `${METRICS_PATH} answers GET`);
      const registry = ctx.runtime.metrics;
      if (!registry) throw new HttpError(404, 'This runtime has no metrics: createRuntime({ metrics: true }) (xswarm serve turns them on)');
      const text = await registry.metrics();
      res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
      return true;
    },
  };
}
