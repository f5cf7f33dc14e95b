import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSendTest } from '../../local/cli/commands/send-test';
import { signSnsMessage, type SnsMessage } from '../helpers/sns';
import {
  cleanEnv,
  eventually,
  FIXTURES,
  records,
  REPO_ROOT,
  runCli,
  spawnCli,
  startRelay,
  stopRelay,
  writeSnsDocuments,
  type CliProcess,
  type RelayProcess,
} from './support';

/** What Opsgenie's API answers a create (send-test posts an opsgenie example to the route's v2/alerts): no ids. */
const OPSGENIE_ACCEPTED = 'Request will be processed';

/** The route of config/local.yaml that takes each source's example payloads. */
const ROUTE_OF_SOURCE: Readonly<Record<string, string>> = {
  alertmanager: 'alerts',
  generic: 'notify',
  github: 'github',
  gitlab: 'gitlab',
  grafana: 'grafana',
  hmac: 'paystack',
  pagerduty: 'pagerduty',
  sentry: 'sentry',
  shopify: 'orders',
  sns: 'aws-alarms',
  'standard-webhooks': 'events',
  stripe: 'payments',
  'uptime-kuma': 'uptime',
  woocommerce: 'shop',
  goalert: 'goalert',
  'grafana-oncall': 'grafana-oncall',
  opsgenie: 'og',
};

/** The URL's query for sources that call one URL per person: the person's number (asha's: allowed by person:*). */
const QUERY_OF_SOURCE: Readonly<Record<string, readonly string[]>> = {
  goalert: ['--query', 'to=0712345678'],
  'grafana-oncall': ['--query', 'to=0712345678'],
};

/**
 * How the relay answers each example payload, as it would answer its sender: pings (GitHub's,
 * PagerDuty's, Sentry's installation, Uptime Kuma's test, WooCommerce's creation ping) without an
 * SMS; Grafana's test notification is an alert by design. The two Slack/Typeform examples reach the
 * Paystack route and are filtered by its `when`; the SNS examples of the developer guide come from a
 * topic the route does not take.
 */
