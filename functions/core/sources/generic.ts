import { DeliveryPolicy } from '../config/policies';
import { checkCredentialOrToken, sha256Hex } from './auth';
import { parseBody } from './body';
import { idKeyPart } from './shared';
import type { DedupeKey, SourcePack } from './types';
import { bearer } from './sign';
import { HOUR_SECONDS } from '../defaults';

/** A sender that names its delivery may retry it for as long as it likes: a day is generous. */
const IDEMPOTENCY_KEY_WINDOW_SECONDS = 24 * HOUR_SECONDS;

/**
 * Without an id, identical bodies are all the relay can match, and an identical body can be a
 * deliberate repeat ("door opened", twice). Ten minutes covers a script's or a no-code tool's quick
 * retries without swallowing the next real event; senders that retry for longer should send an
 * `Idempotency-Key`.
 */
const BODY_HASH_WINDOW_SECONDS = 600;

/**
 * Any sender that can put a shared token in `Authorization: Bearer <token>` (or Basic auth's
 * password), or, for senders that cannot set headers, in a `?token=` query parameter. Prefer the
 * header: query strings end up in access logs.
 *
 * @example
 * ```sh
 * curl -H "Authorization: Bearer $TOKEN" -H 'Idempotency-Key: backup-2025-11-21' \
 *   -d '{"message":"Nightly backup failed"}' https://relay.example.com/hooks/ops
 * ```
 */
export const generic: SourcePack = {
  name: 'generic',
  secretKind: 'credential',
  defaultDelivery: DeliveryPolicy.AtMostOnce,
  examples: { directory: 'generic' },
  sign: bearer,
  capturedHeaders: ['idempotency-key'],
  description: 'Any JSON or form-encoded webhook, authenticated by a Bearer token or ?token= query parameter.',
  defaultTemplate: '{{ message | default: text | default: summary | default: title | default: "Webhook received" }}',

  authenticate: (webhook, { secret }) => checkCredentialOrToken(webhook, secret),

  parse: (webhook) => parseBody(webhook, { form: 'fields' }),

  ping: () => undefined,

  dedupe(_body, webhook): DedupeKey {
    const idempotencyKey = webhook.headers['idempotency-key']?.trim();
    if (idempotencyKey) {
      return { key: `generic:idempotency:${idKeyPart(idempotencyKey)}`, windowSeconds: IDEMPOTENCY_KEY_WINDOW_SECONDS };
    }
    return { key: `generic:body:${sha256Hex(webhook.body)}`, windowSeconds: BODY_HASH_WINDOW_SECONDS };
  },
};
