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
 *
 * The credential is taken exactly as sent: everything after the scheme and the spaces that follow
 * it (a token with inner spaces stays as it is), and a Basic credential is split at its first
 * colon only (RFC 7617: a user-id cannot contain one, a password can), so a password with colons
 * is compared whole. HTTP strips spaces around a header value, so a secret that starts or ends with
 * one could never match: `secretProblem` refuses such a secret before it is used.
 */
export function checkCredential(webhook: InboundWebhook, secret: string): AuthOutcome {
  // An empty secret would match an empty credential: a misconfiguration must never open the route.
  if (secret === '') return authFailure('the route has no secret configured');
  const header = webhook.headers['authorization']?.trim();
  if (header === undefined || header === '') return authFailure('missing Authorization header');
  const scheme = /^(\S+)(?:[ \t]+|$)/.exec(header)?.[1] ?? '';
  const value = header.slice(scheme.length).trimStart();
  switch (scheme.toLowerCase()) {
    case 'bearer':
      return safeEqual(value, secret) ? AUTH_OK : authFailure('bearer token does not match');
    case 'basic': {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return authFailure('malformed basic credential');
      const password = safeEqual(decoded.slice(colon + 1), secret);
      // Both are compared whatever the first gives, so the time taken does not tell which matched.
      const whole = safeEqual(decoded, secret) && secret.includes(':');
      return password || whole ? AUTH_OK : authFailure('basic credential does not match');
    }
    default:
      return authFailure('unsupported Authorization scheme; use Bearer or Basic');
  }
}

/**
 * A credential sent by a sender that may or may not be able to set headers: `Authorization: Bearer
 * <secret>` (or Basic with the secret as password), or a `?token=<secret>` query parameter. Either
 * one matching is enough, since both compare with the same secret; an empty secret never matches.
 *
 * @example
 * ```ts
 * checkCredentialOrToken(webhook, context.secret); // generic, Uptime Kuma
 * ```
 */
export function checkCredentialOrToken(webhook: InboundWebhook, secret: string): AuthOutcome {
  if (secret === '') return authFailure('no secret is configured for this route');
  const token = webhook.query['token'];
  const header = webhook.headers['authorization']?.trim();
  if (!header) {
    if (token === undefined) {
      return authFailure('missing credential: send "Authorization: Bearer <token>" or a token query parameter');
    }
    return safeEqual(token, secret) ? AUTH_OK : authFailure('token query parameter does not match');
  }
  const byHeader = checkCredential(webhook, secret);
  if (byHeader.ok || token === undefined) return byHeader;
  return safeEqual(token, secret)
    ? AUTH_OK
    : authFailure('neither the Authorization header nor the token query parameter matches');
}

/** SHA-256 of data as hex: dedupe keys from bodies that carry no delivery id. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
