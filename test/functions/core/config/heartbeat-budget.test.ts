import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { problemsOf } from './support';

const base = `
provider:
  baseUrl: https://sms.example.co.tz
secrets: sms-relay/test
`;

describe('heartbeat and creditsPerMonth', () => {
  it('reads a heartbeat in durations, grace 2m by default, and a monthly budget', () => {
    const loaded = loadConfig(`${base}routes:
  watchdog: { source: alertmanager, secret: t, recipients: ["0712345678"], when: "false", heartbeat: { every: 5m } }
  shop: { source: shopify, secret: s, recipients: ["0712345678"], limits: { creditsPerMonth: 3000 } }
`);
    expect(loaded.routes.get('watchdog')!.config.heartbeat).toEqual({ every: 300, grace: 120 });
    expect(loaded.routes.get('shop')!.config.limits).toMatchObject({ creditsPerMonth: 3000 });
  });

  it('refuses a heartbeat shorter than the sweeper checks, one without a literal recipient, unknown keys and a budget of 0', () => {
    expect(
      problemsOf(`${base}routes:
  a: { source: generic, secret: t, recipients: ["0712345678"], heartbeat: { every: 30s, grace: 10s } }
  b: { source: generic, secret: t, recipients: ["0712345678"], heartbeat: { every: 5m, often: 2 } }
  c: { source: generic, secret: t, recipients: ["0712345678"], limits: { creditsPerMonth: 0 } }
  d: { source: generic, secret: t, recipients: ["0712345678"], heartbeat: {} }
`),
    ).toEqual([
      'routes.a.heartbeat.every: every is at least 1m: the sweeper checks once a minute',
      'routes.a.heartbeat.grace: grace is at least 1m: the sweeper checks once a minute',
      'routes.b.heartbeat: unknown option "often"',
      'routes.c.limits.creditsPerMonth: Too small: expected number to be >0',
      'routes.d.heartbeat.every: every is how often webhooks are expected, e.g. 5m',
    ]);
    expect(
      problemsOf(`${base}routes:
  a: { source: generic, secret: t, recipients: ["{{ phone }}"], heartbeat: { every: 5m } }
`),
    ).toEqual([
      "routes.a.heartbeat: needs at least one literal number in recipients (templated recipients come from a webhook, and the heartbeat's SMS is about webhooks not coming)",
    ]);
  });
});
