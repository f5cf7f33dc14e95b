import { isInteger, isSafeNumber, parse as parseLossless } from 'lossless-json';
import { BadPayloadError } from './errors';
import type { InboundWebhook, WebhookBody } from './types';

/** A digit run long enough to exceed 2^53; only then is the slower lossless parser needed. */
const POSSIBLY_UNSAFE_INTEGER = /\d{16}/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses JSON text, keeping integers beyond 2^53 as their exact decimal strings so that ids such
 * as Shopify's come out of templates and dedupe keys exactly as they were sent.
 *
 * @example
 * ```ts
 * parseJson('{"id": 820982911946154508}'); // { id: '820982911946154508' }
 * ```
 */
export function parseJson(text: string): WebhookBody {
  if (!POSSIBLY_UNSAFE_INTEGER.test(text)) return JSON.parse(text) as WebhookBody;
  return parseLossless(text, undefined, keepUnsafeIntegersExact);
}

function keepUnsafeIntegersExact(value: string): number | string {
  if (isSafeNumber(value)) return Number(value);
  // Unsafe integers keep every digit as a string; unsafe decimals lose only insignificant digits.
  return isInteger(value) ? value : Number(value);
}

export function bodyText(webhook: InboundWebhook): string {
  try {
    return utf8.decode(webhook.body);
  } catch (error) {
    throw new BadPayloadError('body is not valid UTF-8', { cause: error });
  }
}

function mediaType(webhook: InboundWebhook): string {
  return (webhook.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export interface ParseBodyOptions {
  /**
   * How an `application/x-www-form-urlencoded` body is read: `'payload-field'` takes the JSON in
   * its `payload` field (GitHub's default form), `'fields'` turns the fields into an object, and
   * `false` refuses form bodies.
   * @default false
   */
  readonly form?: 'payload-field' | 'fields' | false;
}

/**
 * Parses a webhook body: JSON by default (whatever the declared type, as several senders label
 * JSON as text), or form-encoded where the source's sender uses it.
 *
 * @example
 * ```ts
 * const body = parseBody(webhook, { form: 'payload-field' });
 * ```
 */
export function parseBody(webhook: InboundWebhook, { form = false }: ParseBodyOptions = {}): WebhookBody {
  const text = bodyText(webhook);
  if (mediaType(webhook) === 'application/x-www-form-urlencoded') {
    if (form === false) throw new BadPayloadError('form-encoded bodies are not accepted from this source; send JSON');
    const fields = new URLSearchParams(text);
    if (form === 'fields') return Object.fromEntries(fields);
    const payload = fields.get('payload');
    if (payload === null) throw new BadPayloadError('form body has no "payload" field');
    return parseJsonOrFail(payload);
  }
  return parseJsonOrFail(text);
}

function parseJsonOrFail(text: string): WebhookBody {
  if (text.trim() === '') throw new BadPayloadError('body is empty; expected JSON');
  try {
    return parseJson(text);
  } catch (error) {
    throw new BadPayloadError('body is not valid JSON', { cause: error });
  }
}

/** Reads a nested field without trusting the body's shape. */
export function field(value: unknown, ...path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** A string or number field as text (ids may be numbers, or exact strings when beyond 2^53). */
export function textField(value: unknown, ...path: readonly string[]): string | undefined {
  const found = field(value, ...path);
  if (typeof found === 'string') return found;
  if (typeof found === 'number' || typeof found === 'bigint') return String(found);
  return undefined;
}
