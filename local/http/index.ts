/**
 * The one local HTTP module, shared by the runtime's server, the console and the sandbox SMS
 * service: a guarded `node:http` server (`guard.ts`), the one HTTP error (`error.ts`), body reading
 * with a cap (`body.ts`), whole answers (`answer.ts`), request targets and a tiny path matcher
 * (`path.ts`), the loopback and same-site checks of local-only endpoints (`local.ts`) and
 * `listen` (`listen.ts`), and a request's query, path parameters or body read by a zod schema
 * (`request.ts`), and the one routing idiom of the three servers (`routes.ts`): each has a table of
 * `'METHOD /path'` → handler lines, looked up by `createRouter` (404 for an unknown path, the
 * path's methods for a 405).
 *
 * @example
 * ```ts
 * import { createGuardedServer, HttpError, listen, readBody, requestPath, sendError, sendJson } from '../http';
 *
 * const server = createGuardedServer((request, response) => {
 *   const answer = async (): Promise<void> => {
 *     if (requestPath(request.url) !== '/echo') throw new HttpError(404, 'not found');
 *     sendJson(response, 200, { bytes: (await readBody(request, { limitBytes: 1024 })).length });
 *   };
 *   answer().catch((error: unknown) => sendError(response, error));
 * });
 * const port = await listen(server, { port: 0, host: '127.0.0.1' });
 * ```
 */
export { sendError, sendJson, sendText, type AnswerOptions, type ErrorAnswerOptions } from './answer';
export { parseJson, readBody, readLimited } from './body';
export { HttpError } from './error';
export { createGuardedServer, HTTP_LIMITS, type HttpLimits } from './guard';
export { listen } from './listen';
export { consoleRefusal, crossSiteRefusal, isLocalRequest, isLoopbackAddress } from './local';
export { isUnder, matchPath, requestPath, requestQuery, type PathParams } from './path';
export { parseRequest, queryObject } from './request';
export {
  createRouter,
  routeTable,
  type PatternOf,
  type RouteMatch,
  type RouterOptions,
  type RouteTable,
} from './routes';
