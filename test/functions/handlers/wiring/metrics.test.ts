import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMetrics, flushMetrics, relayMetrics } from '../../../../functions/handlers/wiring/metrics';
import { type Captured, captureStdout, stubEnvironment } from '../support';

beforeEach(() => stubEnvironment({}));
afterEach(() => vi.unstubAllEnvs());

describe('the metrics', () => {
  let out: Captured;
  beforeEach(() => {
    out = captureStdout();
  });
  afterEach(() => {
    out.restore();
  });

  it('publishes every datapoint in the service-only series, and per route in its own EMF line', () => {
    const metrics = createMetrics();
    const port = relayMetrics(metrics);

    port.add('Sent', 1, 'alerts');
    port.add('Sent', 1, 'orders');
    port.add('CreditsSpent', 2.5, 'alerts');
    port.add('RemainingBalance', 97.5);
    flushMetrics(metrics);

    const lines = out.emf();
    const series = lines.map((line) => {
      const [directive] = (
        line['_aws'] as {
          CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
        }
      ).CloudWatchMetrics;
      return {
        namespace: directive!.Namespace,
        dimensions: directive!.Dimensions,
        metrics: directive!.Metrics,
        service: line['service'],
        route: line['route'],
      };
    });
    expect(series).toEqual([
      {
        namespace: 'SmsRelay',
        dimensions: [['service', 'route']],
        metrics: [{ Name: 'Sent', Unit: 'Count' }],
        service: 'sms-relay',
        route: 'alerts',
      },
      {
        namespace: 'SmsRelay',
        dimensions: [['service', 'route']],
        metrics: [{ Name: 'Sent', Unit: 'Count' }],
        service: 'sms-relay',
        route: 'orders',
      },
      {
        namespace: 'SmsRelay',
        dimensions: [['service', 'route']],
        metrics: [{ Name: 'CreditsSpent', Unit: 'None' }],
        service: 'sms-relay',
        route: 'alerts',
      },
      {
        namespace: 'SmsRelay',
        dimensions: [['service']],
        metrics: [
          { Name: 'Sent', Unit: 'Count' },
          { Name: 'CreditsSpent', Unit: 'None' },
          { Name: 'RemainingBalance', Unit: 'None' },
        ],
        service: 'sms-relay',
        route: undefined,
      },
    ]);
    // The service-only series adds up every route.
    expect(lines.at(-1)).toMatchObject({ Sent: [1, 1], CreditsSpent: 2.5, RemainingBalance: 97.5 });
  });

  it('publishes DeliveryLatency in milliseconds, each message its own value, so CloudWatch can take its p99', () => {
    const metrics = createMetrics();
    const port = relayMetrics(metrics);

    port.add('DeliveryLatency', 1_200, 'alerts');
    port.add('DeliveryLatency', 48_000, 'alerts');
    flushMetrics(metrics);

    const service = out.emf().at(-1)!;
    expect(service['_aws']).toMatchObject({
      CloudWatchMetrics: [{ Metrics: [{ Name: 'DeliveryLatency', Unit: 'Milliseconds' }] }],
    });
    expect(service['DeliveryLatency']).toEqual([1_200, 48_000]);
  });

  it('writes nothing, and warns about nothing, when nothing was measured', () => {
    flushMetrics(createMetrics());
    expect(out.lines()).toEqual([]);
  });
});
