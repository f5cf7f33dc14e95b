/**
 * The CloudWatch metrics the handlers publish (as EMF log lines through Powertools Metrics) and the
 * stack alarms on and charts. One definition, imported by both sides, so an alarm can never watch
 * a metric name or dimension set that nothing publishes.
 *
 * CloudWatch identifies a metric by its full dimension set: a datapoint published with
 * `{ service, route }` is a different metric from one with `{ service }` alone. The alarms read the
 * service-only series (`dimensions` below), so a handler that adds a `route` dimension to `Failed`
 * or `RemainingBalance` must also publish the service-only aggregate.
 *
 * @example
 * ```ts
 * const metrics = new Metrics({ namespace: METRICS.namespace, serviceName: METRICS.service });
 * metrics.addMetric(METRICS.names.sent, MetricUnit.Count, 1);
 * ```
 */
export const METRICS = {
  /** The local runtime's namespace; a deployed environment publishes to {@link metricsNamespace}. */
  namespace: 'SmsRelay',
  service: 'sms-relay',
  /** The dimension set alarms and dashboard read: Powertools' default `service` dimension. */
  dimensions: { service: 'sms-relay' },
  /** The extra dimension per-route metrics carry. */
  routeDimension: 'route',
  names: {
    accepted: 'Accepted',
    duplicates: 'Duplicates',
    filtered: 'Filtered',
    sent: 'Sent',
    failed: 'Failed',
    unknown: 'Unknown',
    parked: 'Parked',
    heldBack: 'HeldBack',
    /** Messages recorded DEFERRED (quiet hours, a digest window): counted, not alarmed: they go out in a digest. */
    deferred: 'Deferred',
    /** Digest SMS recorded; a digest that fails is counted in Failed (or Unknown) like any message. */
    digests: 'Digests',
    creditsSpent: 'CreditsSpent',
    segments: 'Segments',
    remainingBalance: 'RemainingBalance',
    /** Ingest answered 500: the route's secret is missing from the environment secret, or can never authenticate. */
    routeMisconfigured: 'RouteMisconfigured',
    /** Ingest answered 4xx to a known route (401 a wrong secret or signature, 400, 413); with the route. */
    rejected: 'Rejected',
    /** Each sweep: PENDING records due now (retries, redrives, inserts the stream missed), at most one page. */
    pendingDue: 'PendingDue',
    /** Each sweep: seconds since the oldest of those became due; 0 when none is. */
    oldestPendingAge: 'OldestPendingAgeSeconds',
    /** Each sweep: due records whose send threw (the store failing); left for the next sweep. */
    sweepErrors: 'SweepErrors',
    /** Each balance-watch run: 1 when the balance could not be read, 0 when it was. */
    balanceReadFailed: 'BalanceReadFailed',
  },
} as const;

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

export type MetricName = (typeof METRICS.names)[keyof typeof METRICS.names];
