import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadConfigFile } from '../../../../functions/core/config/load';
import { problemsOf } from './support';

const base = `
provider:
  baseUrl: https://sms.example.co.tz
secrets: sms-relay/test
`;

describe('loadConfig', () => {
  it('loads the issue example with every default applied and templates compiled', () => {
    const loaded = loadConfig(`
provider:
  baseUrl: https://sms.example.co.tz
  defaultSenderId: ACME
balance:
  threshold: 5000
  notify: ["0712345678"]
  email: ops@example.com
  schedule: rate(1 hour)
routes:
  alerts:
    source: alertmanager
    secret: alerts-token
    recipients: ["+255 712 345 678", "{{ commonAnnotations.oncall_phone }}"]
    when: "status == 'firing'"
    template: "[{{ status | upcase }}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary }}"
    senderId: ALERTS
secrets: sms-relay/prod
`);
    const route = loaded.routes.get('alerts')!;
    expect(route.pack.name).toBe('alertmanager');
    expect(route.senderId).toBe('ALERTS');
    expect(route.config).toMatchObject({
      length: 'truncate',
      maxParts: 3,
      delivery: 'at-least-once',
      timeZone: 'Africa/Dar_es_Salaam',
      currency: 'TZS',
      toleranceSeconds: 300,
    });
    expect(route.condition).toBeDefined();
    expect(loaded.balanceNotify).toEqual(['255712345678']);
    expect(loaded.settings.retentionDays).toBe(90);
  });

  it('applies the money-safety defaults: maxRecipients 10, priority normal, reserve 0', () => {
    const loaded = loadConfig(`${base}balance: { threshold: 100 }
routes:
  r: { source: generic, secret: t, recipients: ["0712345678"] }
`);
    expect(loaded.routes.get('r')!.config).toMatchObject({ maxRecipients: 10, priority: 'normal' });
    expect(loaded.settings.balance).toMatchObject({ threshold: 100, reserve: 0 });
  });

  it('refuses a reserve at or above the threshold, more literal numbers than maxRecipients, and an unknown priority', () => {
    const numbers = Array.from({ length: 3 }, (_, n) => `071234567${n}`).join(',');
    expect(
      problemsOf(`${base}balance: { threshold: 100, reserve: 100 }
routes:
  r: { source: generic, secret: t, recipients: ["${numbers}"], maxRecipients: 2, priority: urgent }
`),
    ).toEqual([
      'balance.reserve: reserve must be below threshold: the low-balance SMS has to warn before the reserve is reached',
      expect.stringMatching(/^routes\.r\.priority: /),
    ]);
    expect(
      problemsOf(`${base}routes:
  r: { source: generic, secret: t, recipients: ["${numbers}"], maxRecipients: 2 }
`),
    ).toEqual(['routes.r.recipients: 3 numbers, more than maxRecipients (2)']);
  });

  it('falls back to the provider default sender ID, and to none', () => {
    const withDefault = loadConfig(`provider: { baseUrl: "https://x.example", defaultSenderId: ACME }
secrets: s
routes: { a: { source: generic, secret: t, recipients: ["0712345678"] } }`);
    expect(withDefault.routes.get('a')!.senderId).toBe('ACME');
    const without = loadConfig(`provider: { baseUrl: "https://x.example" }
secrets: s
routes: { a: { source: generic, secret: t, recipients: ["0712345678"] } }`);
    expect(without.routes.get('a')!.senderId).toBeUndefined();
  });

  it('names the route and field of a broken template', () => {
    expect(
      problemsOf(`${base}routes:
  orders:
    source: shopify
    secret: s
    recipients: ["0712345678"]
    template: "{{ total_price | monie }}"
`),
    ).toEqual(['routes.orders.template: unknown filter "monie"']);
  });

  it('names an unknown source', () => {
    const problems = problemsOf(`${base}routes:
  orders: { source: magento, secret: s, recipients: ["0712345678"] }
`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^routes\.orders\.source: unknown source; use one of alertmanager, grafana/);
  });

  it('reports every problem at once, each with its path', () => {
    const problems = problemsOf(`${base}balance: { threshold: -1, notify: ["12"], schedule: "every hour" }
routes:
  a: { source: generic, secret: s, recipients: ["0712345678"], when: "status = 'x'", length: squeeze }
  b: { source: generic, secret: s, recipients: ["+254 712 345 678"], dedupeWindow: 5 weeks, extra: 1 }
`);
    expect(problems.join('\n')).toMatch(/balance\.threshold/);
    expect(problems.join('\n')).toMatch(/balance\.schedule: schedule must be an EventBridge expression/);
    expect(problems.join('\n')).toMatch(/routes\.a\.length/);
    expect(problems.join('\n')).toMatch(/routes\.b\.dedupeWindow: "5 weeks" is not a duration/);
    expect(problems.join('\n')).toMatch(/routes\.b: unknown option "extra"/);
  });

  it('refuses broken conditions and invalid literal recipients after the schema passes', () => {
    const problems = problemsOf(`${base}balance: { threshold: 10, notify: ["12"] }
routes:
  a: { source: generic, secret: s, recipients: ["0712345678"], when: "status = 'x'" }
  b: { source: generic, secret: s, recipients: ["+254 712 345 678"] }
`);
    expect(problems.some((problem) => problem.startsWith('routes.a.when: '))).toBe(true);
    // A Kenyan number is a number; the one sms-service provider does not text it.
    expect(problems).toContain('routes.b.recipients[0]: no provider for +2547****678');
    expect(problems.some((problem) => problem.startsWith('balance.notify[0]: '))).toBe(true);
    // A reason names the problem, never the number.
    expect(problems.join('\n')).not.toMatch(/712345678/);
  });

  it('reports YAML syntax errors and unreadable files', () => {
    expect(problemsOf('routes: [unclosed')[0]).toMatch(/^YAML: /);
    expect(() => loadConfigFile('/nonexistent/config.yaml')).toThrow(/cannot read the file \(ENOENT\)/);
  });

  it('loads every shipped config in config/', () => {
    const files = readdirSync('config').filter((name) => name.endsWith('.yaml'));
    expect(files).toContain('local.yaml');
    for (const file of files) expect(loadConfigFile(join('config', file)).routes.size).toBeGreaterThan(0);
  });

  it('loads from a file path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sms-relay-config-'));
    const path = join(dir, 'x.yaml');
    writeFileSync(path, `${base}routes: { a: { source: github, secret: s, recipients: ["0712345678"] } }\n`);
    expect([...loadConfigFile(path).routes.keys()]).toEqual(['a']);
  });
});

