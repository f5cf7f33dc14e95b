import { isInteger, isSafeNumber, parse as parseLossless } from 'lossless-json';
import { MAX_JSON_DEPTH } from '../defaults';
import { BadPayloadError } from './errors';
import type { InboundWebhook, WebhookBody } from './types';

/** A digit run this long may exceed 2^53; only then is the slower lossless parser needed. */
const UNSAFE_DIGIT_RUN = 16;

/**
 * Whether `text` holds `UNSAFE_DIGIT_RUN` consecutive ASCII digits: `/\d{16}/.test(text)`, about
 * three times faster on webhook bodies (it runs on every body, before `JSON.parse`). Any such run
 * covers one of the positions 15, 31, 47…, so only those are probed, and the digits around a probe
 * that hits one are counted; a shorter run ends before the next probe, so nothing is read twice.
 *
 * @internal exported for its equivalence test.
 */
export function hasUnsafeDigitRun(text: string): boolean {
  const length = text.length;
  for (let probe = UNSAFE_DIGIT_RUN - 1; probe < length; probe += UNSAFE_DIGIT_RUN) {
    if (!isDigit(text.charCodeAt(probe))) continue;
    let start = probe;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start -= 1;
    let end = probe + 1;
    while (end < length && isDigit(text.charCodeAt(end))) end += 1;
    if (end - start >= UNSAFE_DIGIT_RUN) return true;
  }
  return false;
}

/** `0`–`9`, as `\d` matches them (no `u` flag: ASCII only). */
function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
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
  if (!hasUnsafeDigitRun(text)) return JSON.parse(text) as WebhookBody;
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
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    // Broken JSON stays a 400 however many brackets it opens; only a valid body is "too deep".
    // V8's JSON.parse does not recurse, so it can tell which this is.
    try {
      JSON.parse(text);
    } catch (error) {
      throw new BadPayloadError('body is not valid JSON', { cause: error });
    }
    // Not a BadPayloadError: no retry can change a body this deep, so the pipeline records it as
    // dropped (200) rather than refusing it, which would make the sender retry it for days.
    throw new Error(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  try {
    return parseJson(text);
  } catch (error) {
    throw new BadPayloadError('body is not valid JSON', { cause: error });
  }
}

/**
 * Whether JSON text opens more than `limit` arrays and objects inside each other, counted in one
 * pass over the text (brackets inside strings do not count), so nothing recursive ever sees it.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92 /* \\ */) index += 1;
      else if (code === 34 /* " */) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 91 /* [ */ || code === 123 /* { */) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === 93 /* ] */ || code === 125 /* } */) depth -= 1;
  }
  return false;
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
