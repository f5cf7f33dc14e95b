import { DeliveryPolicy } from '../../functions/core/config/policies';
import { parseBody, textField } from '../../functions/core/sources/body';
import { BASE64_SHA256, headerValue, verifyBodySignature } from '../../functions/core/sources/body-signature';
import { idKeyPart } from '../../functions/core/sources/shared';
import { callerHeader, firstWord, freshId, sha256Hmac } from '../../functions/core/sources/sign';
import type { SourcePack } from '../../functions/core/sources/types';

/**
 * A source that exists only in the tests, written as a new pack would be: one module, on the
 * helpers the shipped packs use, and nothing anywhere else. "Acme" signs the body with its
 * `whsec_` secret in `Acme-Signature`, names the event in `Acme-Event` only (so its examples name
 * it in their file names) and ids each delivery in `Acme-Delivery`.
 */
export const acme: SourcePack = {
  name: 'acme',
  description: 'Acme order webhooks (Acme-Signature, whsec_ secret).',
  capturedHeaders: ['acme-event', 'acme-delivery'],
  defaultTemplate: 'Acme {{ order.id }}: {{ order.status | default: "updated" }}',
  secretKind: 'whsec',
  defaultDelivery: DeliveryPolicy.AtMostOnce,
  examples: { directory: 'acme-examples', eventHeaders: (stem) => ({ 'acme-event': firstWord(stem) }) },
  sign: ({ body, secret, headers }) => ({
    'Acme-Event': callerHeader(headers, 'acme-event') ?? 'order',
    'Acme-Delivery': callerHeader(headers, 'acme-delivery') ?? freshId(),
    'Acme-Signature': sha256Hmac(secret, body, 'base64'),
  }),
  authenticate: (webhook, { secret }) =>
    verifyBodySignature(webhook, secret, {
      headers: ['acme-signature'],
      label: 'Acme-Signature',
      encoding: 'base64',
      extract: (value) => (BASE64_SHA256.test(value) ? value : undefined),
    }),
  parse: (webhook) => parseBody(webhook),
  ping: (body) => (textField(body, 'order', 'id') === 'ping' ? 'acme ping' : undefined),
  dedupe: (body, webhook) => ({
    key: `acme:${idKeyPart(headerValue(webhook, ['acme-delivery']) ?? textField(body, 'order', 'id') ?? '')}`,
    windowSeconds: 3600,
  }),
};
