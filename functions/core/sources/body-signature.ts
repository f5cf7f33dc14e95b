import { AUTH_OK, authFailure, hmac, safeEqual, type HmacAlgorithm } from './auth';
import type { AuthOutcome, InboundWebhook } from './types';

/**
 * How a sender puts an HMAC of the raw body into one header (GitHub, Shopify, WooCommerce, Sentry,
 * PagerDuty, and the schemes `hmac` routes describe).
 */
export interface BodySignatureScheme {
  /** Lower-cased header names to look in, first present wins (a sender may have renamed it). */
  readonly headers: readonly string[];
  /** The header's name as the sender documents it: failure reasons name it. */
  readonly label: string;
  readonly encoding: 'hex' | 'base64';
  /** @default 'sha256' */
  readonly algorithm?: HmacAlgorithm;
  /**
   * The signature inside the header's value, or several (a sender rotating its secret signs with
   * each; any one matching passes), or `undefined` when the value is malformed.
   */
  readonly extract: (value: string) => string | readonly string[] | undefined;
}

/** Base64 of a SHA-256 digest: 32 bytes make 43 characters and one `=` of padding. */
export const BASE64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;

/** Hex of a SHA-256 digest, either case. */
export const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** What a signature covers when it is not the body alone (a timestamp, then the body). */
export interface SignedPayload {
  readonly bytes: Uint8Array;
  /** Names it in the failure reason, e.g. "the timestamp and body". */
  readonly description: string;
}

/**
 * Verifies an HMAC (SHA-256 unless the scheme says otherwise) of the body bytes exactly as
 * received, or of `payload` built from them, compared in constant time. An empty secret always
 * fails: anyone can compute an HMAC keyed with the empty string.
 *
 * @example
 * ```ts
 * verifyBodySignature(webhook, context.secret, {
 *   headers: ['x-shopify-hmac-sha256'],
 *   label: 'X-Shopify-Hmac-Sha256',
 *   encoding: 'base64',
 *   extract: (value) => (BASE64_SHA256.test(value) ? value : undefined),
 * });
 * ```
 */
export function verifyBodySignature(
  webhook: InboundWebhook,
  secret: string,
  scheme: BodySignatureScheme,
  payload: SignedPayload = { bytes: webhook.body, description: 'the body' },
): AuthOutcome {
  if (secret === '') return authFailure('no secret is configured for this route');
  const value = headerValue(webhook, scheme.headers);
  if (value === undefined) return authFailure(`missing ${scheme.label} header`);
  const extracted = scheme.extract(value);
  const received = typeof extracted === 'string' ? [extracted] : extracted;
  if (received === undefined || received.length === 0) return authFailure(`malformed ${scheme.label} header`);
  const expected = hmac(scheme.algorithm ?? 'sha256', secret, payload.bytes, scheme.encoding);
  // Every candidate is compared, so the time taken does not tell which one (if any) matched.
  const matches = received.reduce((found, candidate) => safeEqual(candidate, expected) || found, false);
  return matches ? AUTH_OK : authFailure(`${scheme.label} does not match ${payload.description}`);
}

/**
 * The first of `names` (lower-cased) present with a non-blank value, trimmed.
 *
 * @example
 * ```ts
 * headerValue(webhook, ['x-shopify-event-id', 'shopify-event-id']);
 * ```
 */
export function headerValue(webhook: InboundWebhook, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = webhook.headers[name]?.trim();
    if (value) return value;
  }
  return undefined;
}