const EXPECTED: Readonly<Record<string, { readonly http: number; readonly status: string; readonly text?: RegExp }>> = {
  'alertmanager/firing-grouped.json': { http: 202, status: 'accepted', text: /^\[FIRING x3\] InstanceDown: api-01/ },
  'alertmanager/firing-single.json': { http: 202, status: 'accepted' },
  'alertmanager/resolved.json': { http: 200, status: 'filtered' },
  'generic/backup-failed.json': { http: 202, status: 'accepted' },
  'github/issues-opened.json': {
    http: 202,
    status: 'accepted',
    text: /^\[kilimo-labs\/sms-relay\] Issue #17 opened by /,
  },
  'github/ping.json': { http: 200, status: 'ping' },
  'github/push.form.txt': { http: 202, status: 'accepted', text: / pushed \d+ commit\(s\) to / },
  'github/push.json': { http: 202, status: 'accepted', text: / pushed \d+ commit\(s\) to / },
  'github/workflow_run-completed.json': { http: 202, status: 'accepted', text: /^\[kilimo-labs\/sms-relay\] \S.* on / },
  'gitlab/merge_request-merged.json': { http: 202, status: 'accepted' },
  'gitlab/pipeline-failed.json': { http: 202, status: 'accepted' },
  'gitlab/push.json': { http: 202, status: 'accepted' },
  'grafana/firing.json': { http: 202, status: 'accepted' },
  'grafana/resolved.json': { http: 202, status: 'accepted' },
  'grafana/test-notification.json': { http: 202, status: 'accepted' },
  'hmac/paystack-charge-success.json': { http: 202, status: 'accepted' },
  'hmac/slack-app-mention.json': { http: 200, status: 'filtered' },
  'hmac/typeform-form-response.json': { http: 200, status: 'filtered' },
  'pagerduty/incident.resolved.json': { http: 202, status: 'accepted' },
  'pagerduty/incident.triggered.json': { http: 202, status: 'accepted' },
  'pagerduty/pagey.ping.json': { http: 200, status: 'ping' },
  'sentry/event_alert.json': { http: 202, status: 'accepted' },
  'sentry/installation-created.json': { http: 200, status: 'ping' },
  'sentry/issue-created.json': { http: 202, status: 'accepted' },
  'sentry/metric_alert-critical.json': { http: 202, status: 'accepted' },
  'shopify/orders-create.json': { http: 202, status: 'accepted', text: /^New order #1001: / },
  'sns/cloudwatch-alarm.json': { http: 202, status: 'accepted' },
  'sns/notification.json': { http: 401, status: 'unauthorized' },
  'sns/subscription-confirmation.json': { http: 401, status: 'unauthorized' },
  'standard-webhooks/invoice-paid.json': { http: 202, status: 'accepted' },
  'stripe/charge.refunded.json': { http: 202, status: 'accepted' },
  'stripe/payment_intent.succeeded.json': { http: 202, status: 'accepted' },
  'uptime-kuma/certificate-expiry.json': { http: 202, status: 'accepted' },
  'uptime-kuma/down.json': { http: 202, status: 'accepted' },
  'uptime-kuma/test.json': { http: 200, status: 'ping' },
  'uptime-kuma/up.json': { http: 202, status: 'accepted' },
  'woocommerce/order-created.json': { http: 202, status: 'accepted', text: /^Order #4821 processing: / },
  'woocommerce/ping.txt': { http: 200, status: 'ping' },
  'goalert/alert.json': {
    http: 202,
    status: 'accepted',
    text: /^GoAlert: Alert #1942: api-01 down: HTTP check failing for 5 minutes\n\nhttps:\/\/goalert\.example\.com\/alerts\/1942$/,
  },
  'goalert/alert-bundle.json': {
    http: 202,
    status: 'accepted',
    text: /^GoAlert: Svc 'Shop API': 3 unacked alerts\n\n/,
  },
  'goalert/alert-status.json': {
    http: 202,
    status: 'accepted',
    text: /^GoAlert: Alert #1942: .*\n\nAcknowledged by Asha Mwita$/s,
  },
  'goalert/test.json': { http: 202, status: 'accepted', text: /^GoAlert: Test message\.$/ },
  'goalert/verification.json': { http: 202, status: 'accepted', text: /^GoAlert: Verification code: 428913$/ },
  'grafana-oncall/acknowledge.json': {
    http: 202,
    status: 'accepted',
    text: /^Grafana OnCall: "InstanceDown api-01" acknowledged by asha /,
  },
  'grafana-oncall/personal-notification.json': {
    http: 202,
    status: 'accepted',
    text: /^Grafana OnCall: "InstanceDown api-01" \(1 alert\) https:/,
  },
  'grafana-oncall/resolve.json': {
    http: 202,
    status: 'accepted',
    text: /^Grafana OnCall: "InstanceDown api-01" resolved by asha /,
  },
  'opsgenie/alertmanager-create.json': {
    http: 202,
    status: OPSGENIE_ACCEPTED,
    text: /^\[P1\] \[FIRING:1\] +\(DiskFull db-1:9100 critical\) http:\/\/127\.0\.0\.1:\d+\/a\//,
  },
  'opsgenie/client-create.json': {
    http: 202,
    status: OPSGENIE_ACCEPTED,
    text: /^\[P3\] Nightly backup of db-1 failed /,
  },
  'opsgenie/grafana-create.json': {
    http: 202,
    status: OPSGENIE_ACCEPTED,
    text: /^\[P2\] \[FIRING:1\] High CPU usage Production \(web-01 P2 critical\) http:\/\/127\.0\.0\.1:\d+\/a\//,
  },
  'opsgenie/create.json': {
    http: 202,
    status: OPSGENIE_ACCEPTED,
    text: /^\[P1\] DiskAlmostFull: \/var\/lib\/postgresql on db-01 has 6% space left http:\/\/127\.0\.0\.1:\d+\/a\//,
  },
};

/**
 * The payloads posted by `sms-relay send-test` child processes, as a user runs it (its flags, the
 * running relay found through the data directory, its exit code); the others through the command's
 * own `runSendTest` in this process: the same signing and posting, without a Node start each
 * (49 processes were most of this file's time).
 */
const THROUGH_THE_CLI: ReadonlySet<string> = new Set(['goalert/alert.json', 'sns/cloudwatch-alarm.json']);

/** Every example payload under examples/ (`<source>/<file>`), the SNS test keys and notes aside. */
const ALL_FIXTURES = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((entry) =>
    readdirSync(join(FIXTURES, entry.name))
      .filter((name) => /\.(json|txt)$/.test(name))
      .map((name) => `${entry.name}/${name}`),
  )
  .sort();

/** The README's `sms-relay sandbox` command, as its arguments (a trailing `# comment` cut off). */
function readmeSandboxArgs(): string[] {
  const line = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')
    .split('\n')
    .find((text) => text.startsWith('npx sms-relay sandbox '));
  if (line === undefined) throw new Error('README.md has no "npx sms-relay sandbox" line');
  return line
    .replace(/\s+#.*$/, '')
    .trim()
    .split(/\s+/)
    .slice(2);
}

const optionOf = (args: readonly string[], name: string): string | undefined => args[args.indexOf(name) + 1];

let dir: string;
let env: NodeJS.ProcessEnv;
let sandbox: CliProcess;
let sandboxUrl: string;
let relay: RelayProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-send-test-'));
  // The README's sandbox, as a reader runs it, on a free port instead of 4010.
  const args = readmeSandboxArgs();
  args[args.indexOf('--port') + 1] = '0';
  sandbox = spawnCli(args, cleanEnv());
  sandboxUrl = (await sandbox.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  env = cleanEnv({
    PORT: '0',
    RELAY_DATA_DIR: join(dir, 'data'),
    RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    PROVIDER_BASE_URL: sandboxUrl,
    PROVIDER_API_KEY: optionOf(args, '--api-key')!,
    // Only for the SNS example: the relay trusts the test certificate it is signed with below.
    RELAY_LOCAL_DOCUMENTS: writeSnsDocuments(join(dir, 'documents.json')),
  });
  relay = await startRelay(env);
}, 180_000);

afterAll(async () => {
  if (relay !== undefined) await stopRelay(relay, 'SIGKILL');
  if (sandbox !== undefined && sandbox.child.exitCode === null) {
    sandbox.child.kill('SIGINT');
    await sandbox.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The file send-test posts for a fixture: the fixture itself, except an SNS message, which only AWS
 * can sign: it is signed now with the test key, as SNS would have signed it, into a directory of
 * the same name.
 */
function payloadFile(path: string): string {
  if (!path.startsWith('sns/')) return join('examples', path);
  const signed = join(dir, path);
  mkdirSync(join(dir, 'sns'), { recursive: true });
  writeFileSync(
    signed,
    JSON.stringify(
      signSnsMessage(JSON.parse(readFileSync(join(FIXTURES, path), 'utf8')) as SnsMessage, { at: new Date() }),
    ),
  );
  return signed;
}

describe('balance with a relay on the README sandbox', () => {
  it('needs the PROVIDER_API_KEY the relay was given, says so without it, and reports the sandbox balance with it', async () => {
    // A new shell: only the data directory (the default one, for a reader) leads to the relay.
    const { PROVIDER_API_KEY: key, PROVIDER_BASE_URL: _, ...shell } = env;
    const without = await runCli(['balance', '--json'], shell);
    expect(without.code).toBe(2);
    expect(without.stderr).toContain('the running relay was given its SMS service key in PROVIDER_API_KEY');
    expect(without.stderr).not.toContain(key!);
    const withKey = await runCli(['balance', '--json'], { ...shell, PROVIDER_API_KEY: key! });
    expect(withKey.code, withKey.stderr).toBe(0);
    expect(JSON.parse(withKey.stdout)).toMatchObject({ baseUrl: sandboxUrl, currency: 'TZS', smsRate: 20 });
  }, 120_000);
});

describe('send-test of every example payload, against the README sandbox', () => {
  it('has an expected answer for every fixture under examples/', () => {
    expect(ALL_FIXTURES).toEqual(Object.keys(EXPECTED).sort());
  });

  it('is answered as each sender would be answered (pings as pings), and each SMS is delivered with its sender ID approved', async () => {
    const configPath = join(REPO_ROOT, 'config', 'local.yaml');
    const answers = new Map(
      await Promise.all(
        ALL_FIXTURES.map(async (path) => {
          const source = path.split('/')[0]!;
          const route = ROUTE_OF_SOURCE[source]!;
          const query = QUERY_OF_SOURCE[source] ?? [];
          if (THROUGH_THE_CLI.has(path))
            return [
              path,
              await runCli(['send-test', '--route', route, '--payload', payloadFile(path), ...query], env),
            ] as const;
          let stdout = '';
          const code = await runSendTest(
            {
              route,
              payload: payloadFile(path),
              url: relay.url,
              config: configPath,
              secrets: env['RELAY_SECRETS_FILE']!,
              header: [],
              query: query.filter((_, index) => index % 2 === 1).map((pair) => pair.split('=') as [string, string]),
            },
            (text) => void (stdout += text),
          );
          return [path, { code, stdout, stderr: '' }] as const;
        }),
      ),
    );

    const accepted = new Map<string, string>();
    for (const path of ALL_FIXTURES) {
      const { code, stdout, stderr } = answers.get(path)!;
      const expected = EXPECTED[path]!;
      expect(stdout, `${path}\n${stderr}`).toMatch(new RegExp(`^${expected.http} `, 'm'));
      expect(code, path).toBe(expected.http < 300 ? 0 : 1);
      const body = JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
        status?: string;
        error?: string;
        result?: string;
        ids?: string[];
      };
      expect(body.status ?? body.error ?? body.result, path).toBe(expected.status);
      if (expected.status === 'accepted') for (const id of body.ids ?? []) accepted.set(id, path);
    }

    // Every accepted SMS reaches the README sandbox: none FAILED for an unapproved sender ID.
    const settled = await eventually(
      async () => {
        const all = await records(relay.url, 'limit=1000');
        const ours = all.filter((record) => accepted.has(record.id));
        return ours.length === accepted.size &&
          ours.every((record) => record.state !== 'PENDING' && record.state !== 'SENDING')
          ? ours
          : undefined;
      },
      { what: 'every accepted SMS settled', timeoutMs: 120_000 },
    );
    expect(
      settled
        .filter((record) => record.state !== 'SENT')
        .map((record) => `${accepted.get(record.id)}: ${record.state} ${record.reason ?? ''}`),
    ).toEqual([]);

    // Opsgenie's answer names no records: its SMS are waited for by their text.
    const missing = async (): Promise<string[]> => {
      const delivered = (await (await fetch(`${sandboxUrl}/_sandbox/messages`)).json()) as {
        messages: { message: string }[];
      };
      return Object.entries(EXPECTED)
        .filter(
          ([, { text }]) => text !== undefined && !delivered.messages.some((message) => text.test(message.message)),
        )
        .map(([path, { text }]) => `${path}: ${String(text)}`);
    };
    await eventually(async () => ((await missing()).length === 0 ? true : undefined), {
      what: 'every expected SMS delivered',
      describe: async () => `missing:\n${(await missing()).join('\n')}`,
    });
  }, 600_000);
});
