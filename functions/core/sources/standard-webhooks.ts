import { randomBytes } from 'node:crypto';
import { DeliveryPolicy } from '../config/policies';
import { AUTH_OK, authFailure, hmac, safeEqual, sha256Hex } from './auth';
import { parseBody } from './body';
import { checkTimestamp, idKeyPart } from './shared';
import type { AuthOutcome, InboundWebhook, SignInput, SourcePack } from './types';
import { callerHeader, sha256Hmac, unixSeconds } from './sign';
import { HOUR_SECONDS } from '../defaults';

const SECRET_PREFIX = 'whsec_';

/** Strict, as the reference libraries are: a mistyped secret should fail loudly, not decode to noise. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The spec's example retry schedule ends 75 h 35 min after the first attempt, and every retry keeps
 * the `webhook-id`: 76 h covers all of them.
 */
const DEDUPE_WINDOW_SECONDS = 76 * HOUR_SECONDS;

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

/**
 * The header names a delivery uses: the spec's `webhook-*`, or Svix's own `svix-*`, which every
 * Svix-powered sender (Clerk, Resend and many more) sends unless its customer pays for
 * white-labelling. Same scheme, same values; a delivery that carries any `webhook-*` header is
 * read with those names only, so the two families are never mixed within one delivery.
 */
function headerFamily(webhook: InboundWebhook): 'webhook' | 'svix' {
  const { headers } = webhook;
  const spec = headers['webhook-id'] ?? headers['webhook-timestamp'] ?? headers['webhook-signature'];
  const svix = headers['svix-id'] ?? headers['svix-timestamp'] ?? headers['svix-signature'];
  return spec === undefined && svix !== undefined ? 'svix' : 'webhook';
}

function webhookHeaders(webhook: InboundWebhook): {
  readonly family: string;
  readonly id?: string;
  readonly timestamp?: string;
  readonly signatures?: string;
} {
  const family = headerFamily(webhook);
  const value = (name: string): string | undefined => webhook.headers[`${family}-${name}`]?.trim() || undefined;
  return { family, id: value('id'), timestamp: value('timestamp'), signatures: value('signature') };
}

function verify(webhook: InboundWebhook, secret: string, toleranceSeconds: number): AuthOutcome {
  const { family, id, timestamp, signatures } = webhookHeaders(webhook);
  if (!id) return authFailure(`missing ${family}-id header`);
  if (!timestamp) return authFailure(`missing ${family}-timestamp header`);
  if (!signatures) return authFailure(`missing ${family}-signature header`);

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
  if (candidates.length === 0) return authFailure(`${family}-signature has no v1 signature`);
  return candidates.some((candidate) => safeEqual(candidate, expected))
    ? AUTH_OK
    : authFailure(`no ${family}-signature entry matches the id, timestamp and body`);
}

/**
 * Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64
 * HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the base64-decoded part after `whsec_`.
 * When the caller sets a `svix-id` (or `svix-timestamp`) header, the same signature goes out under
 * Svix's header names instead, as a Svix-powered sender sends it
 * (`send-test --header 'svix-id: msg_1'`).
 */
const signStandardWebhooks = ({ body, secret, headers, now = new Date() }: SignInput): Record<string, string> => {
  const family =
    callerHeader(headers, 'svix-id') !== undefined || callerHeader(headers, 'svix-timestamp') !== undefined
      ? 'svix'
      : 'webhook';
  const id = callerHeader(headers, `${family}-id`) ?? `msg_${randomBytes(16).toString('base64url')}`;
  const timestamp = callerHeader(headers, `${family}-timestamp`) ?? unixSeconds(now);
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
  return {
    [`${family}-id`]: id,
    [`${family}-timestamp`]: timestamp,
    [`${family}-signature`]: `v1,${sha256Hmac(key, signed, 'base64')}`,
  };
};

/**
 * Standard Webhooks (standardwebhooks.com), as sent by Svix and others: `webhook-id`,
 * `webhook-timestamp` (unix seconds) and `webhook-signature`, a space-separated list of
 * `v1,<base64 HMAC-SHA256>` over `<id>.<timestamp>.<body>`, keyed with the base64 after `whsec_`.
 * Svix's own header names (`svix-id`, `svix-timestamp`, `svix-signature`) are read the same way.
 *
 * @example
 * ```ts
 * standardWebhooks.authenticate(webhook, { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', toleranceSeconds: 300 });
 * ```
 */
export const standardWebhooks: SourcePack = {
  name: 'standard-webhooks',
  secretKind: 'whsec',
  defaultDelivery: DeliveryPolicy.AtMostOnce,
  examples: { directory: 'standard-webhooks' },
  sign: signStandardWebhooks,
  capturedHeaders: ['webhook-id', 'svix-id'],
  description:
    'Any Standard Webhooks sender (webhook-* or svix-* id/timestamp/signature, whsec_ secret): Svix, Clerk, Resend…',
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
    // The spec makes `webhook-id` (Svix: `svix-id`) the idempotency key: one id per event, kept by every retry.
    const { id } = webhookHeaders(webhook);
    const key = id ? idKeyPart(id) : `body-${sha256Hex(webhook.body)}`;
    return { key: `standard-webhooks:${key}`, windowSeconds: DEDUPE_WINDOW_SECONDS };
  },
};
