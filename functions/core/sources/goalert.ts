import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { DeliveryPolicy } from '../config/policies';
import { AUTH_OK, authFailure, checkCredentialOrToken, sha256Hex } from './auth';
import { parseBody, textField } from './body';
import { idKeyPart, queryKeyPart } from './shared';
import { bearer } from './sign';
import type { AuthOutcome, DedupeKey, InboundWebhook, SignInput, SourcePack, WebhookBody } from './types';

export const GOALERT = {
  /**
   * GoAlert retries a send that got no answer within 3 s, 3 times, each due 15 s after the failure
   * and picked up by a 5 s engine cycle (engine/message/db.go): 18-23, 36-46, 54-69 s after the
   * first. A minute covers the first two; a wider window would swallow a notification rule "after
   * 1 minute" on the same contact method (60-65 s later, the same body). docs/oncall-tools.md,
   * Decisions.
   */
  dedupeWindowSeconds: 60,
  /** Only with GoAlert's webhook signing (target/goalert PR #4225): base64 ECDSA over the body. */
  signatureHeader: 'x-webhook-signature',
  /** `keyring.SignASN1`: ECDSA (P-224 keys) over the SHA-512/224 digest of the body, ASN.1 DER. */
  digest: 'sha512-224',
} as const;

/** GoAlert's message kinds, the `Type` of its webhook body (notification/webhook/sender.go). */
export const GoAlertType = {
  Alert: 'Alert',
  AlertBundle: 'AlertBundle',
  AlertStatus: 'AlertStatus',
  Test: 'Test',
  Verification: 'Verification',
  ScheduleOnCallUsers: 'ScheduleOnCallUsers',
} as const;

/**
 * GoAlert's own SMS (notification/twilio/sms.go, alertsms.go), without the reply codes the relay
 * cannot take: `GoAlert: Alert #42: <summary>` and the alert's link, the summary shortened so that
 * the link still fits one SMS; `GoAlert: Svc '<name>': 3 unacked alerts`; a status update's log
 * entry; `GoAlert: Test message.`; `GoAlert: Verification code: 123456`.
 */
const DEFAULT_TEMPLATE = [
  '{%- assign app = AppName | default: "GoAlert" -%}',
  '{%- case Type -%}',
  "{%- when 'Alert' -%}",
  "{%- assign head = app | append: ': Alert #' | append: AlertID | append: ': ' -%}",
  '{%- assign room = 160 | minus: head.size -%}',
  '{%- if GoAlertURL and GoAlertURL.size < 100 -%}{%- assign room = room | minus: GoAlertURL.size | minus: 2 -%}{%- endif -%}',
  '{{ head }}{{ Summary | truncate: room }}{% if GoAlertURL and GoAlertURL.size < 100 %}\n\n{{ GoAlertURL }}{% endif %}',
  "{%- when 'AlertBundle' -%}",
  "{{ app }}: Svc '{{ ServiceName }}': {{ Count }} unacked alert{% if Count > 1 %}s{% endif %}{% if GoAlertURL %}\n\n{{ GoAlertURL }}{% endif %}",
  "{%- when 'AlertStatus' -%}",
  "{%- assign head = app | append: ': Alert #' | append: AlertID | append: ': ' -%}",
  '{%- assign room = 160 | minus: head.size | minus: LogEntry.size | minus: 2 -%}',
  '{%- if room < 20 -%}{%- assign room = 20 -%}{%- endif -%}',
  '{{ head }}{{ Summary | truncate: room }}\n\n{{ LogEntry }}',
  "{%- when 'Test' -%}",
  '{{ app }}: Test message.',
  "{%- when 'Verification' -%}",
  '{{ app }}: Verification code: {{ Code }}',
  "{%- when 'ScheduleOnCallUsers' -%}",
  "{{ app }}: on call for {{ ScheduleName }}: {{ Users | map: 'Name' | join: ', ' | default: 'nobody' }}",
  '{%- else -%}',
  '{{ app }}: {{ Type }}{% if Summary %}: {{ Summary }}{% endif %}',
  '{%- endcase -%}',
].join('\n');

/** Parsed public keys by PEM: a route's key is parsed once, not per webhook. */
const publicKeys = new Map<string, KeyObject>();

function publicKeyOf(pem: string): KeyObject {
  let key = publicKeys.get(pem);
  if (key === undefined) {
    key = createPublicKey(pem);
    publicKeys.set(pem, key);
  }
  return key;
}

