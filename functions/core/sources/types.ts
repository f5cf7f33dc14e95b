import type { RouteConfig } from '../config/schema';

/**
 * What every source pack implements. A pack is one module under `functions/core/sources/`,
 * registered in `registry.ts`; adding a source is adding one file and one line there.
 */
export const SOURCE_NAMES = [
  'alertmanager',
  'grafana',
  'github',
  'shopify',
  'woocommerce',
  'stripe',
  'standard-webhooks',
  'generic',
  'gitlab',
  'sentry',
  'pagerduty',
  'uptime-kuma',
  'hmac',
] as const;

export type SourceName = (typeof SOURCE_NAMES)[number];

/** A webhook as it reached the relay, before anything was parsed. */
export interface InboundWebhook {
  /** The body bytes exactly as received: signatures are computed over these. */
  readonly body: Uint8Array;
  /** Header names lower-cased; a repeated header's values joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** Query-string parameters (first value of each). */
  readonly query: Readonly<Record<string, string>>;
  /** When the relay received it: the clock for timestamp tolerances. */
  readonly receivedAt: Date;
}

export interface AuthContext {
  /** The route's secret value (from the environment's secret, by the route's `secret` name). */
  readonly secret: string;
  /** Allowed clock difference for timestamped signatures (Stripe, Standard Webhooks). */
  readonly toleranceSeconds: number;
  /**
   * The route's validated settings, for packs configured per route (the accepted topics of an SNS
   * route, the signature scheme of an `hmac` route). Absent in calls that have no route (tests of
   * a pack on its own).
   */
  readonly route?: RouteConfig;
}

export type AuthOutcome =
  | { readonly ok: true }
  /** `reason` is safe to log and to return: it never contains the secret or the expected signature. */
  | { readonly ok: false; readonly reason: string };

/** The parsed body: JSON values, with integers beyond 2^53 kept as their exact decimal strings. */
export type WebhookBody = unknown;

export interface DedupeKey {
  /** Stable for the sender's own retries of one delivery; different for a deliberate repeat. */
  readonly key: string;
  /** How long a repeat of `key` is treated as a retry, unless the route overrides it. */
  readonly windowSeconds: number;
  /**
   * For senders that sign only the body: a key of the signed body itself, so that a captured
   * delivery replayed under a fresh (unsigned) delivery id is a duplicate too. Genuine
   * redeliveries carry the same body, so they match either key.
   */
  readonly replayKey?: string;
}

export interface SourcePack {
  readonly name: SourceName;
  /** One line for `--help` and the README. */
  readonly description: string;
  /** Used when a route has no `template`. Liquid, rendered against the body. */
  readonly defaultTemplate: string;
  /** Checks authenticity over the raw bytes with constant-time comparison. Never throws. */
  authenticate(webhook: InboundWebhook, context: AuthContext): AuthOutcome;
  /** Parses the body (JSON, or form-encoded where the sender uses it). Throws `BadPayloadError`. */
  parse(webhook: InboundWebhook): WebhookBody;
  /** A reason when this is a ping/test event to acknowledge without a send, else `undefined`. */
  ping(body: WebhookBody, webhook: InboundWebhook): string | undefined;
  /** The key that catches the sender's own retries. `route`: as in {@link AuthContext}. */
  dedupe(body: WebhookBody, webhook: InboundWebhook, route?: RouteConfig): DedupeKey;
}