describe('route topics (sns)', () => {
  it('loads an sns route with its topics, in any partition', () => {
    const loaded = loadConfig(`${base}routes:
  aws:
    source: sns
    secret: sns-token
    recipients: ["0712345678"]
    topics: ["arn:aws:sns:eu-west-1:123456789012:ops-alarms", "arn:aws-cn:sns:cn-north-1:123456789012:a", "arn:aws-us-gov:sns:us-gov-west-1:123456789012:b", "arn:aws-iso-b:sns:us-isob-east-1:123456789012:c"]
`);
    expect(loaded.routes.get('aws')!.config.topics).toHaveLength(4);
  });

  it('names the topics key of an sns route without topics', () => {
    expect(
      problemsOf(`${base}routes:
  aws: { source: sns, secret: t, recipients: ["0712345678"] }
`),
    ).toEqual([expect.stringMatching(/^routes\.aws\.topics: an sns route lists the topic ARNs it accepts/)]);
  });

  it('refuses an empty list, a value that is not a topic ARN, and topics on another source', () => {
    expect(
      problemsOf(`${base}routes:
  aws: { source: sns, secret: t, recipients: ["0712345678"], topics: [] }
`),
    ).toEqual([expect.stringMatching(/^routes\.aws\.topics/)]);
    expect(
      problemsOf(`${base}routes:
  aws: { source: sns, secret: t, recipients: ["0712345678"], topics: ["arn:aws:sqs:eu-west-1:123456789012:q"] }
`),
    ).toEqual([expect.stringMatching(/^routes\.aws\.topics\[0\]: a topic is an SNS topic ARN/)]);
    expect(
      problemsOf(`${base}routes:
  gh: { source: github, secret: t, recipients: ["0712345678"], topics: ["arn:aws:sns:eu-west-1:123456789012:a"] }
`),
    ).toEqual(['routes.gh.topics: topics applies to sns routes only']);
  });

  it('reads retry.for as a duration on an at-least-once route, absent as the default of 1 h', () => {
    const loaded = loadConfig(`${base}routes:
  alerts: { source: alertmanager, secret: t, recipients: ["0712345678"], retry: { for: 2h } }
  other: { source: alertmanager, secret: t, recipients: ["0712345678"] }
  empty: { source: generic, secret: t, recipients: ["0712345678"], delivery: at-least-once, retry: {} }
`);
    expect(loaded.routes.get('alerts')!.config.retry).toEqual({ for: 7_200 });
    expect(loaded.routes.get('other')!.config.retry).toBeUndefined();
    expect(loaded.routes.get('empty')!.config.retry).toEqual({ for: 3_600 });
  });

  it('refuses retry on an at-most-once route, and a retry.for that is not a duration or longer than 7 days', () => {
    expect(
      problemsOf(`${base}routes:
  orders: { source: shopify, secret: t, recipients: ["0712345678"], retry: { for: 1h } }
`),
    ).toEqual([
      expect.stringMatching(
        /^routes\.orders\.retry: retry applies to at-least-once routes; this route is at-most-once/,
      ),
    ]);
    expect(
      problemsOf(`${base}routes:
  alerts: { source: alertmanager, secret: t, recipients: ["0712345678"], retry: { for: soon } }
`),
    ).toEqual([expect.stringMatching(/^routes\.alerts\.retry\.for: "soon" is not a duration/)]);
    expect(
      problemsOf(`${base}routes:
  alerts: { source: alertmanager, secret: t, recipients: ["0712345678"], retry: { for: 8d } }
`),
    ).toEqual(['routes.alerts.retry.for: for is at most 7d']);
  });
});
