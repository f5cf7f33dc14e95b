import type { DynaliteHandler } from './dynalite-handler';

/**
 * `handler` handing on one request at a time, in order: the next when the last is answered or
 * failed. The store's worker answers requests in the order they come, so a burst of reads sent at
 * once (the attention watch's ten listings) holds every webhook's request that comes after it; sent
 * through this, they leave a webhook waiting for one of them at most.
 *
 * @example
 * ```ts
 * const background = localClient(oneAtATime(thread.handler));
 * ```
 */
export function oneAtATime(handler: DynaliteHandler): DynaliteHandler {
  let last: Promise<unknown> = Promise.resolve();
  return {
    handle: (request, options) => {
      const turn = last.then(async () => await handler.handle(request, options));
      last = turn.catch(() => undefined);
      return turn;
    },
    updateHttpClientConfig: () => handler.updateHttpClientConfig(),
    httpHandlerConfigs: () => handler.httpHandlerConfigs(),
    // `handler` is shared with the store's main client, which destroys it when the store closes.
    destroy: () => undefined,
  };
}
