import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostWebhook, test, webhookPoster } from '../helpers/fixtures';
import { type SnsMessage, signSnsMessage } from '../helpers/sns';
import {
  cleanEnv,
  eventually,
  fixture,
  FULL_NUMBER,
  getJson,
  inbox,
  post,
  readJsonFile,
  records,
  REPO_ROOT,
  runCli,
  signedRequest,
  startRelay,
  writeSnsDocuments,
  stopRelay,
  type CliResult,
  type RecordJson,
  type RelayProcess,
} from './support';

/** One delivery per source, with what config/local.yaml makes of it at the SMS service. */
const CASES = [
  {
    route: 'alerts',
    source: 'alertmanager',
    fixture: 'alertmanager/firing-single.json',
    to: ['255712345678'],
    senderId: 'ALERTS',
    text: '[FIRING] DiskAlmostFull: Disk /var/lib/postgresql on db-01 is 94% full',
  },
  {
    route: 'grafana',
    source: 'grafana',
    fixture: 'grafana/firing.json',
    to: ['255712345678'],
    senderId: 'ALERTS',
    text: '[FIRING] High CPU usage: CPU above 95% on web-01',
  },
  {
    route: 'github',
    source: 'github',
    fixture: 'github/push.json',
    to: ['255712345678'],
    senderId: 'SMSRELAY',
    text: '[kilimo-labs/sms-relay] amina-mushi pushed 2 commit(s) to main',
  },
  {
    route: 'orders',
    source: 'shopify',
    fixture: 'shopify/orders-create.json',
    to: ['255712345678', '255754111222'],
    senderId: 'DUKA',
    text: 'New order #1001: TZS 45,000.00 from Neema Joseph',
  },
  {
    route: 'shop',
    source: 'woocommerce',
    fixture: 'woocommerce/order-created.json',
    to: ['255712345678', '255754111222'],
    senderId: 'DUKA',
    text: 'Order #4821 processing: TZS 27,000.00 - Baraka Mwakyusa',
  },
  {
    route: 'payments',
    source: 'stripe',
    fixture: 'stripe/payment_intent.succeeded.json',
    to: ['255754111222'],
    senderId: 'SMSRELAY',
    text: 'Payment received: USD 49.99 - Order #2031 - Safari sandals',
  },
  {
    route: 'events',
    source: 'standard-webhooks',
    fixture: 'standard-webhooks/invoice-paid.json',
    to: ['255754111222'],
    senderId: 'SMSRELAY',
    text: 'invoice.paid inv_2pKx7LqN4vR8sT1w (paid)',
  },
  {
    route: 'notify',
    source: 'generic',
    fixture: 'generic/backup-failed.json',
    to: ['255712345678'],
    senderId: 'SMSRELAY',
    text: 'Nightly backup of nas-01 failed: repository quota exceeded',
  },
  {
    route: 'gitlab',
    source: 'gitlab',
    fixture: 'gitlab/push.json',
    to: ['255712345678'],
    senderId: 'SMSRELAY',
    text: '[kilimo-labs/sms-relay] Amina Mushi pushed 2 commit(s) to main',
  },
  {
    route: 'sentry',
    source: 'sentry',
    fixture: 'sentry/event_alert.json',
    to: ['255712345678'],
    senderId: 'ALERTS',
    text: '[ERROR] TimeoutError: SMS provider did not answer within 10000 ms (Relay errors)',
  },
  {
    route: 'pagerduty',
    source: 'pagerduty',
    fixture: 'pagerduty/incident.triggered.json',
    to: ['255712345678'],
    senderId: 'ALERTS',
    text: '[TRIGGERED] #731 SMS credit below reserve (SMS relay, high urgency)',
  },
  {
    route: 'uptime',
    source: 'uptime-kuma',
    fixture: 'uptime-kuma/down.json',
    to: ['255712345678'],
    senderId: 'ALERTS',
    text: '[DOWN] M-Pesa callback: Request failed with status code 502',
  },
  {
    route: 'paystack',
    source: 'hmac',
    fixture: 'hmac/paystack-charge-success.json',
    to: ['255754111222'],
    senderId: 'SMSRELAY',
    text: 'Paystack payment qTPrJoy9Bx: NGN 100.00 from bojack@horseman.com',
  },
  {
    route: 'aws-alarms',
    source: 'sns',
    fixture: 'sns/cloudwatch-alarm.json',
    to: ['255712345678'],
    senderId: 'ALERTS',
    text: '[ALARM] HighCPU: Threshold Crossed: 1 out of the last 1 datapoints [92.5 (21/11/25 09:10:00)] was greater than or equal to the threshold (80.0) (... (eu-west-1)',
  },
] as const;

