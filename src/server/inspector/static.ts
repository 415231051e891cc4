/**
 * The inspector page's files, served by `serve()` at `/inspector`: the package's `inspector/`
 * folder (plain HTML, ES modules, CSS and the generated state chart; nothing to build).
 *
 * | Path                  | Answer                                                        |
 * | --------------------- | ------------------------------------------------------------- |
 * | `/inspector`          | 308 to `/inspector/`                                          |
 * | `/inspector/`         | `inspector/index.html`                                        |
 * | `/inspector/<name>`   | that file, when `<name>` is `[a-z0-9-]+.(html|js|css|json|svg|png)` |
 *
 * Anything else under `/inspector/` (sub-folders, other names, `..`, encoded slashes) is a 404,
 * so no path can reach a file outside the folder. The files hold no data, so they need no
 * token (a page must load before it can ask for one), but they pass the Host/Origin policy
 * like every request, and go out with a strict Content-Security-Policy: the page runs only its
 * own scripts and styles, talks only to this server, and cannot be framed.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpError, type HttpHandler, requireMethod } from '../../http/http.js';

/** The path the page is served at. */
export const INSPECTOR_PATH = '/inspector';

/** The file names served: plain names of the page's kinds of files, no folders. */
const FILE_NAME = /^[a-z0-9-]+\.(html|js|css|json|svg|png)$/;

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};

/** The headers of every file of the page. */
export const INSPECTOR_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Revalidated on each load: an upgraded package serves its new page at once.
  'cache-control': 'no-cache',
};

/**
 * Whether a path is one of the page's static files (or the redirect): what `serve()` lets
 * through without a token. The API under `/inspector/api/` is not.
 */
export function isInspectorFile(pathname: string): boolean {
  return pathname === INSPECTOR_PATH || pathname === `${INSPECTOR_PATH}/` || /^\/inspector\/[^/]+$/.test(pathname);
}

/**
 * The package's `inspector/` folder: found by walking up from this module to the package's
 * root (the folder whose package.json names `xswarm`), so it works from `src/` (tsx, vitest)
 * and from `dist/src/` in the installed package alike.
 */
export function inspectorRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; ) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'xswarm') return join(dir, 'inspector');
      } catch {
        // Not our package.json (unreadable): keep walking up.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`Cannot find the xswarm package root above ${from} (for the inspector page's files)`);
    dir = parent;
  }
}

/** Options of {@link createInspectorStaticHandler}. */
export interface InspectorStaticOptions {
  /** The folder of the page's files (default: the package's `inspector/`, see {@link inspectorRoot}). */
  root?: string;
}

/** Creates the handler of the page's files under `/inspector` (not the API: see `./api.ts`). */
export function createInspectorStaticHandler(options: InspectorStaticOptions = {}): HttpHandler {
  // Found on first use: a server that is never asked for the page never looks for it.
  let root = options.root;
  return {
    async handle(req, res, url) {
      const { pathname } = url;
      if (pathname !== INSPECTOR_PATH && !pathname.startsWith(`${INSPECTOR_PATH}/`)) return false;
      if (pathname.startsWith(`${INSPECTOR_PATH}/api/`)) return false;
      requireMethod(req, res, pathname, ['GET', 'HEAD']);
      if (pathname === INSPECTOR_PATH) {
        res.writeHead(308, { location: `${INSPECTOR_PATH}/${url.search}`, 'content-length': 0 });
        res.end();
        return true;
      }
      const name = pathname === `${INSPECTOR_PATH}/` ? 'index.html' : pathname.slice(INSPECTOR_PATH.length + 1);
      if (!FILE_NAME.test(name)) throw new HttpError(404, `No inspector file at ${pathname}`);
      root ??= inspectorRoot();
      let body: Buffer;
      try {
        body = await readFile(join(root, name));
      } catch {
        throw new HttpError(404, `No inspector file at ${pathname}`);
      }
      send(res, req.method === 'HEAD', CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)]!, body);
      return true;
    },
  };
}

function send(res: ServerResponse, headOnly: boolean, type: string, body: Buffer): void {
  res.writeHead(200, { ...INSPECTOR_HEADERS, 'content-type': type, 'content-length': body.length });
  res.end(headOnly ? undefined : body);
}
