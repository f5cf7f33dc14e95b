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
  'sns',
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
  /**
   * What the pack's {@link SourcePack.prefetch} fetched for this webhook, by URL (the SNS signing
   * certificate). Absent for packs without `prefetch`.
   */
  readonly documents?: ReadonlyMap<string, string>;
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
  /**
   * The headers a capture keeps besides `content-type` and `user-agent`: the event and delivery-id
   * headers this source sends. Never a credential, signature or timestamp: a capture keeps only
   * what is named here (see `capturedHeaderNames`).
   */
  readonly capturedHeaders: readonly string[];
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
  /**
   * For packs whose authentication needs a document from the network (SNS: the certificate that
   * signed the message). Runs before the pure evaluation, through the injected `fetch`; what it
   * returns reaches `authenticate` as `AuthContext.documents`. Never throws.
   */
  prefetch?(webhook: InboundWebhook, fetch: SourceFetch, context: AuthContext): Promise<Prefetched>;
  /**
   * A message addressed to the relay rather than to people (SNS's subscription handshake): it is
   * recorded as DROPPED with the reason, never sent.
   */
  control?(body: WebhookBody, webhook: InboundWebhook): ControlMessage | undefined;
}

/** An HTTPS GET for a pack's I/O; rejects on a network failure or time-out. See `functions/relay/https-get.ts`. */
export type SourceFetch = (url: string) => Promise<FetchedDocument>;

export interface FetchedDocument {
  readonly status: number;
  readonly body: string;
}

export interface Prefetched {
  /** The text of each document fetched with a 2xx answer, by URL. */
  readonly documents: ReadonlyMap<string, string>;
  /**
   * Set when a document could not be fetched for a reason a retry may fix (network, time-out, 5xx):
   * the webhook is answered 503 and nothing is recorded, so the sender retries it.
   */
  readonly unavailable?: string;
}

export interface ControlMessage {
  /** Recorded as the DROPPED record's reason. */
  readonly reason: string;
  /**
   * A URL the relay GETs before recording (SNS: the `SubscribeURL` that confirms a subscription).
   * When that fails, the webhook is answered 503 and nothing is recorded, so the sender retries it.
   */
  readonly confirmUrl?: string;
}