/** The SubscribeURL of the e2e subscription confirmation, answered by the runtime's local documents. */
const SNS_SUBSCRIBE_URL =
  'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:eu-west-1:123456789012:ops-alarms&Token=e2e';

const MAX_BODY_BYTES = 16_384;

let dir: string;
let env: NodeJS.ProcessEnv;
let relay: RelayProcess;
let secrets: Record<string, string>;
/** Everything any process printed, for the leak check at the end. */
const printed: { readonly what: string; readonly text: string }[] = [];
const sent = new Map<string, { body: Buffer; headers: Readonly<Record<string, string>>; ids: readonly string[] }>();
/** Signed as the route's source signs, with config/local.yaml's settings (the relay's config). */
let postWebhook: PostWebhook;

/** A fixture's bytes, an SNS message first signed now with the test key as SNS would have signed it. */
const bodyOf = (source: string, path: string): Buffer =>
  source === 'sns'
    ? Buffer.from(
        JSON.stringify(signSnsMessage(JSON.parse(fixture(path).toString('utf8')) as SnsMessage, { at: new Date() })),
      )
    : fixture(path);

const cli = async (args: readonly string[]): Promise<CliResult> => {
  const result = await runCli(args, env);
  printed.push({ what: `sms-relay ${args.join(' ')}`, text: `${result.stdout}\n${result.stderr}` });
  return result;
};

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  env = cleanEnv({
    PORT: '0',
    RELAY_DATA_DIR: join(dir, 'data'),
    RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    MAX_BODY_BYTES: String(MAX_BODY_BYTES),
  });
  // Local runtime only: serve the test SNS certificate (and a confirmation answer) under SNS URLs.
  env['RELAY_LOCAL_DOCUMENTS'] = writeSnsDocuments(join(dir, 'documents.json'), {
    [SNS_SUBSCRIBE_URL]: '<ConfirmSubscriptionResponse/>',
  });
  relay = await startRelay(env);
  secrets = readJsonFile(join(dir, 'secrets.json'));
  postWebhook = webhookPoster({ url: relay.url, configPath: join(REPO_ROOT, 'config', 'local.yaml'), secrets });
}, 120_000);

afterAll(async () => {
  if (relay !== undefined) await stopRelay(relay, 'SIGKILL');
});

