import type { DeliveryPolicy } from '../config/policies';
import type { HmacRouteSettings } from '../config/hmac-schema';
import type { OnCallDirectory } from '../oncall/schedule';

/**
 * The settings of a route that source packs read: a route's validated config (`RouteConfig`) has
 * them all. Declared here instead of taken from the config schema, because the schema imports the
 * packs' registry (for the source names and their default delivery): the packs importing it back
 * would make a cycle.
 */
export interface PackRouteSettings extends HmacRouteSettings {
  /** An `sns` route's accepted topic ARNs. */
  readonly topics?: readonly string[] | undefined;
  /** A `goalert` route's GoAlert webhook-signing public key (PEM), when signatures are checked. */
  readonly publicKey?: string | undefined;
}

/**
 * The kind of secret a source takes, which decides how a value is checked and generated:
 * - `credential`: sent as it is (a Bearer/Basic credential, a token header, `?token=`), so it must
 *   be printable ASCII without outer spaces; generated as URL-safe text;
 * - `key`: only ever an HMAC key, never sent, so any value is used exactly as it is; generated as
 *   URL-safe text;
 * - `whsec`: an HMAC key written `whsec_<base64>` (Stripe, Standard Webhooks: their libraries
 *   reject anything else); generated in that shape.
 */
export type SecretKind = 'credential' | 'key' | 'whsec';

/** What a pack's `sign` is given to post a body as its sender would. */
export interface SignInput {
  /** The body exactly as it will be sent: signatures cover these bytes. */
  readonly body: Uint8Array;
  /** The route's secret value. */
  readonly secret: string;
  /**
   * Headers the caller sets itself, any case. Signers take event names, ids and timestamps from
   * them when present (so a replay can reuse a delivery id) and never override them.
   */
  readonly headers?: Readonly<Record<string, string>>;
  readonly now?: Date;
  /** The route's validated settings: an `hmac` route's signature scheme is described there. */
  readonly route?: PackRouteSettings;
}

/** Where a pack's example payloads are and what their file names tell. */
export interface PackExamples {
  /**
   * The directory of the example payloads under the fixtures root (`examples/<directory>`):
   * the console's payload picker lists its `*.json`, `send-test` reads headers from their names.
   */
  readonly directory: string;
  /**
   * For senders that name the event only in a header: the headers an example's file name gives,
   * from its stem (`issues-opened` for `issues-opened.json`).
   */
  eventHeaders?(stem: string): Record<string, string>;
  /**
   * For senders that name the recipient in the URL (one URL per person): the query an example is
   * previewed with (`{ to: '0712345678' }` for `?to=0712345678`).
   */
  readonly query?: Readonly<Record<string, string>>;
}

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
  readonly route?: PackRouteSettings;
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

/**
 * What every source pack implements. A pack is one module under `functions/core/sources/`,
 * registered in `registry.ts`: everything about its sender (verification, signing for `send-test`,
 * its kind of secret, its examples, its default template) is on it.
 */
/** How a webhook names its incident (a template) and says it resolved (a condition). */
export interface IncidentRule {
  readonly key: string;
  readonly resolved: string;
  /**
   * A webhook that finds its incident open sends nothing (recorded DROPPED, noted on the incident),
   * for senders that deduplicate by the key themselves (Opsgenie by `alias`): their repeat is the
   * same alert again, not a reminder. Absent: a repeat is sent as the route says.
   */
  readonly quietRepeats?: boolean;
  /**
   * Every route of the source opens incidents, with or without `escalate`, `ack` or `incident:`:
   * the source's own API acts on them (Opsgenie's close and acknowledge). Absent: only a route
   * with paging keys does.
   */
  readonly always?: boolean;
}

export interface SourcePack {
  readonly name: string;
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
  /**
   * A route's `delivery` when it sets none: `at-least-once` for alerting systems (a lost alert
   * costs an outage, a duplicate one SMS), `at-most-once` for order, payment, code-hosting and
   * generic senders (a customer must not get an order SMS twice).
   */
  readonly defaultDelivery: DeliveryPolicy;
  /**
   * How a webhook of this source names its incident and says it resolved, for a route that pages
   * without its own `incident:`. Absent: the source has no notion of an alert that resolves, and a
   * paging route must say how.
   */
  readonly incident?: IncidentRule;
  /** What a digest SMS calls this source's messages (`12 orders in 10 min: …`); absent: `messages`. */
  readonly digestNoun?: string;
  /**
   * The sender calls one URL per person (an on-call tool's per-user webhook), so a route's templated
   * recipients are numbers chosen by the request: the route must list `allowRecipients`.
   */
  readonly recipientsFromRequest?: boolean;
  /**
   * For senders whose alert names who to page (Opsgenie's `responders`): those of the config's
   * people and schedules it names, as `person:<name>` and `oncall:<schedule>` entries, which then
   * take the place of the route's `recipients`. Empty: the alert names nobody the config knows, and
   * the route's recipients are paged. Never throws (the body is untrusted).
   */
  recipients?(body: WebhookBody, directory: OnCallDirectory): readonly string[];
  /**
   * For senders that give each alert its own urgency (Opsgenie's `priority`): `true` makes this
   * webhook's SMS critical for the credit reserve and the send lane, as a `priority: critical`
   * route's are, on a route that is not. Never throws.
   */
  critical?(body: WebhookBody): boolean;
  /**
   * For senders that post their alerts below the route's URL, as an API lays it out (Opsgenie's
   * `v2/alerts`): that path, without a leading slash. `send-test` posts there. Absent: the
   * route's URL itself (`/hooks/<route>`).
   */
  readonly createPath?: string;
  /** What kind of secret a route of this source takes (see {@link SecretKind}). */
  readonly secretKind: SecretKind;
  /** Where its example payloads are (see {@link PackExamples}). */
  readonly examples: PackExamples;
  /**
   * The headers its sender sends with `body` (signature, event, delivery id), for `send-test` and
   * the tests; `authenticate` accepts them. Never throws on a body, only on a missing route setting.
   */
  sign(input: SignInput): Record<string, string>;
  /** Checks authenticity over the raw bytes with constant-time comparison. Never throws. */
  authenticate(webhook: InboundWebhook, context: AuthContext): AuthOutcome;
  /** Parses the body (JSON, or form-encoded where the sender uses it). Throws `BadPayloadError`. */
  parse(webhook: InboundWebhook): WebhookBody;
  /** A reason when this is a ping/test event to acknowledge without a send, else `undefined`. */
  ping(body: WebhookBody, webhook: InboundWebhook): string | undefined;
  /** The key that catches the sender's own retries. `route`: as in {@link AuthContext}. */
  dedupe(body: WebhookBody, webhook: InboundWebhook, route?: PackRouteSettings): DedupeKey;
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
