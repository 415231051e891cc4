/**
 * `POST /a2a-push/<id>`: the push notifications peers send for our own remote calls, handed to
 * the inbox (`../a2a/push-inbox.ts`), which checks each one's per-call secret. Not behind the
 * server's bearer token (a peer does not have it; it sends the call's secret in its place) nor
 * its JSON media-type rule (v1.0 bodies are `application/a2a+json`): the per-call id and secret
 * are the authentication. The body is read (bounded) and dropped: the call reads the task itself.
 *
 * @module
 */
import { type A2APushInbox, PUSH_INBOX_PATH } from '../a2a/push-inbox.js';
import { HttpError, type HttpHandler, readBody, type ServerContext } from '../http/http.js';

/** Whether a request is for the inbox (exempt from the token and media-type rules, see the module doc). */
export function isPushInboxPath(url: URL): boolean {
  return url.pathname.startsWith(PUSH_INBOX_PATH);
}

/** The handler of the inbox route. */
export function createPushInboxHandler(ctx: ServerContext, inbox: A2APushInbox): HttpHandler {
  return {
    async handle(req, res, url) {
      if (!isPushInboxPath(url)) return false;
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        throw new HttpError(405, 'The push inbox takes POST');
      }
      await readBody(req, ctx.maxBodyBytes);
      const status = inbox.receive(url.pathname.slice(PUSH_INBOX_PATH.length), req.headers.authorization);
      if (status !== 204) throw new HttpError(status, status === 410 ? 'No call waits at this address (any more)' : 'Missing or wrong bearer secret');
      res.writeHead(204).end();
      return true;
    },
  };
}
