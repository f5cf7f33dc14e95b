import { AUTH_OK, authFailure, sha256Hex } from './auth';
import type { AuthOutcome, DedupeKey, InboundWebhook } from './types';

const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * Checks a signed unix-seconds timestamp against the time the relay received the webhook, in both
 * directions: a stale one is a replay, and one from the future would stay "fresh" long enough to be
 * replayed later.
 *
 * @example
 * ```ts
 * const fresh = checkTimestamp(webhook.headers['webhook-timestamp'], webhook.receivedAt, context.toleranceSeconds);
 * if (!fresh.ok) return fresh;
 * ```
 */
export function checkTimestamp(value: string | undefined, receivedAt: Date, toleranceSeconds: number): AuthOutcome {
  if (value === undefined || !UNIX_SECONDS.test(value.trim())) {
    return authFailure('timestamp header is missing or not unix seconds');
  }
  const skew = Math.floor(receivedAt.getTime() / 1000) - Number(value.trim());
  if (skew > toleranceSeconds) return authFailure(`timestamp is older than the ${toleranceSeconds} s tolerance`);
  if (-skew > toleranceSeconds) return authFailure(`timestamp is ahead of the ${toleranceSeconds} s tolerance`);
  return AUTH_OK;
}

const READABLE_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * A sender-supplied id as part of a dedupe key: kept as is when short and printable, so that keys
 * stay readable in the store, else hashed so that no sender can make a key unbounded.
 *
 * @example
 * ```ts
 * `standard-webhooks:${idKeyPart('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W')}`; // the id itself
 * ```
 */
export function idKeyPart(id: string): string {
  return READABLE_ID.test(id) ? id : `sha256-${sha256Hex(id)}`;
}

/**
 * The dedupe key of a sender that signs only the body, whose delivery-id header anyone holding a
 * captured delivery can change: `key` from that header (or the body hash without one), and the
 * signed body's hash as `replayKey` whenever `key` is something else.
 *
 * @example
 * ```ts
 * bodySignedDedupe('github', `github:delivery:${id}`, webhook, 72 * 3600);
 * ```
 */
export function bodySignedDedupe(
  source: string,
  key: string | undefined,
  webhook: InboundWebhook,
  windowSeconds: number,
): DedupeKey {
  const bodyKey = `${source}:body:${sha256Hex(webhook.body)}`;
  return key === undefined || key === bodyKey
    ? { key: bodyKey, windowSeconds }
    : { key, windowSeconds, replayKey: bodyKey };
}

/**
 * The request's query parameters but `token` (a credential, which may be rotated), sorted, as a
 * dedupe key part: the person a per-user webhook URL names (`?to=…`). A tool that posts the same
 * body to each person's URL sends a different delivery to each. `none` without parameters.
 *
 * @example
 * ```ts
 * `goalert:alert:1942:${queryKeyPart(webhook)}`; // 'goalert:alert:1942:sha256-…'
 * ```
 */
export function queryKeyPart(webhook: InboundWebhook): string {
  const parameters = Object.entries(webhook.query)
    .filter(([name]) => name !== 'token')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return parameters.length === 0 ? 'none' : `sha256-${sha256Hex(JSON.stringify(parameters))}`;
}
