import { createHmac } from 'node:crypto';
import { DeliveryPolicy } from '../config/policies';
import { authFailure, type HmacAlgorithm } from './auth';
import { parseBody } from './body';
import { headerValue, verifyBodySignature, type BodySignatureScheme, type SignedPayload } from './body-signature';
import { bodySignedDedupe, checkTimestamp, idKeyPart } from './shared';
import type { AuthOutcome, InboundWebhook, PackRouteSettings, SignInput, SourcePack } from './types';
import { callerHeader, freshId, unixSeconds } from './sign';
import { HOUR_SECONDS } from '../defaults';

/**
 * Payment and shop platforms retry a failed delivery for days (Paystack: for 72 hours). The same
 * window holds for a repeat of the signed body, which for these senders carries an event id or
 * reference of its own; a route can set `dedupeWindow` to change it.
 */
const DEDUPE_WINDOW_SECONDS = 72 * HOUR_SECONDS;

/** Digest sizes in bytes: a signature of any other length is malformed, not merely wrong. */
const DIGEST_BYTES: Readonly<Record<HmacAlgorithm, number>> = { sha1: 20, sha256: 32, sha512: 64 };

type Signature = NonNullable<PackRouteSettings['signature']>;

/** What one encoded digest of `algorithm` looks like: hex of either case, or padded base64. */
function digestPattern(algorithm: HmacAlgorithm, encoding: Signature['encoding']): RegExp {
  const bytes = DIGEST_BYTES[algorithm];
  if (encoding === 'hex') return new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`);
  const padding = (3 - (bytes % 3)) % 3;
  return new RegExp(`^[A-Za-z0-9+/]{${Math.ceil((bytes * 4) / 3)}}={${padding}}$`);
}

function schemeOf(signature: Signature): BodySignatureScheme {
  const digest = digestPattern(signature.algorithm, signature.encoding);
  return {
    headers: [signature.header],
    label: signature.header,
    encoding: signature.encoding,
    algorithm: signature.algorithm,
    extract: (value) => {
      if (!value.startsWith(signature.prefix)) return undefined;
      const received = value.slice(signature.prefix.length);
      if (!digest.test(received)) return undefined;
      return signature.encoding === 'hex' ? received.toLowerCase() : received;
    },
  };
}

/**
 * The bytes a sender signs: the route's `signed` pattern with `{body}` replaced by the body exactly
 * as sent and `{timestamp}` by the timestamp header's value as sent; the rest is literal (UTF-8).
 *
 * @example
 * ```ts
 * signedBytes('v0:{timestamp}:{body}', body, '1700000000'); // "v0:1700000000:" followed by the body bytes
 * ```
 */
export function signedBytes(pattern: string, body: Uint8Array, timestamp: string | undefined): Uint8Array {
  if (pattern === '{body}') return body;
  return Buffer.concat(
    pattern
      .split(/(\{body\}|\{timestamp\})/)
      .map((part) =>
        part === '{body}' ? body : Buffer.from(part === '{timestamp}' ? (timestamp ?? '') : part, 'utf8'),
      ),
  );
}

function signedPayload(pattern: string, webhook: InboundWebhook, timestamp: string | undefined): SignedPayload {
  return {
    bytes: signedBytes(pattern, webhook.body, timestamp),
    description: pattern === '{body}' ? 'the body' : `the signed "${pattern}"`,
  };
}

/**
 * The HMAC a route's `signature` settings describe (algorithm, encoding, prefix, over its `signed`
 * pattern) in its signature header, a timestamp (now) in its timestamp header, and a fresh id in
 * its dedupe header, when the route names them.
 *
 * @throws {Error} no route settings were given (the scheme is in the route, not the source; a route
 *   loaded from a config always has them)
 */
const signHmacRoute = ({ body, secret, headers, now = new Date(), route }: SignInput): Record<string, string> => {
  const signature = route?.signature;
  if (signature === undefined)
    throw new Error('an hmac route is signed from its own signature settings; none were given');
  const timestamp =
    route?.timestamp === undefined ? undefined : (callerHeader(headers, route.timestamp.header) ?? unixSeconds(now));
  const digest = createHmac(signature.algorithm, secret)
    .update(signedBytes(signature.signed, body, timestamp))
    .digest(signature.encoding);
  return {
    ...(route?.timestamp === undefined ? {} : { [route.timestamp.header]: timestamp! }),
    ...(route?.dedupe === undefined
      ? {}
      : { [route.dedupe.header]: callerHeader(headers, route.dedupe.header) ?? freshId() }),
    [signature.header]: `${signature.prefix}${digest}`,
  };
};

/**
 * Any sender that signs with a shared secret, described in the route rather than in code: the
 * signature header, HMAC algorithm and encoding, an optional prefix, what is signed (the body, or a
 * pattern with a timestamp), an optional signed timestamp header checked against the tolerance in
 * both directions, and an optional delivery-id header for dedupe (else a hash of the body).
 *
 * @example
 * ```yaml
 * routes:
 *   paystack:
 *     source: hmac
 *     secret: paystack-secret
 *     recipients: ["0754111222"]
 *     signature: { header: x-paystack-signature, algorithm: sha512 }
 * ```
 */
export const hmac: SourcePack = {
  name: 'hmac',
  secretKind: 'key',
  defaultDelivery: DeliveryPolicy.AtMostOnce,
  examples: { directory: 'hmac' },
  sign: signHmacRoute,
  // The route's own delivery-id header is added by `capturedHeaderNames`.
  capturedHeaders: [],
  description:
    'Any sender that signs with a shared secret (HMAC over the body, optionally with a timestamp), described in the route.',
  defaultTemplate:
    '{{ message | default: text | default: summary | default: title | default: event_type | default: type | default: event | default: "Webhook received" }}',

  authenticate(webhook, { secret, toleranceSeconds, route }): AuthOutcome {
    if (secret === '') return authFailure('no secret is configured for this route');
    const signature = route?.signature;
    if (signature === undefined) return authFailure('the route has no signature settings');
    let timestamp: string | undefined;
    if (route?.timestamp !== undefined) {
      timestamp = headerValue(webhook, [route.timestamp.header]);
      if (timestamp === undefined) return authFailure(`missing ${route.timestamp.header} header`);
      const fresh = checkTimestamp(timestamp, webhook.receivedAt, route.timestamp.tolerance ?? toleranceSeconds);
      if (!fresh.ok) return fresh;
    }
    return verifyBodySignature(
      webhook,
      secret,
      schemeOf(signature),
      signedPayload(signature.signed, webhook, timestamp),
    );
  },

  parse: (webhook) => parseBody(webhook, { form: 'fields' }),

  // A configured sender has no ping the relay could know of; a test delivery is sent as an SMS.
  ping: () => undefined,

  // The delivery-id header is never covered by the signature, so a repeat of the signed body is a
  // duplicate too, whatever id it carries (see `bodySignedDedupe`).
  dedupe: (_body, webhook, route) => {
    const header = route?.dedupe?.header;
    const id = header === undefined ? undefined : headerValue(webhook, [header]);
    return bodySignedDedupe(
      'hmac',
      id === undefined ? undefined : `hmac:header:${idKeyPart(id)}`,
      webhook,
      DEDUPE_WINDOW_SECONDS,
    );
  },
};
