import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { preview } from '../../../local/cli/commands/preview';

const run = promisify(execFile);
const config = 'config/local.yaml';
const fixture = (path: string) => `examples/${path}`;

function previewOf(route: string, payload: string, header: Record<string, string> = {}) {
  return preview({ config, route, payload: fixture(payload), header });
}

/** For every source, a realistic payload previews to the exact SMS text and numbers. */
describe('preview of every source on config/local.yaml', () => {
  const cases = [
    {
      route: 'alerts',
      payload: 'alertmanager/firing-single.json',
      header: {},
      text: '[FIRING] DiskAlmostFull: Disk /var/lib/postgresql on db-01 is 94% full',
      to: ['255712345678'],
      senderId: 'ALERTS',
    },
    {
      route: 'grafana',
      payload: 'grafana/firing.json',
      header: {},
      text: '[FIRING] High CPU usage: CPU above 95% on web-01',
      to: ['255712345678'],
      senderId: 'ALERTS',
    },
    {
      route: 'github',
      payload: 'github/push.json',
      header: { 'x-github-event': 'push', 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
      text: '[kilimo-labs/sms-relay] amina-mushi pushed 2 commit(s) to main',
      to: ['255712345678'],
      senderId: 'SMSRELAY',
    },
    {
      route: 'orders',
      payload: 'shopify/orders-create.json',
      header: { 'x-shopify-topic': 'orders/create' },
      text: 'New order #1001: TZS 45,000.00 from Neema Joseph',
      to: ['255754111222', '255712345678'],
      senderId: 'DUKA',
    },
    {
      route: 'payments',
      payload: 'stripe/payment_intent.succeeded.json',
      header: {},
      text: 'Payment received: USD 49.99 - Order #2031 - Safari sandals',
      to: ['255754111222'],
      senderId: 'SMSRELAY',
    },
    {
      route: 'events',
      payload: 'standard-webhooks/invoice-paid.json',
      header: {},
      text: 'invoice.paid inv_2pKx7LqN4vR8sT1w (paid)',
      to: ['255754111222'],
      senderId: 'SMSRELAY',
    },
    {
      route: 'notify',
      payload: 'generic/backup-failed.json',
      header: {},
      text: 'Nightly backup of nas-01 failed: repository quota exceeded',
      to: ['255712345678'],
      senderId: 'SMSRELAY',
    },
    {
      route: 'paystack',
      payload: 'hmac/paystack-charge-success.json',
      header: {},
      text: 'Paystack payment qTPrJoy9Bx: NGN 100.00 from bojack@horseman.com',
      to: ['255754111222'],
      senderId: 'SMSRELAY',
    },
  ] as const;

  it.each(cases)('$route ($payload)', ({ route, payload, header, text, to, senderId }) => {
    const result = previewOf(route, payload, header);
    expect(result.verdict).toBe('send');
    expect(result.messages).toEqual([{ to, text, senderId, encoding: 'GSM-7', characters: text.length, segments: 1 }]);
    expect(typeof result.dedupeKey).toBe('string');
  });

  it('woocommerce order.created', () => {
    const result = previewOf('shop', 'woocommerce/order-created.json', {
      'x-wc-webhook-topic': 'order.created',
      'x-wc-webhook-resource': 'order',
      'x-wc-webhook-event': 'created',
    });
    expect(result.verdict).toBe('send');
    expect(result.messages).toHaveLength(1);
    expect(result.messages[0]!.to).toEqual(['255754111222', '255712345678']);
    expect(result.messages[0]!.text).toBe('Order #4821 processing: TZS 27,000.00 - Baraka Mwakyusa');
  });

  it('marks an Opsgenie P1 or P2 alert critical (it may spend the credit reserve), a create without a priority (P3) not', () => {
    const p1 = previewOf('og', 'opsgenie/alertmanager-create.json');
    expect(p1.verdict).toBe('send');
    expect(p1.messages.length).toBeGreaterThan(0);
    expect(p1.messages.map((message) => message.critical)).toEqual(p1.messages.map(() => true));
    const p3 = previewOf('og', 'opsgenie/client-create.json');
    expect(p3.verdict).toBe('send');
    expect(p3.messages.length).toBeGreaterThan(0);
    expect(p3.messages.every((message) => !('critical' in message))).toBe(true);
  });

  it('a resolved alert is filtered by the route condition and says why', () => {
    const result = previewOf('alerts', 'alertmanager/resolved.json');
    expect(result).toMatchObject({ verdict: 'filtered', reason: `when "status == 'firing'" is false`, messages: [] });
  });

  it('a GitHub ping is answered without a message', () => {
    expect(previewOf('github', 'github/ping.json', { 'x-github-event': 'ping' })).toMatchObject({
      verdict: 'ping',
      messages: [],
    });
  });

  it('reports a templated recipient that rendered nothing as dropped', () => {
    const order = JSON.parse(readFileSync(fixture('shopify/orders-create.json'), 'utf8')) as {
      customer: Record<string, unknown>;
    };
    const withoutPhone = join(mkdtempSync(join(tmpdir(), 'sms-relay-preview-')), 'order.json');
    writeFileSync(withoutPhone, JSON.stringify({ ...order, customer: { ...order.customer, phone: null } }));
    expect(
      preview({ config, route: 'orders', payload: withoutPhone, header: { 'x-shopify-topic': 'orders/create' } })
        .dropped,
    ).toEqual([{ entry: '{{ customer.phone }}', reason: 'rendered empty' }]);
  });

  it("takes the URL's query (--query) for a route that reads its recipient from it, and the allow-list still applies", () => {
    const goalert = (query: Record<string, string>) =>
      preview({ config, route: 'goalert', payload: fixture('goalert/alert.json'), header: {}, query });
    expect(goalert({ to: '0712345678' })).toMatchObject({
      verdict: 'send',
      messages: [{ to: ['255712345678'] }],
      dropped: [],
    });
    expect(goalert({})).toMatchObject({ verdict: 'dropped' });
    expect(goalert({}).dropped).toContainEqual({ entry: '{{ query.to }}', reason: 'rendered empty' });
    expect(goalert({ to: '0799000111' }).dropped[0]?.reason).toContain('is not in allowRecipients');
  });
});

describe('sms-relay preview and validate (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-preview-'));
  const secret = 'gh-test-secret-4f1c';
  const secretsFile = join(dir, 'secrets.json');
  writeFileSync(secretsFile, JSON.stringify({ providerApiKey: 'k', 'github-secret': secret }));
  const body = readFileSync(fixture('github/push.json'));
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const cli = (...args: string[]) => run(process.execPath, ['bin/sms-relay.mjs', ...args], { encoding: 'utf8' });

  it('prints one JSON object with the public keys, authenticating when --secrets is given', async () => {
    const { stdout } = await cli(
      'preview',
      '--config',
      config,
      '--route',
      'github',
      '--payload',
      fixture('github/push.json'),
      '--header',
      'X-GitHub-Event: push',
      '--header',
      `X-Hub-Signature-256: ${signature}`,
      '--secrets',
      secretsFile,
    );
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(Object.keys(result)).toEqual(['verdict', 'dedupeKey', 'messages', 'dropped', 'warnings']);
    expect(result.verdict).toBe('send');
  }, 60_000);

  it('says unauthorized for a tampered signature when --secrets is given', async () => {
    const { stdout } = await cli(
      'preview',
      '--config',
      config,
      '--route',
      'github',
      '--payload',
      fixture('github/push.json'),
      '--header',
      'X-GitHub-Event: push',
      '--header',
      `X-Hub-Signature-256: sha256=${'0'.repeat(64)}`,
      '--secrets',
      secretsFile,
    );
    expect(JSON.parse(stdout)).toMatchObject({ verdict: 'unauthorized', messages: [] });
    expect(stdout).not.toContain(secret);
  }, 60_000);

  it('validate exits 0 on a good config and non-zero naming the route on a broken one', async () => {
    await expect(cli('validate', '--config', config)).resolves.toMatchObject({
      stdout: expect.stringMatching(/: valid \(\d+ routes: alerts, /),
    });
    const broken = join(dir, 'broken.yaml');
    writeFileSync(
      broken,
      `provider: { baseUrl: "https://x.example" }
secrets: s
routes:
  orders: { source: shopify, secret: s, recipients: ["0712345678"], template: "{{ total_price | monie }}" }
  legacy: { source: magento, secret: s, recipients: ["0712345678"] }
`,
    );
    const failure = await cli('validate', '--config', broken).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('routes.legacy.source: unknown source');
    expect(failure?.stderr).toContain('routes.orders.template: unknown filter "monie"');
  }, 60_000);

  it('validate --secrets names each route secret that is missing or could never match, never its value', async () => {
    const secrets = join(dir, 'validate-secrets.json');
    const values = Object.fromEntries(
      [
        'providerApiKey',
        'alerts-token',
        'grafana-token',
        'github-secret',
        'shopify-secret',
        'woocommerce-secret',
        'stripe-secret',
        'standard-secret',
        'generic-token',
        'paystack-secret',
        'gitlab-token',
        'sentry-secret',
        'pagerduty-secret',
        'uptime-kuma-token',
        'sns-token',
        'goalert-token',
        'grafana-oncall-token',
        'opsgenie-key',
      ].map((name) => [name, `${name}-value`]),
    );
    writeFileSync(secrets, JSON.stringify(values));
    await expect(cli('validate', '--config', config, '--secrets', secrets)).resolves.toMatchObject({
      stdout: expect.stringContaining('usable'),
    });
    writeFileSync(
      secrets,
      JSON.stringify({
        ...values,
        'alerts-token': 'Schlüssel mit Leerzeichen',
        'generic-token': undefined,
        'paystack-secret': ' any key works ',
      }),
    );
    const failure = await cli('validate', '--config', config, '--secrets', secrets).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain('secret "alerts-token" (route alerts): has non-ASCII characters');
    expect(failure?.stderr).toContain('secret "generic-token" (route notify): is missing');
    expect(failure?.stderr).not.toContain('paystack');
    expect(failure?.stderr).not.toContain('Schlüssel');
  }, 60_000);

  it('validate --secrets names a missing or empty providerApiKey: without it nothing can be sent', async () => {
    const secrets = join(dir, 'validate-no-key.json');
    const routeSecrets = Object.fromEntries(
      [
        'alerts-token',
        'grafana-token',
        'github-secret',
        'shopify-secret',
        'woocommerce-secret',
        'stripe-secret',
        'standard-secret',
        'generic-token',
        'paystack-secret',
        'gitlab-token',
        'sentry-secret',
        'pagerduty-secret',
        'uptime-kuma-token',
        'sns-token',
        'goalert-token',
        'grafana-oncall-token',
        'opsgenie-key',
      ].map((name) => [name, `${name}-value`]),
    );
    for (const [values, problem] of [
      [routeSecrets, 'is missing'],
      [{ ...routeSecrets, providerApiKey: '' }, 'is empty'],
    ] as const) {
      writeFileSync(secrets, JSON.stringify(values));
      const failure = await cli('validate', '--config', config, '--secrets', secrets).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure?.code).toBe(2);
      expect(failure?.stderr).toContain(
        `error: ${secrets}: 1 unusable secret\n  - secret "providerApiKey" (the SMS service's API key): ${problem}`,
      );
    }
  }, 60_000);

  it('preview answers a template that hits a limit with the limit, promptly', async () => {
    const hostile = join(dir, 'hostile.yaml');
    writeFileSync(
      hostile,
      `provider: { baseUrl: "https://sms.example.co.tz" }
secrets: s
routes:
  loop:
    source: generic
    secret: token
    recipients: ["0712345678"]
    template: "{% for a in items %}{% for b in items %}{% for c in items %}{% endfor %}{% endfor %}{% endfor %}"
  range:
    source: generic
    secret: token
    recipients: ["0712345678"]
    template: "{% for i in (1..30000000) %}x{% endfor %}"
`,
    );
    const payload = join(dir, 'items.json');
    writeFileSync(payload, JSON.stringify({ items: Array.from({ length: 1_000 }, (_, index) => index) }));
    const loop = JSON.parse(
      (await cli('preview', '--config', hostile, '--route', 'loop', '--payload', payload)).stdout,
    ) as { verdict: string; reason: string };
    expect(loop.verdict).toBe('dropped');
    expect(loop.reason).toMatch(
      /^the template cannot be rendered on this payload: render limit exceeded: the template ran longer than 1000 ms \(line 1, col \d+\)$/,
    );
    const range = JSON.parse(
      (await cli('preview', '--config', hostile, '--route', 'range', '--payload', payload)).stdout,
    ) as { verdict: string; reason: string };
    expect(range.reason).toMatch(
      /^the template cannot be rendered on this payload: memory limit exceeded: the template built more than 10000000 characters or items/,
    );
  }, 60_000);

  it('preview fails clearly on an unknown route', async () => {
    const failure = await cli(
      'preview',
      '--config',
      config,
      '--route',
      'nope',
      '--payload',
      fixture('github/push.json'),
    ).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toMatch(/route "nope" is not in config\/local\.yaml/);
  }, 60_000);
});
