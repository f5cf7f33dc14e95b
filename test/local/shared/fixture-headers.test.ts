import { describe, expect, it } from 'vitest';
import { fixtureHeaders } from '../../../local/shared/fixture-headers';

describe('fixtureHeaders: the headers an example payload names in its file name', () => {
  it.each([
    ['github', 'examples/github/ping.json', { 'x-github-event': 'ping' }],
    ['github', 'examples/github/workflow_run-completed.json', { 'x-github-event': 'workflow_run' }],
    ['github', 'examples/github/push.form.txt', { 'x-github-event': 'push' }],
    ['sentry', '/abs/fixtures/sentry/metric_alert-critical.json', { 'sentry-hook-resource': 'metric_alert' }],
    ['shopify', 'examples/shopify/orders-create.json', { 'x-shopify-topic': 'orders/create' }],
    [
      'woocommerce',
      'examples/woocommerce/order-created.json',
      { 'x-wc-webhook-topic': 'order.created', 'x-wc-webhook-resource': 'order', 'x-wc-webhook-event': 'created' },
    ],
  ])('%s %s', (source, path, headers) => {
    expect(fixtureHeaders(source, path)).toEqual(headers);
  });

  it('reads nothing into a file outside a directory named after its source, or a source that names its events in the body', () => {
    expect(fixtureHeaders('github', 'my-payload.json')).toEqual({});
    expect(fixtureHeaders('github', 'examples/gitlab/push.json')).toEqual({});
    expect(fixtureHeaders('stripe', 'examples/stripe/charge.refunded.json')).toEqual({});
    expect(fixtureHeaders('pagerduty', 'examples/pagerduty/pagey.ping.json')).toEqual({});
  });
});
