import { verify as verifySignature, X509Certificate } from 'node:crypto';
import { DeliveryPolicy } from '../config/policies';
import { AUTH_OK, authFailure, checkCredentialOrToken } from './auth';
import { bodyText, field, jsonDepthExceeds, parseBody, parseJson, textField } from './body';
import { BadPayloadError } from './errors';
import { idKeyPart } from './shared';
import { MAX_JSON_DEPTH } from '../defaults';
import type {
  AuthContext,
  AuthOutcome,
  InboundWebhook,
  Prefetched,
  SignInput,
  SourceFetch,
  SourcePack,
  WebhookBody,
} from './types';
import { bearer } from './sign';

export const SNS = {
  /**
   * An HTTP/S delivery policy retries for at most 3,600 s (a hard limit of SNS), and every retry
   * keeps the message's `MessageId` and signed `Timestamp`: a message older than this (plus the
   * route's clock tolerance) can only be a replay.
   */
  maxAgeSeconds: 3600,
  /** Longer than any message can stay fresh, so a replay inside the freshness window is always a duplicate. */
  dedupeWindowSeconds: 24 * 3600,
  /** Signing certificates kept per fetcher; SNS rotates them rarely and names each by its own URL. */
  certificateCacheSize: 32,
} as const;

/**
 * The hosts of SNS in every AWS partition: `sns.<region>.` + amazonaws.com (aws, aws-us-gov),
 * amazonaws.com.cn (aws-cn), amazonaws.eu (aws-eusc), c2s.ic.gov (aws-iso), sc2s.sgov.gov
 * (aws-iso-b), cloud.adc-e.uk (aws-iso-e), csp.hci.ic.gov (aws-iso-f). Anchored, on the parsed
 * host name only: no user info, no port, no look-alike suffix gets through.
 */
const SNS_HOST =
  /^sns\.[a-z]{2,4}(?:-[a-z]+)+-\d{1,2}\.(?:amazonaws\.com|amazonaws\.com\.cn|amazonaws\.eu|c2s\.ic\.gov|sc2s\.sgov\.gov|cloud\.adc-e\.uk|csp\.hci\.ic\.gov)$/;
/** SNS names each certificate `SimpleNotificationService-<hash>.pem` at the root of its host. */
const CERTIFICATE_PATH = /^\/SimpleNotificationService-[A-Za-z0-9]{1,64}\.pem$/;

const TYPES = ['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'] as const;
type MessageType = (typeof TYPES)[number];

/** The fields each type signs, in the documented order; `Subject` only when present. */
const SIGNED_FIELDS: Readonly<Record<MessageType, readonly string[]>> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

const SIGNATURE_ALGORITHMS: Readonly<Record<string, string>> = { '1': 'sha1', '2': 'sha256' };

type Message = Readonly<Record<string, unknown>>;

/**
 * Whether `url` is an https URL on an SNS host, with no user info or port; `path` further
 * constrains its path.
 *
 * @example
 * ```ts
 * isSnsUrl('https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-abc.pem'); // true
 * isSnsUrl('https://sns.eu-west-1.amazonaws.com.evil.example/x.pem'); // false
 * ```
 */
export function isSnsUrl(url: unknown, path?: RegExp): url is string {
  if (typeof url !== 'string') return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'https:' || parsed.username !== '' || parsed.password !== '' || parsed.port !== '')
    return false;
  if (!SNS_HOST.test(parsed.hostname)) return false;
  return path === undefined || path.test(parsed.pathname);
}

const isCertificateUrl = (url: unknown): url is string => isSnsUrl(url, CERTIFICATE_PATH);

/** A `SubscribeURL` that confirms a subscription, on an SNS host. */
function isConfirmUrl(url: unknown): url is string {
  if (!isSnsUrl(url, /^\/$/)) return false;
  return new URL(url).searchParams.get('Action') === 'ConfirmSubscription';
}

