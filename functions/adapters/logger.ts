import { Logger } from '@aws-lambda-powertools/logger';
import { maskNumbersInText } from '../core/recipients/mask-text';
import type { RelayLogger } from '../relay/ports';
import { METRICS } from '../core/metrics';

/** What replaces a value whose key names a credential. */
export const REDACTED = '[REDACTED]';

/**
 * Keys whose values are credentials, compared lower-cased without `-` and `_`: any key ending in
 * api key, secret, authorization, token or password (`x-api-key`, `providerApiKey`, `clientSecret`,
 * `accessToken`). `secretName` and similar keys that only name a secret are kept.
 */
const CREDENTIAL_KEY = /(apikeys?|secrets?|authorization|tokens?|passwords?)$/;

const isCredentialKey = (key: string): boolean => CREDENTIAL_KEY.test(key.toLowerCase().replace(/[-_]/g, ''));

/**
 * The logger's JSON replacer: redacts values under credential keys and masks phone numbers in
 * every string, and in whole numbers (`255712345678` → `2557****678`), at every depth, errors' messages and stacks
 * included (Powertools formats an error into an object that passes through here again).
 *
 * @example
 * ```ts
 * JSON.stringify({ to: '255712345678', apiKey: 'k' }, maskingReplacer); // '{"to":"2557****678","apiKey":"[REDACTED]"}'
 * ```
 */
export function maskingReplacer(key: string, value: unknown): unknown {
  if (key !== '' && isCredentialKey(key)) return REDACTED;
  if (typeof value === 'string') return maskNumbersInText(value);
  // A payload can carry a phone number as a JSON number; it is logged masked, as a string.
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 99_999_999) {
    const masked = maskNumbersInText(String(value));
    return masked === String(value) ? value : masked;
  }
  return value;
}

export interface LoggerOptions {
  /**
   * Service name of every line.
   * @default `POWERTOOLS_SERVICE_NAME`, else 'sms-relay'
   */
  readonly serviceName?: string;
}

/**
 * A Powertools `Logger` that never writes a full phone number or a credential (see
 * {@link maskingReplacer}). Level and sampling come from `POWERTOOLS_LOG_LEVEL` and friends.
 *
 * @example
 * ```ts
 * const logger = createLogger();
 * logger.info('sent', { to: '255712345678' }); // … "to":"2557****678" …
 * ```
 */
export function createLogger({
  serviceName = process.env['POWERTOOLS_SERVICE_NAME'] || METRICS.service,
}: LoggerOptions = {}): Logger {
  return new Logger({ serviceName, jsonReplacerFn: maskingReplacer });
}

/** Powertools drops these keys from a log line's attributes (with a warning); the relay renames them. */
const RESERVED = new Set(['level', 'message', 'sampling_rate', 'service', 'timestamp']);

/**
 * The relay's logging port over a Powertools `Logger`.
 *
 * @example
 * ```ts
 * const context = { ...rest, logger: relayLogger(createLogger()) };
 * ```
 */
export function relayLogger(logger: Logger): RelayLogger {
  const write =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, attributes?: Record<string, unknown>): void => {
      if (attributes === undefined) logger[level](message);
      else logger[level](message, safeKeys(attributes));
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

function safeKeys(attributes: Record<string, unknown>): Record<string, unknown> {
  if (!Object.keys(attributes).some((key) => RESERVED.has(key))) return attributes;
  return Object.fromEntries(
    Object.entries(attributes).map(([key, value]) => [RESERVED.has(key) ? `detail_${key}` : key, value]),
  );
}
