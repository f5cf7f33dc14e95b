import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * Signs SNS messages the way SNS does, written from the SNS developer guide ("Verifying the
 * signatures of Amazon SNS messages") independently of the relay's verifier: the string to sign is
 * `<name>\n<value>\n` for Message, MessageId, Subject (Notification, when present), SubscribeURL and
 * Token (confirmations), Timestamp, TopicArn and Type, in that order; SignatureVersion 1 signs it
 * with SHA1withRSA, 2 with SHA256withRSA; the signature is base64.
 *
 * The key and certificate are the test-only pair under test/fixtures/sns/ (the example payloads are under examples/sns/); a test trusts the
 * certificate only by serving it itself (see {@link snsDocuments}).
 */

const KEYS = new URL('../fixtures/sns/', import.meta.url);
const EXAMPLES = new URL('../../examples/sns/', import.meta.url);

export const SNS_TEST_CERT = readFileSync(new URL('test-signing-cert.pem', KEYS), 'utf8');
export const SNS_TEST_KEY: KeyObject = createPrivateKey(readFileSync(new URL('test-signing-key.pem', KEYS), 'utf8'));

/** Where the test messages say their certificate is: a well-formed SNS certificate URL. */
export const SNS_TEST_CERT_URL =
  'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-00000000000000000000000000000test.pem';

export type SnsMessage = Record<string, string>;

/** The fixture, as published (placeholder signature). */
export function snsFixture(name: string): SnsMessage {
  return JSON.parse(readFileSync(new URL(name, EXAMPLES), 'utf8')) as SnsMessage;
}

export interface SnsSignOptions {
  readonly version?: '1' | '2';
  readonly key?: KeyObject;
  readonly certUrl?: string;
  /** Sets `Timestamp`. */
  readonly at?: Date;
}

/** The message with `Timestamp`, `SignatureVersion`, `SigningCertURL` and a fresh `Signature`. */
export function signSnsMessage(
  message: SnsMessage,
  { version = '1', key = SNS_TEST_KEY, certUrl = SNS_TEST_CERT_URL, at }: SnsSignOptions = {},
): SnsMessage {
  const signed: SnsMessage = {
    ...message,
    SignatureVersion: version,
    SigningCertURL: certUrl,
    ...(at === undefined ? {} : { Timestamp: at.toISOString() }),
  };
  const names =
    signed['Type'] === 'Notification'
      ? ['Message', 'MessageId', ...('Subject' in signed ? ['Subject'] : []), 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  const text = names.map((name) => `${name}\n${signed[name]}\n`).join('');
  signed['Signature'] = sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(text, 'utf8'), key).toString('base64');
  return signed;
}

/** The headers SNS sends with a message (the route's token travels separately). */
export function snsHeaders(message: SnsMessage): Record<string, string> {
  return {
    'content-type': 'text/plain; charset=UTF-8',
    'user-agent': 'Amazon Simple Notification Service Agent',
    'x-amz-sns-message-type': message['Type']!,
    'x-amz-sns-message-id': message['MessageId']!,
    'x-amz-sns-topic-arn': message['TopicArn']!,
  };
}

/** What a test's fetcher serves: the test certificate at its URL, plus any other documents. */
export function snsDocuments(extra: Record<string, string> = {}): Record<string, string> {
  return { [SNS_TEST_CERT_URL]: SNS_TEST_CERT, ...extra };
}