/** The body as an SNS message, or `undefined` when it is not one; never throws. */
function readMessage(webhook: InboundWebhook): Message | undefined {
  try {
    const text = bodyText(webhook);
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) return undefined;
    const value = parseJson(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    return TYPES.includes((value as Message)['Type'] as MessageType) ? (value as Message) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The string SNS signs: for each signed field present, its name, a newline, its value, a newline.
 *
 * @example
 * ```ts
 * stringToSign({ Type: 'Notification', Message: 'hi', MessageId: 'm', Timestamp: 't', TopicArn: 'a' });
 * // 'Message\nhi\nMessageId\nm\nTimestamp\nt\nTopicArn\na\nType\nNotification\n'
 * ```
 */
export function stringToSign(message: Message): string | undefined {
  const fields = SIGNED_FIELDS[message['Type'] as MessageType];
  if (fields === undefined) return undefined;
  let text = '';
  for (const name of fields) {
    const value = message[name];
    if (value === undefined && name === 'Subject') continue;
    if (typeof value !== 'string') return undefined;
    text += `${name}\n${value}\n`;
  }
  return text;
}

/** Certificates by URL, per fetcher (so a test's fetcher never sees another's), least recently used first. */
const certificateCaches = new WeakMap<SourceFetch, Map<string, string>>();

function cacheOf(fetch: SourceFetch): Map<string, string> {
  let cache = certificateCaches.get(fetch);
  if (cache === undefined) {
    cache = new Map();
    certificateCaches.set(fetch, cache);
  }
  return cache;
}

function remember(cache: Map<string, string>, url: string, pem: string): void {
  cache.delete(url);
  cache.set(url, pem);
  while (cache.size > SNS.certificateCacheSize) cache.delete(cache.keys().next().value!);
}

async function fetchCertificate(
  webhook: InboundWebhook,
  fetch: SourceFetch,
  context: AuthContext,
): Promise<Prefetched> {
  const none: Prefetched = { documents: new Map() };
  // Nothing leaves the relay for a request without the route's token, of a topic the route does
  // not accept, or with a certificate URL that is not SNS's: `authenticate` refuses those anyway.
  if (!checkCredentialOrToken(webhook, context.secret).ok) return none;
  const message = readMessage(webhook);
  const topic = textField(message, 'TopicArn');
  if (topic === undefined || !(context.route?.topics ?? []).includes(topic)) return none;
  const url = message?.['SigningCertURL'];
  if (!isCertificateUrl(url)) return none;
  const cache = cacheOf(fetch);
  const cached = cache.get(url);
  if (cached !== undefined) {
    remember(cache, url, cached);
    return { documents: new Map([[url, cached]]) };
  }
  try {
    const { status, body } = await fetch(url);
    if (status >= 500 || status === 429)
      return { ...none, unavailable: `the SNS signing certificate answered ${status}` };
    if (status < 200 || status > 299 || !body.includes('-----BEGIN CERTIFICATE-----')) return none;
    remember(cache, url, body);
    return { documents: new Map([[url, body]]) };
  } catch (error) {
    return {
      ...none,
      unavailable: `the SNS signing certificate could not be fetched: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

function verifyMessage(webhook: InboundWebhook, context: AuthContext): AuthOutcome {
  const token = checkCredentialOrToken(webhook, context.secret);
  if (!token.ok) return token;
  const message = readMessage(webhook);
  if (message === undefined)
    return authFailure(
      'body is not an SNS message (JSON with a Type of Notification, SubscriptionConfirmation or UnsubscribeConfirmation)',
    );
  const type = message['Type'] as MessageType;
  const headerType = webhook.headers['x-amz-sns-message-type']?.trim();
  if (headerType !== undefined && headerType !== type)
    return authFailure('x-amz-sns-message-type does not match the message Type');

  const topic = textField(message, 'TopicArn');
  const topics = context.route?.topics ?? [];
  if (topic === undefined || !topics.includes(topic))
    return authFailure(`topic ${topic ?? '(none)'} is not one of this route's topics`);
  const headerTopic = webhook.headers['x-amz-sns-topic-arn']?.trim();
  if (headerTopic !== undefined && headerTopic !== topic)
    return authFailure('x-amz-sns-topic-arn does not match the message TopicArn');
  if (type === 'SubscriptionConfirmation' && !isConfirmUrl(message['SubscribeURL']))
    return authFailure('SubscribeURL is not an SNS ConfirmSubscription URL');

  const algorithm = SIGNATURE_ALGORITHMS[String(message['SignatureVersion'])];
  if (algorithm === undefined) return authFailure('SignatureVersion is neither 1 nor 2');
  const certificateUrl = message['SigningCertURL'];
  if (!isCertificateUrl(certificateUrl)) return authFailure('SigningCertURL is not an https URL of an SNS certificate');
  const pem = context.documents?.get(certificateUrl);
  if (pem === undefined) return authFailure('the signing certificate could not be obtained from SigningCertURL');
  const signed = stringToSign(message);
  const signature = textField(message, 'Signature');
  if (signed === undefined || signature === undefined)
    return authFailure('the message lacks a signed field or its Signature');

  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch {
    return authFailure('SigningCertURL did not serve a readable certificate');
  }
  const now = webhook.receivedAt.getTime();
  if (now < Date.parse(certificate.validFrom) || now > Date.parse(certificate.validTo))
    return authFailure('the signing certificate is not valid at this time');
  let matches: boolean;
  try {
    matches = verifySignature(
      algorithm,
      Buffer.from(signed, 'utf8'),
      certificate.publicKey,
      Buffer.from(signature, 'base64'),
    );
  } catch {
    matches = false;
  }
  if (!matches) return authFailure('the Signature does not verify with the SNS signing certificate');
  return checkFreshness(textField(message, 'Timestamp'), webhook.receivedAt, context.toleranceSeconds);
}

/** The signed `Timestamp`: not from the future beyond the tolerance, not older than SNS can still retry. */
function checkFreshness(timestamp: string | undefined, receivedAt: Date, toleranceSeconds: number): AuthOutcome {
  const sent = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  if (Number.isNaN(sent)) return authFailure('Timestamp is missing or not a date');
  const ageSeconds = (receivedAt.getTime() - sent) / 1000;
  if (ageSeconds > SNS.maxAgeSeconds + toleranceSeconds)
    return authFailure(
      `Timestamp is older than SNS retries (${SNS.maxAgeSeconds} s) and the ${toleranceSeconds} s tolerance`,
    );
  if (-ageSeconds > toleranceSeconds) return authFailure(`Timestamp is ahead of the ${toleranceSeconds} s tolerance`);
  return AUTH_OK;
}

/**
 * The message with, when its `Message` is a JSON object (a CloudWatch alarm, an S3 event…), that
 * object as `MessageJson`; templates read `MessageJson.AlarmName` and the like.
 */
function parseMessage(webhook: InboundWebhook): WebhookBody {
  const body = parseBody(webhook);
  if (
    body === null ||
    typeof body !== 'object' ||
    Array.isArray(body) ||
    !TYPES.includes((body as Message)['Type'] as MessageType)
  ) {
    throw new BadPayloadError(
      'expected an SNS message: a JSON object whose Type is Notification, SubscriptionConfirmation or UnsubscribeConfirmation',
    );
  }
  const inner = (body as Message)['Message'];
  if (typeof inner !== 'string' || !inner.trimStart().startsWith('{') || jsonDepthExceeds(inner, MAX_JSON_DEPTH - 1))
    return body;
  try {
    const parsed = parseJson(inner);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? { ...body, MessageJson: parsed }
      : body;
  } catch {
    return body;
  }
}

/**
 * A CloudWatch alarm becomes `[ALARM] <name>: <reason> (<region code>)`, the region code read
 * from the alarm's ARN (the message's own `Region` is a display name such as "EU (Ireland)"), else
 * from the topic's. CloudWatch's reasons run to 200 characters, so the reason alone is shortened
 * (with `...`) to keep the whole text in one SMS and the region in it. Any other message shows its
 * `Subject` and `Message`.
 */
const DEFAULT_TEMPLATE = [
  '{%- assign alarm = MessageJson -%}',
  '{%- if alarm.AlarmName and alarm.NewStateValue -%}',
  "{%- assign arn = alarm.AlarmArn | default: TopicArn | split: ':' -%}",
  '{%- assign region = arn[3] | default: alarm.Region -%}',
  '{%- assign room = 152 | minus: alarm.NewStateValue.size | minus: alarm.AlarmName.size | minus: region.size -%}',
  '{%- if room < 20 %}{% assign room = 20 %}{% endif -%}',
  '[{{ alarm.NewStateValue }}] {{ alarm.AlarmName }}: {{ alarm.NewStateReason | truncate: room }} ({{ region }})',
  '{%- elsif Subject -%}',
  '{{ Subject }}: {{ Message }}',
  '{%- else -%}',
  '{{ Message }}',
  '{%- endif -%}',
].join('\n');

const SIGNED_HEADERS = {
  Type: 'x-amz-sns-message-type',
  MessageId: 'x-amz-sns-message-id',
  TopicArn: 'x-amz-sns-topic-arn',
} as const;

/**
 * Amazon SNS: the headers SNS sends, read from the message itself (`x-amz-sns-message-type`,
 * `-message-id`, `-topic-arn`), and the route's token as `Authorization: Bearer`. The message's own
 * `Signature` is left as the payload file has it: only AWS holds the key that signs SNS messages,
 * so `send-test` can replay a genuine message captured within the last hour (it verifies), while a
 * hand-written payload is refused 401. `npm start` then never trusts anything but SNS's own
 * certificates, unless started with `RELAY_LOCAL_DOCUMENTS` (tests).
 */
const signSns = (input: SignInput): Record<string, string> => {
  let message: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(Buffer.from(input.body).toString('utf8'));
    if (parsed !== null && typeof parsed === 'object') message = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: the relay will say so.
  }
  const fromMessage = Object.entries(SIGNED_HEADERS).flatMap(([field, name]) =>
    typeof message[field] === 'string' ? [[name, message[field] as string]] : [],
  );
  return {
    'Content-Type': 'text/plain; charset=UTF-8',
    'User-Agent': 'Amazon Simple Notification Service Agent',
    ...Object.fromEntries(fromMessage),
    ...bearer(input),
  };
};

/**
 * Amazon SNS HTTP(S) subscriptions (CloudWatch alarms, or any topic). Every message's signature
 * (SignatureVersion 1, SHA1withRSA, or 2, SHA256withRSA) is verified with the certificate at its
 * `SigningCertURL`, accepted only on an SNS host and fetched by `prefetch`; the topic must be one of
 * the route's `topics`, and the route's secret must come with the request (`?token=` in the
 * subscription's endpoint URL, or an Authorization header). A `SubscriptionConfirmation` is
 * confirmed by the relay (a GET of its `SubscribeURL`) and recorded without an SMS.
 *
 * @example
 * ```yaml
 * aws-alarms:
 *   source: sns
 *   secret: sns-token          # subscribe https://relay.example.com/hooks/aws-alarms?token=<sns-token>
 *   topics: [arn:aws:sns:eu-west-1:123456789012:ops-alarms]
 *   recipients: ["+255712345678"]
 * ```
 */
export const sns: SourcePack = {
  name: 'sns',
  secretKind: 'credential',
  defaultDelivery: DeliveryPolicy.AtLeastOnce,
  incident: {
    key: '{{ MessageJson.AlarmArn | default: MessageJson.AlarmName }}',
    resolved: "MessageJson.NewStateValue == 'OK'",
  },
  digestNoun: 'alarms',
  examples: { directory: 'sns' },
  sign: signSns,
  capturedHeaders: ['x-amz-sns-message-type', 'x-amz-sns-message-id', 'x-amz-sns-topic-arn'],
  description:
    'Amazon SNS HTTP(S) subscriptions (signed with the SNS certificate, topics listed per route): CloudWatch alarms, any topic.',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate(webhook, context): AuthOutcome {
    try {
      return verifyMessage(webhook, context);
    } catch (error) {
      return authFailure(`the SNS message cannot be verified: ${error instanceof Error ? error.name : 'error'}`);
    }
  },

  prefetch: fetchCertificate,

  parse: parseMessage,

  ping: () => undefined,

  control(body) {
    const type = textField(body, 'Type');
    const topic = textField(body, 'TopicArn') ?? '(no topic)';
    if (type === 'SubscriptionConfirmation') {
      const url = field(body, 'SubscribeURL');
      return isConfirmUrl(url)
        ? { reason: `SNS subscription to ${topic} confirmed by the relay`, confirmUrl: url }
        : { reason: `SNS subscription confirmation for ${topic} without a usable SubscribeURL; not confirmed` };
    }
    if (type === 'UnsubscribeConfirmation')
      return { reason: `SNS subscription to ${topic} ended (UnsubscribeConfirmation)` };
    return undefined;
  },

  dedupe(body) {
    const id = textField(body, 'MessageId');
    if (id === undefined || id === '') throw new BadPayloadError('the SNS message has no MessageId');
    return { key: `sns:${idKeyPart(id)}`, windowSeconds: SNS.dedupeWindowSeconds };
  },
};
