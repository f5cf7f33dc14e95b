import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { AuthOutcome, InboundWebhook } from './types';

export const AUTH_OK: AuthOutcome = Object.freeze({ ok: true });

export function authFailure(reason: string): AuthOutcome {
  return { ok: false, reason };
}

/**
 * Compares two strings in constant time. Both sides are hashed first so that neither the content
 * nor the length of the expected value leaks through timing.
 *
 * @example
 * ```ts
 * safeEqual(received, expected); // true or false, same time either way
 * ```
 */
export function safeEqual(received: string, expected: string): boolean {
  const a = createHash('sha256').update(received).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && received.length === expected.length;
}

/** The digests a signature may use (`sha1` only where a sender still signs with it). */
export type HmacAlgorithm = 'sha1' | 'sha256' | 'sha512';

/**
 * HMAC of the raw body bytes (or of a signed string built from them).
 *
 * @example
 * ```ts
 * hmac('sha256', secret, webhook.body, 'hex');
 * ```
 */
export function hmac(
  algorithm: HmacAlgorithm,
  key: string | Uint8Array,
  data: string | Uint8Array,
  encoding: 'hex' | 'base64',
): string {
  return createHmac(algorithm, key).update(data).digest(encoding);
}

/**
 * Accepts `Authorization: Bearer <secret>`, or `Authorization: Basic …` whose password equals the
 * secret (or, when the secret contains a colon, whose whole `user:password` equals it).
 */
export function checkCredential(webhook: InboundWebhook, secret: string): AuthOutcome {
  // An empty secret would match an empty credential: a misconfiguration must never open the route.
  if (secret === '') return authFailure('the route has no secret configured');
  const header = webhook.headers['authorization'];
  if (header === undefined || header.trim() === '') return authFailure('missing Authorization header');
  const [scheme = '', ...rest] = header.trim().split(/\s+/);
  const value = rest.join(' ');
  switch (scheme.toLowerCase()) {
    case 'bearer':
      return safeEqual(value, secret) ? AUTH_OK : authFailure('bearer token does not match');
    case 'basic': {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return authFailure('malformed basic credential');
      const candidate = secret.includes(':') ? decoded : decoded.slice(colon + 1);
      return safeEqual(candidate, secret) ? AUTH_OK : authFailure('basic credential does not match');
    }
    default:
      return authFailure('unsupported Authorization scheme; use Bearer or Basic');
  }
}

/** SHA-256 of data as hex: dedupe keys from bodies that carry no delivery id. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
