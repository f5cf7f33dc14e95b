import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricUnit as Unit } from '@aws-lambda-powertools/metrics/types';
import { RelayMetric, type RelayMetrics } from '../../relay/ports';
import { METRICS } from '../../core/metrics';

/** Gauges and amounts of money are not counts. */
const UNITS: Readonly<Partial<Record<RelayMetric, Unit>>> = {
  [RelayMetric.RemainingBalance]: MetricUnit.NoUnit,
  [RelayMetric.CreditsSpent]: MetricUnit.NoUnit,
  [RelayMetric.OldestPendingAgeSeconds]: MetricUnit.Seconds,
  [RelayMetric.DeliveryLatency]: MetricUnit.Milliseconds,
};

export interface MetricsOptions {
  /**
   * @default `POWERTOOLS_METRICS_NAMESPACE`, else 'SmsRelay'
   */
  readonly namespace?: string;
  /**
   * The `service` dimension every datapoint carries.
   * @default `POWERTOOLS_SERVICE_NAME`, else 'sms-relay'
   */
  readonly serviceName?: string;
}

/**
 * A Powertools `Metrics` for the relay's namespace and service (see `functions/core/metrics.ts`, which the
 * alarms are built from).
 *
 * @example
 * ```ts
 * const metrics = createMetrics();
 * relayMetrics(metrics).add('Sent', 1, 'alerts');
 * flushMetrics(metrics);
 * ```
 */
export function createMetrics({
  namespace = process.env['POWERTOOLS_METRICS_NAMESPACE'] || METRICS.namespace,
  serviceName = process.env['POWERTOOLS_SERVICE_NAME'] || METRICS.service,
}: MetricsOptions = {}): Metrics {
  return new Metrics({ namespace, serviceName });
}

/**
 * The relay's metrics port. Every datapoint goes into the service-only series, which the alarms
 * read; one with a route is also written at once as a single-metric EMF line with the `route`
 * dimension, since CloudWatch keys a metric by its whole dimension set and one EMF line carries one
 * set.
 *
 * @example
 * ```ts
 * const port = relayMetrics(createMetrics());
 * port.add('Failed', 1, 'orders'); // Failed{service} now (buffered) and Failed{service,route=orders} now
 * ```
 */
export function relayMetrics(metrics: Metrics): RelayMetrics {
  return {
    add(name, value, route, provider) {
      const unit = UNITS[name] ?? MetricUnit.Count;
      metrics.addMetric(name, unit, value);
      for (const [dimension, of] of [
        [METRICS.routeDimension, route],
        [METRICS.providerDimension, provider],
      ] as const) {
        if (of === undefined) continue;
        const single = metrics.singleMetric();
        single.addDimension(dimension, of);
        single.addMetric(name, unit, value);
      }
    },
  };
}

/**
 * Writes the buffered service-only datapoints as one EMF line; called at the end of every
 * invocation. Nothing is written (nor warned about) when nothing was measured.
 *
 * @example
 * ```ts
 * try { return await work(); } finally { flushMetrics(metrics); }
 * ```
 */
export function flushMetrics(metrics: Metrics): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}