describe('npm start: the local runtime', () => {
  it('creates the secrets file on first run: every name the config needs, random, mode 0600', () => {
    expect(Object.keys(secrets).sort()).toEqual(
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
        'gitlab-token',
        'sentry-secret',
        'pagerduty-secret',
        'uptime-kuma-token',
        'paystack-secret',
        'sns-token',
        'goalert-token',
        'grafana-oncall-token',
        'opsgenie-key',
      ].sort(),
    );
    expect(secrets['stripe-secret']).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(secrets['standard-secret']).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(new Set(Object.values(secrets)).size).toBe(Object.keys(secrets).length);
    expect(statSync(join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
    expect(relay.banner).toContain('(created now with random values, mode 0600)');
  });

  it('prints a banner whose curl example produces an SMS, without showing the token', async () => {
    expect(relay.banner).toContain(`Webhooks   ${relay.url}/hooks/<route>`);
    expect(relay.sandboxUrl).toBeDefined();
    expect(relay.banner).not.toContain(secrets['generic-token']!);
    const lines = relay.banner.split('\n');
    const first = lines.findIndex((line) => line.trim().startsWith('curl '));
    expect(first).toBeGreaterThan(-1);
    let last = first;
    while (lines[last]!.trimEnd().endsWith('\\')) last += 1;
    const command = lines
      .slice(first, last + 1)
      .map((line) => line.trimEnd().replace(/\\$/, ''))
      .join(' ');
    expect(command).toContain(`curl -sS -X POST ${relay.url}/hooks/notify`);

    // Run the banner's command exactly as a person would paste it.
    const { stdout } = await promisify(execFile)('bash', ['-c', command], { encoding: 'utf8' });
    expect(JSON.parse(stdout)).toMatchObject({ status: 'accepted' });
    const delivered = await eventually(
      async () => (await inbox(relay.sandboxUrl!)).find((message) => message.message === 'Hello from sms-relay'),
      { what: 'the example SMS' },
    );
    expect(delivered).toMatchObject({ phoneNumbers: ['255712345678'], senderId: 'SMSRELAY' });
    // The first thing a new user sees after their first SMS is no warning about their own example.
    await relay.waitFor(/sms\s+notify\s+SENT/);
    expect(relay.stdout()).not.toMatch(/warn/);
  }, 120_000);

  it('prints a send-test command, with an example payload, that works as pasted', async () => {
    const line = relay.banner.split('\n').find((text) => text.startsWith('Sign a payload as its source would: '))!;
    const command = line.slice(line.indexOf('npx sms-relay ') + 'npx sms-relay '.length).split(' ');
    expect(command).toEqual([
      'send-test',
      '--route',
      'alerts',
      '--payload',
      'examples/alertmanager/firing-grouped.json',
    ]);
    const result = await cli(command);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^202 Accepted$/m);
  }, 120_000);

  it('answers /health with the store and the SMS service', async () => {
    const health = await getJson<Record<string, unknown>>(`${relay.url}/health`);
    expect(health).toMatchObject({
      ok: true,
      store: { engine: 'dynalite', dataDir: join(dir, 'data'), ok: true },
      provider: { baseUrl: relay.sandboxUrl, sandbox: true },
      sandbox: { inbox: `${relay.sandboxUrl}/_sandbox/messages` },
    });
  });

  it('delivers a signed webhook of every source to the SMS service', async () => {
    for (const { route, source, fixture } of CASES) {
      const body = bodyOf(source, fixture);
      const answer = await postWebhook(route, body);
      expect(answer, route).toMatchObject({ status: 202, body: { status: 'accepted' } });
      sent.set(route, { body, headers: answer.sent, ids: answer.body['ids'] as string[] });
    }
    const messages = await eventually(
      async () => {
        const all = await inbox(relay.sandboxUrl!);
        return CASES.every(({ text }) => all.some((message) => message.message === text)) ? all : undefined;
      },
      { what: 'an SMS for every source' },
    );
    for (const { route, to, senderId, text } of CASES) {
      const matching = messages.filter((message) => message.message === text);
      expect(matching, route).toHaveLength(1);
      expect([...matching[0]!.phoneNumbers].sort(), route).toEqual(to);
      expect(matching[0]!.senderId, route).toBe(senderId);
    }
    const stored = await records(relay.url, 'state=SENT');
    for (const { route } of CASES)
      expect(
        stored.filter((record) => sent.get(route)!.ids.includes(record.id)),
        route,
      ).toHaveLength(1);
  }, 120_000);

  it('answers a repeated delivery as a duplicate and sends nothing for it', async () => {
    const before = await records(relay.url);
    for (const [route, { body, headers, ids }] of sent) {
      // The same bytes and the same headers (its signature, its delivery id) as the first delivery.
      const again = await postWebhook(route, body, { headers });
      expect([again.status, again.body], route).toEqual([200, { status: 'duplicate', ids }]);
    }
    // A fresh message after the repeats: once it is out, anything the repeats could have queued would be too.
    const sentinel = await postWebhook('notify', fixture('generic/backup-failed.json'), {
      headers: { 'Idempotency-Key': 'sentinel-1' },
    });
    expect(sentinel.status).toBe(202);
    await eventually(
      async () => ((await records(relay.url, 'route=notify&state=SENT')).length >= 3 ? true : undefined),
      { what: 'the sentinel sent' },
    );
    const after = await records(relay.url);
    expect(after.length).toBe(before.length + 1);
    const messages = await inbox(relay.sandboxUrl!);
    for (const { route, text } of CASES) {
      const expected = route === 'notify' ? 2 : 1; // the sentinel repeats the backup text under a new idempotency key
      expect(
        messages.filter((message) => message.message === text),
        route,
      ).toHaveLength(expected);
    }
  }, 120_000);

  it('refuses what API Gateway and ingest refuse, in JSON', async () => {
    // The signature check itself: signed by hand with a secret that is not the route's.
    const forged = signedRequest('github', 'github', 'github/push.json', 'not-the-secret');
    expect(await post(relay.url, forged)).toMatchObject({ status: 401, body: { error: 'unauthorized' } });

    const unknown = await fetch(`${relay.url}/hooks/nosuchroute`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: expect.stringContaining('nosuchroute') });

    const get = await fetch(`${relay.url}/hooks/notify`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(await get.json()).toHaveProperty('error');

    const elsewhere = await fetch(`${relay.url}/somewhere`);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toHaveProperty('error');

    const countBefore = (await records(relay.url)).length;
    const tooBig = await postWebhook('notify', { message: 'x'.repeat(MAX_BODY_BYTES) });
    expect([tooBig.status, tooBig.body]).toEqual([413, { error: `body exceeds the limit of ${MAX_BODY_BYTES} bytes` }]);
    expect((await records(relay.url)).length).toBe(countBefore);
  });

  it('confirms an SNS subscription itself and records it without an SMS; refuses another topic', async () => {
    const confirmation = {
      ...JSON.parse(fixture('sns/subscription-confirmation.json').toString('utf8')),
      TopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops-alarms',
      SubscribeURL: SNS_SUBSCRIBE_URL,
    };
    const signedConfirmation = Buffer.from(JSON.stringify(signSnsMessage(confirmation, { at: new Date() })));
    const answer = await postWebhook('aws-alarms', signedConfirmation);
    expect(answer).toMatchObject({
      status: 200,
      body: {
        status: 'dropped',
        reason: 'SNS subscription to arn:aws:sns:eu-west-1:123456789012:ops-alarms confirmed by the relay',
      },
    });
    const [record] = await records(relay.url, 'route=aws-alarms&state=DROPPED');
    expect(record).toMatchObject({
      id: (answer.body['ids'] as string[])[0],
      reason: 'SNS subscription to arn:aws:sns:eu-west-1:123456789012:ops-alarms confirmed by the relay',
    });

    const otherTopic = Buffer.from(
      JSON.stringify(
        signSnsMessage(
          { ...confirmation, TopicArn: 'arn:aws:sns:eu-west-1:999999999999:ops-alarms' },
          { at: new Date() },
        ),
      ),
    );
    const refused = await postWebhook('aws-alarms', otherTopic);
    expect(refused).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  }, 120_000);

  it('send-test signs a payload as its source would and exits non-zero on a refusal', async () => {
    const [ok, refused] = await Promise.all([
      cli([
        'send-test',
        '--route',
        'github',
        '--payload',
        'examples/github/issues-opened.json',
        '--header',
        'X-GitHub-Event: issues',
      ]),
      cli([
        'send-test',
        '--route',
        'payments',
        '--payload',
        'examples/stripe/charge.refunded.json',
        '--header',
        'Stripe-Signature: t=1,v1=00',
      ]),
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`POST ${relay.url}/hooks/github`);
    expect(ok.stdout).toMatch(/^202 Accepted$/m);
    const id = (JSON.parse(ok.stdout.slice(ok.stdout.indexOf('{'))) as { ids: string[] }).ids[0]!;
    await eventually(
      async () =>
        (await records(relay.url, 'route=github&state=SENT')).some((record) => record.id === id) ? true : undefined,
      { what: 'the send-test SMS' },
    );

    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^401 Unauthorized$/m);
  }, 120_000);

  it("send-test signs an hmac route with the route's own scheme; a repeat of the delivered body is a duplicate, said and exit 3, not a refusal", async () => {
    const result = await cli([
      'send-test',
      '--route',
      'paystack',
      '--payload',
      'examples/hmac/paystack-charge-success.json',
    ]);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toContain(`POST ${relay.url}/hooks/paystack  (hmac, signed with "paystack-secret"`);
    expect(result.stdout).toMatch(/^200 OK$/m);
    expect(result.stdout).toMatch(
      /^duplicate: the relay had already accepted this delivery, so nothing was sent this time/m,
    );
    expect(JSON.parse(result.stdout.slice(result.stdout.indexOf('{'), result.stdout.lastIndexOf('}') + 1))).toEqual({
      status: 'duplicate',
      ids: sent.get('paystack')!.ids,
    });
  }, 120_000);

  it('logs lists records through the running relay, numbers masked', async () => {
    const [json, table] = await Promise.all([
      cli(['logs', '--json', '--route', 'orders']),
      cli(['logs', '--state', 'SENT', '--limit', '3']),
    ]);
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout) as RecordJson[];
    expect(listed).toHaveLength(1);
    expect(Object.keys(listed[0]!).sort()).toEqual([
      'attempts',
      'createdAt',
      'deducted',
      'dismissal',
      'failoverFrom',
      'failoverReason',
      'id',
      'provider',
      'reason',
      'remainingBalance',
      'route',
      'segments',
      'state',
      'to',
      'updatedAt',
    ]);
    expect(listed[0]).toMatchObject({
      id: sent.get('orders')!.ids[0],
      route: 'orders',
      state: 'SENT',
      segments: 1,
      attempts: 1,
      reason: null,
      deducted: 40,
    });
    expect([...listed[0]!.to].sort()).toEqual(['2557****222', '2557****678']);

    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^TIME\s+ID\s+ROUTE\s+STATE\s+TO\s+SEG\s+CREDITS\s+REASON$/m);
    expect(table.stdout).toContain('3 records from the running relay');
  }, 120_000);

  it("balance shows the SMS service's balance, currency and rate", async () => {
    const result = await cli(['balance', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const account = await getJson<{ balance: number }>(`${relay.sandboxUrl}/_sandbox/account`);
    expect(JSON.parse(result.stdout)).toEqual({
      baseUrl: relay.sandboxUrl,
      balance: account.balance,
      currency: 'TZS',
      smsRate: 20,
    });
  }, 120_000);

  it("balance takes the key from the running relay's own secrets file, wherever that is", async () => {
    // Only the data directory leads to the relay: its secrets file is not the default one.
    const { RELAY_SECRETS_FILE: _, ...withoutSecrets } = env;
    const result = await runCli(['balance', '--json'], withoutSecrets);
    printed.push({
      what: 'sms-relay balance --json (no RELAY_SECRETS_FILE)',
      text: `${result.stdout}\n${result.stderr}`,
    });
    expect(result.code, result.stderr).toBe(0);
    const account = await getJson<{ balance: number }>(`${relay.sandboxUrl}/_sandbox/account`);
    expect(JSON.parse(result.stdout)).toEqual({
      baseUrl: relay.sandboxUrl,
      balance: account.balance,
      currency: 'TZS',
      smsRate: 20,
    });
    const announced = readJsonFile<Record<string, unknown>>(join(dir, 'data', 'runtime.json'));
    expect(announced['secretsPath']).toBe(join(dir, 'secrets.json'));
    expect(JSON.stringify(announced)).not.toContain(secrets['providerApiKey']!);
  }, 120_000);

  it('refuses to start a second runtime on the same store', async () => {
    const second = await runCli(['start'], env);
    printed.push({ what: 'second start', text: `${second.stdout}\n${second.stderr}` });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`the store in ${join(dir, 'data')} is in use by another process`);
  }, 120_000);

  it('stops cleanly on Ctrl-C, and logs then reads the store on disk', async () => {
    const listedLive = await records(relay.url);
    const { code } = await stopRelay(relay, 'SIGINT');
    printed.push({ what: 'runtime', text: `${relay.stdout()}\n${relay.stderr()}` });
    expect(code).toBe(0);
    expect(relay.stdout()).toMatch(/stopped\n$/);
    expect(existsSync(join(dir, 'data', 'runtime.json'))).toBe(false);

    const result = await cli(['logs', '--json', '--limit', '1000']);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as RecordJson[]).map((record) => record.id).sort()).toEqual(
      listedLive.map((record) => record.id).sort(),
    );
  }, 120_000);

  it('never prints a secret or a full phone number', () => {
    expect(printed.length).toBeGreaterThan(5);
    for (const { what, text } of printed) {
      for (const [name, value] of Object.entries(secrets)) {
        expect(text.split(value).length - 1, `${name} in ${what}`).toBe(0);
      }
      const numbers = text.match(FULL_NUMBER);
      expect(numbers, what).toBeNull();
    }
  });
});
