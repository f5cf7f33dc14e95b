import type { InboundWebhook } from '../../../../functions/core/sources/types';

export interface WebhookOf {
  /** A string is encoded as UTF-8; bytes are kept exactly. */
  readonly body?: string | Uint8Array;
  /** Any case: names are lower-cased, as the relay's entry point does. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
  readonly receivedAt?: Date;
}

/**
 * Builds an `InboundWebhook` the way the relay's entry point would hand it to a source pack.
 *
 * @example
 * ```ts
 * webhookOf({ body: '{"ok":true}', headers: { Authorization: 'Bearer s3cret' } });
 * ```
 */
export function webhookOf({
  body = '',
  headers = {},
  query = {},
  receivedAt = new Date(),
}: WebhookOf = {}): InboundWebhook {
  return {
    body: typeof body === 'string' ? new TextEncoder().encode(body) : body,
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
    query,
    receivedAt,
  };
}
