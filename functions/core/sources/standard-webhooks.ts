import { AUTH_OK, authFailure, hmac, safeEqual, sha256Hex } from './auth';
import { parseBody } from './body';
import { checkTimestamp, idKeyPart } from './shared';
import type { AuthOutcome, InboundWebhook, SourcePack } from './types';

const SECRET_PREFIX = 'whsec_';

/** Strict, as the reference libraries are: a mistyped secret should fail loudly, not decode to noise. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The spec's example retry schedule ends 75 h 35 min after the first attempt, and every retry keeps
 * the `webhook-id`: 76 h covers all of them.
 */
const DEDUPE_WINDOW_SECONDS = 76 * 3600;

/**
 * The HMAC key: the base64 after `whsec_`. A secret without the prefix is taken as base64 too, as
 * the reference libraries do; `undefined` when it is not base64 at all.
 */
function signingKey(secret: string): Buffer | undefined {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const unpadded = encoded.replace(/=+$/, '');
  if (!BASE64.test(encoded) || unpadded.length % 4 === 1) return undefined;
  if (unpadded !== encoded && encoded.length % 4 !== 0) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length > 0 ? key : undefined;
}

function verify(webhook: InboundWebhook, secret: string, toleranceSeconds: number): AuthOutcome {
  const id = webhook.headers['webhook-id']?.trim();
  const timestamp = webhook.headers['webhook-timestamp']?.trim();
  const signatures = webhook.headers['webhook-signature']?.trim();
  if (!id) return authFailure('missing webhook-id header');
  if (!timestamp) return authFailure('missing webhook-timestamp header');
  if (!signatures) return authFailure('missing webhook-signature header');

  const fresh = checkTimestamp(timestamp, webhook.receivedAt, toleranceSeconds);
  if (!fresh.ok) return fresh;

  const key = signingKey(secret);
  if (key === undefined) return authFailure('the route secret is not a whsec_ base64 signing secret');

  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), webhook.body]);
  const expected = hmac('sha256', key, signed, 'base64');
  // Several signatures during a key rotation; `v1a` (ed25519) and unknown versions are skipped.
  const candidates = signatures
    .split(/\s+/)
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3));
  if (candidates.length === 0) return authFailure('webhook-signature has no v1 signature');
  return candidates.some((candidate) => safeEqual(candidate, expected))
    ? AUTH_OK
    : authFailure('no webhook-signature entry matches the id, timestamp and body');
}

/**
 * Standard Webhooks (standardwebhooks.com), as sent by Svix and others: `webhook-id`,
 * `webhook-timestamp` (unix seconds) and `webhook-signature`, a space-separated list of
 * `v1,<base64 HMAC-SHA256>` over `<id>.<timestamp>.<body>`, keyed with the base64 after `whsec_`.
 *
 * @example
 * ```ts
 * standardWebhooks.authenticate(webhook, { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', toleranceSeconds: 300 });
 * ```
 */
export const standardWebhooks: SourcePack = {
  name: 'standard-webhooks',
  description: 'Any Standard Webhooks sender (webhook-id/-timestamp/-signature, whsec_ secret), e.g. Svix.',
  defaultTemplate:
    '{{ type | default: "webhook" }}{% if data.id %} {{ data.id }}{% endif %}' +
    '{% if data.status %} ({{ data.status }}){% endif %}',

  authenticate(webhook, { secret, toleranceSeconds }): AuthOutcome {
    if (secret === '') return authFailure('no secret is configured for this route');
    return verify(webhook, secret, toleranceSeconds);
  },

  parse: (webhook) => parseBody(webhook),

  ping: () => undefined,

  dedupe(_body, webhook) {
    // The spec makes `webhook-id` the idempotency key: one id per event, kept by every retry.
    const id = webhook.headers['webhook-id']?.trim();
    const key = id ? idKeyPart(id) : `body-${sha256Hex(webhook.body)}`;
    return { key: `standard-webhooks:${key}`, windowSeconds: DEDUPE_WINDOW_SECONDS };
  },
};
