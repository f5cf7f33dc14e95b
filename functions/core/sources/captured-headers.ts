import type { PackRouteSettings, SourcePack } from './types';

/** Kept in every capture: what the body is and who sent it. */
export const ALWAYS_CAPTURED_HEADERS = ['content-type', 'user-agent'] as const;

/**
 * The headers a route's captures keep: an allow-list, so that a credential in a header of any
 * name (`x-webhook-auth`) is never stored. The source's event and delivery-id headers are kept,
 * since templates and the preview read them, and an `hmac` route's `dedupe.header`; its
 * configured signature and timestamp headers never are, whatever they are called.
 *
 * @example
 * ```ts
 * capturedHeaderNames(github);          // ['content-type', 'user-agent', 'x-github-event', 'x-github-delivery']
 * capturedHeaderNames(hmac, routeConfig); // […, 'x-trello-delivery'], never 'x-trello-webhook'
 * ```
 */
export function capturedHeaderNames(pack: SourcePack, route?: PackRouteSettings): string[] {
  const never = new Set([route?.signature?.header, route?.timestamp?.header]);
  const names = [
    ...ALWAYS_CAPTURED_HEADERS,
    ...pack.capturedHeaders,
    ...(route?.dedupe === undefined ? [] : [route.dedupe.header]),
  ];
  return [...new Set(names)].filter((name) => !never.has(name));
}
