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
    parked: 'Parked',
    heldBack: 'HeldBack',
    creditsSpent: 'CreditsSpent',
    segments: 'Segments',
    remainingBalance: 'RemainingBalance',
  },
} as const;

export type MetricName = (typeof METRICS.names)[keyof typeof METRICS.names];