/** `X-Webhook-Signature`: base64 of an ASN.1 ECDSA signature over SHA-512/224 of the body bytes. */
function verifySignature(webhook: InboundWebhook, publicKey: string): AuthOutcome {
  const header = webhook.headers[GOALERT.signatureHeader]?.trim();
  if (header === undefined || header === '')
    return authFailure('missing X-Webhook-Signature (the route has a publicKey: GoAlert signs every webhook)');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(header)) return authFailure('X-Webhook-Signature is not base64');
  try {
    return verify(GOALERT.digest, webhook.body, publicKeyOf(publicKey), Buffer.from(header, 'base64'))
      ? AUTH_OK
      : authFailure('X-Webhook-Signature does not match the body');
  } catch {
    // A malformed DER signature throws in OpenSSL: it is simply not a valid signature.
    return authFailure('X-Webhook-Signature does not match the body');
  }
}

function goalertDedupe(body: WebhookBody, webhook: InboundWebhook): DedupeKey {
  const type = textField(body, 'Type') ?? '';
  const to = queryKeyPart(webhook);
  const alertId = textField(body, 'AlertID');
  const id = (() => {
    switch (type) {
      case GoAlertType.Alert:
        return alertId === undefined ? undefined : `alert:${idKeyPart(alertId)}`;
      case GoAlertType.AlertStatus:
        // One alert has many status updates: the log entry tells them apart.
        return alertId === undefined
          ? undefined
          : `status:${idKeyPart(alertId)}:${sha256Hex(textField(body, 'LogEntry') ?? '')}`;
      case GoAlertType.AlertBundle: {
        const service = textField(body, 'ServiceID');
        return service === undefined ? undefined : `bundle:${idKeyPart(service)}:${textField(body, 'Count') ?? ''}`;
      }
      case GoAlertType.Verification: {
        const code = textField(body, 'Code');
        return code === undefined ? undefined : `verification:${idKeyPart(code)}`;
      }
      default:
        return undefined;
    }
  })();
  return {
    key: `goalert:${id ?? `body:${sha256Hex(webhook.body)}`}:${to}`,
    windowSeconds: GOALERT.dedupeWindowSeconds,
  };
}

/**
 * `send-test` and the tests post as GoAlert's contact method would, with the route's token as a
 * Bearer credential (the same secret `?token=` carries). A route with a `publicKey` cannot be signed
 * here: only GoAlert holds the private key.
 */
function signGoAlert(input: SignInput): Record<string, string> {
  if (input.route?.publicKey !== undefined) {
    throw new Error('this goalert route has a publicKey: only GoAlert holds the private key that signs its webhooks');
  }
  return { 'User-Agent': 'Go-http-client/1.1', ...bearer(input) };
}

/**
 * GoAlert's webhook contact method (a user's "Webhook" contact method, one URL per user): JSON
 * bodies with `Type` `Alert`, `AlertBundle`, `AlertStatus`, `Test`, `Verification` (and
 * `ScheduleOnCallUsers` for schedule notifications), as `notification/webhook/sender.go` builds them.
 *
 * GoAlert sets no header of its own choosing, so the credential is the route's token in the URL
 * (`?token=`) or a Bearer header. Releases that sign (`X-Webhook-Signature`, target/goalert PR
 * #4225) are verified too when the route holds GoAlert's public key (`publicKey`). Deduplicated on
 * the alert id (status updates: and their log entry), the service of a bundle, the verification
 * code, and the URL's recipient, within a minute.
 *
 * @example
 * ```yaml
 * goalert:
 *   source: goalert
 *   secret: goalert-token      # URL: https://relay.example.com/hooks/goalert?to=255712345678&token=<goalert-token>
 *   recipients: ["{{ query.to }}"]
 *   allowRecipients: ["person:*"]
 * ```
 */
export const goalert: SourcePack = {
  name: 'goalert',
  secretKind: 'credential',
  defaultDelivery: DeliveryPolicy.AtLeastOnce,
  digestNoun: 'alerts',
  recipientsFromRequest: true,
  // The number of config/local.yaml's `asha`, a person `allowRecipients: ["person:*"]` admits.
  examples: { directory: 'goalert', query: { to: '0712345678' } },
  sign: signGoAlert,
  capturedHeaders: [],
  description:
    "GoAlert's webhook contact method (one URL per user, ?to=): alerts, bundles, status updates, test and verification messages.",
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate: (webhook, { secret, route }) => {
    const credential = checkCredentialOrToken(webhook, secret);
    if (!credential.ok || route?.publicKey === undefined) return credential;
    return verifySignature(webhook, route.publicKey);
  },

  parse: (webhook) => parseBody(webhook),

  // GoAlert's Test and Verification messages are what a user asked for: they are sent.
  ping: () => undefined,

  dedupe: (body, webhook) => goalertDedupe(body, webhook),
};
