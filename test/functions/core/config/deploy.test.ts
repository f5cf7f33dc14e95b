import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { defaultDelivery } from '../../../../functions/core/config/schema';
import { SOURCE_NAMES, sourcePack } from '../../../../functions/core/sources/registry';
import { problemsOf } from './support';

const PROVIDER = 'provider: { baseUrl: "https://sms.example.co.tz" }\n';

/** A config with one route per source (sns needs its topics), none setting `delivery`. */
function everySource(extra: (source: string) => string = () => ''): string {
  const routes = SOURCE_NAMES.map((source) => {
    const needs =
      { sns: ', topics: ["arn:aws:sns:eu-west-1:123456789012:alarms"]', hmac: ', signature: { header: x-signature }' }[
        source as 'sns' | 'hmac'
      ] ?? '';
    return `  r-${source}: { source: ${source}, secret: s, recipients: ["+255712345678"]${needs}${extra(source)} }`;
  });
  return `${PROVIDER}routes:\n${routes.join('\n')}\n`;
}

describe('delivery by source', () => {
  it("a route without delivery takes its source's: at-least-once for alerting sources, at-most-once for the rest", () => {
    const { routes } = loadConfig(everySource());
    const policies = Object.fromEntries([...routes.values()].map((route) => [route.pack.name, route.config.delivery]));
    expect(policies).toEqual(
      Object.fromEntries(SOURCE_NAMES.map((source) => [source, sourcePack(source).defaultDelivery])),
    );
    const alerting = [
      'alertmanager',
      'grafana',
      'pagerduty',
      'sentry',
      'sns',
      'uptime-kuma',
      'goalert',
      'grafana-oncall',
      'opsgenie',
    ];
    for (const source of alerting) expect(policies[source], source).toBe('at-least-once');
    for (const source of ['shopify', 'woocommerce', 'stripe', 'github', 'gitlab', 'generic', 'hmac'])
      expect(policies[source], source).toBe('at-most-once');
  });

  it('an explicit delivery wins, either way', () => {
    const flipped = loadConfig(
      everySource(
        (source) =>
          `, delivery: ${defaultDelivery(source as never) === 'at-least-once' ? 'at-most-once' : 'at-least-once'}`,
      ),
    );
    for (const route of flipped.routes.values())
      expect(route.config.delivery, route.id).not.toBe(defaultDelivery(route.config.source));
  });
});

describe('secrets', () => {
  it('may be left out: the stack then names the secret after the environment', () => {
    expect(
      loadConfig(`${PROVIDER}routes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"] }\n`).settings
        .secrets,
    ).toBeUndefined();
  });
});

describe('the deploy block', () => {
  const withDeploy = (deploy: string): string =>
    `${PROVIDER}deploy: ${deploy}\nroutes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"] }\n`;

  it('takes throttle, memory, log retention, what deleting does, and the capture opt-in', () => {
    const { settings: config } = loadConfig(
      withDeploy(
        '{ throttle: { rate: 10, burst: 20 }, memory: { ingest: 512, balance-watch: 128 }, logRetentionDays: 90, onDelete: destroy, allowCapture: true }',
      ),
    );
    expect(config.deploy).toEqual({
      throttle: { rate: 10, burst: 20 },
      memory: { ingest: 512, 'balance-watch': 128 },
      logRetentionDays: 90,
      onDelete: 'destroy',
      allowCapture: true,
    });
  });

  it('refuses what the stack could not build, naming each key', () => {
    expect(
      problemsOf(
        withDeploy(
          '{ throttle: { rate: 0, burst: 1.5 }, memory: { ingest: 100, mailer: 256 }, logRetentionDays: 31, onDelete: keep, allowCapture: yes }',
        ),
      ),
    ).toEqual([
      'deploy.throttle.rate: rate is requests per second, above 0',
      'deploy.throttle.burst: burst is a whole number of requests, 0 or more',
      'deploy.memory.ingest: memory is whole MB from 128 to 10240',
      'deploy.memory: unknown option "mailer"',
      'deploy.logRetentionDays: CloudWatch keeps logs for one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653 days',
      'deploy.onDelete: onDelete is retain (the default) or destroy',
      'deploy.allowCapture: allowCapture is true or false',
    ]);
  });
});
