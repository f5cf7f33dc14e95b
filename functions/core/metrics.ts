/**
 * The CloudWatch metrics the relay publishes (as EMF log lines through Powertools Metrics locally
 * and on Lambda) and the stack alarms on and charts. One definition: the relay operations publish
 * {@link RelayMetric} names, `infra/` builds its alarms and dashboard from the same object, and a
 * test fails when a name has neither a tile nor an alarm decision.
 *
 * CloudWatch identifies a metric by its full dimension set: a datapoint published with
 * `{ service, route }` is a different metric from one with `{ service }` alone. The alarms read the
 * service-only series ({@link METRICS}`.dimensions`), so every datapoint with a route is also
 * published to the service-only aggregate (see the Lambda wiring's `relayMetrics`).
 */
export const RelayMetric = {
  Accepted: 'Accepted',
  Duplicates: 'Duplicates',
  Filtered: 'Filtered',
  /** Accepted webhooks or messages never to be sent: no recipient resolved, a template that no longer fits the payload, a muted route. */
  Dropped: 'Dropped',
  /** Messages of a route under a planned mute (`sms-relay mute`): recorded DROPPED with the mute's reason, on purpose; with the route. */
  Muted: 'Muted',
  Sent: 'Sent',
  /** Milliseconds from a message's acceptance to SENT, once per message sent (redriven ones left out); with the route. */
  DeliveryLatency: 'DeliveryLatency',
  Failed: 'Failed',
  Unknown: 'Unknown',
  Parked: 'Parked',
  HeldBack: 'HeldBack',
  /** Messages recorded DEFERRED (quiet hours, a digest window): not lost, they go out in a digest. */
  Deferred: 'Deferred',
  /** Digest SMS recorded (each then sent, or failed, like any message). */
  Digests: 'Digests',
  CreditsSpent: 'CreditsSpent',
  Segments: 'Segments',
  RemainingBalance: 'RemainingBalance',
  /** Ingest answered 500: the route's secret is missing from the environment secret, or can never authenticate. */
  RouteMisconfigured: 'RouteMisconfigured',
  /** Ingest answered 4xx to a known route (401 a wrong secret or signature, 400, 413); with the route. */
  Rejected: 'Rejected',
  /** Each sweep: PENDING records due now (retries, redrives, inserts the stream missed), at most one page. */
  PendingDue: 'PendingDue',
  /** Each sweep: seconds since the oldest of those became due; 0 when none is. */
  OldestPendingAgeSeconds: 'OldestPendingAgeSeconds',
  /** Each sweep: due records whose send threw (the store failing), and each sweep step that failed; left for the next sweep. */
  SweepErrors: 'SweepErrors',
  /** Each sweep, once its steps have run (whatever they found): the heartbeat `SweeperNotRunning` reads. */
  Sweeps: 'Sweeps',
  /** Each balance-watch run: 1 when the balance could not be read, 0 when it was. */
  BalanceReadFailed: 'BalanceReadFailed',
  /** Records this version cannot decode (written by a newer version before a rollback): skipped, logged by id, counted. */
  UndecodableRecords: 'UndecodableRecords',
  /** Each sweep, and each change: 1 while sends are paused because the SMS service is unreachable, 0 otherwise. */
  SmsServiceUnreachable: 'SmsServiceUnreachable',
  /** Each sweep: records UNKNOWN now (may have been sent; redrive with --accept-duplicates). */
  UnknownNow: 'UnknownNow',
  /** Each sweep: records PARKED now (the balance could not pay; top up, then redrive). */
  ParkedNow: 'ParkedNow',
  /** Each sweep: records FAILED now (certainly not sent, no attempts left). */
  FailedNow: 'FailedNow',
  /** Each sweep: records HELD now (over a route limit). */
  HeldNow: 'HeldNow',
  /** Each sweep: DEFERRED records whose window ended more than one sweep ago (their digest is late). */
  DeferredOverdue: 'DeferredOverdue',
  /** Escalation and renotify SMS of an incident recorded (each then sent, or not, like any message); with the route. */
  EscalationsSent: 'EscalationsSent',
  /** Each sweep: open incidents past their last escalation and renotify step, neither acknowledged nor resolved. */
  IncidentsUnacknowledged: 'IncidentsUnacknowledged',
  /** Escalation or renotify steps that could not be recorded (the store refusing) or whose SMS can never go (no recipient, no fit); with the route. */
  EscalationErrors: 'EscalationErrors',
  /** Each sweep: open incidents whose next step is more than 2 minutes past due (`PAGING.overdueAfterMs`). */
  IncidentsOverdue: 'IncidentsOverdue',
} as const;
export type RelayMetric = (typeof RelayMetric)[keyof typeof RelayMetric];

/** Where the metrics go and which dimensions the alarms read. */
export const METRICS = {
  /** The local runtime's namespace; a deployed environment publishes to {@link metricsNamespace}. */
  namespace: 'SmsRelay',
  service: 'sms-relay',
  /** The dimension set alarms and dashboard read: Powertools' default `service` dimension. */
  dimensions: { service: 'sms-relay' },
  /** The extra dimension per-route metrics carry. */
  routeDimension: 'route',
  /**
   * The extra dimension per-send metrics carry where the provider is known (Sent, Failed, Unknown, Parked, CreditsSpent,
   * RemainingBalance, SmsServiceUnreachable, BalanceReadFailed): the provider's name. Each such
   * datapoint is also published to the service-only aggregate, as per-route ones are.
   */
  providerDimension: 'provider',
} as const;

/** The metrics published per provider as well (with {@link METRICS}`.providerDimension`), where a send's provider is known. */
export const PER_PROVIDER_METRICS: ReadonlySet<RelayMetric> = new Set([
  RelayMetric.Sent,
  RelayMetric.Failed,
  RelayMetric.Unknown,
  RelayMetric.Parked,
  RelayMetric.CreditsSpent,
  RelayMetric.RemainingBalance,
  RelayMetric.SmsServiceUnreachable,
  RelayMetric.BalanceReadFailed,
]);

/**
 * The namespace an environment's functions publish to and its alarms and dashboard read:
 * `SmsRelay/<env>`. One per environment, so two stacks in one account and region never share a
 * metric series (prod's alarms cannot fire on staging's failures).
 *
 * @example
 * ```ts
 * metricsNamespace('prod'); // 'SmsRelay/prod'
 * ```
 */
export function metricsNamespace(environmentName: string): string {
  return `${METRICS.namespace}/${environmentName}`;
}
