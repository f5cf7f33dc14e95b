import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../local/sandbox/types';
import { testWithRelay } from '../helpers/fixtures';
import { eventually, fixture, records, runCli, type RelayOnSandbox } from './support';

const API_KEY = 'oncall-tools-provider-key-41d2';
const ASHA = '255712345678';
const BARAKA = '255754000111';

/** GoAlert's webhook keyring key (P-224); the route holds its public half, as an operator would. */
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-224' });
/** `X-Webhook-Signature` as GoAlert (PR #4225) computes it: base64 of ECDSA-ASN.1 over SHA-512/224 of the body. */
const goalertSignature = (body: Buffer): string => sign('sha512-224', body, privateKey).toString('base64');

let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;

const test = testWithRelay({
  sandbox: {
    apiKey: API_KEY,
    balance: 100_000,
    rate: 20,
    senderIds: ['SMSRELAY'],
    defaultSenderId: 'SMSRELAY',
  },
  config: () => {
    const pem = publicKey
      .export({ type: 'spki', format: 'pem' })
      .toString()
      .trim()
      .split('\n')
      .map((line) => `      ${line}`)
      .join('\n');
    return `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
routes:
  goalert:
    source: goalert
    secret: goalert-token
    recipients: ["{{ query.to }}"]
    allowRecipients: ["person:*"]
  goalert-signed:
    source: goalert
    secret: goalert-token
    recipients: ["{{ query.to }}"]
    allowRecipients: ["person:*"]
    publicKey: |
${pem}
  oncall:
    source: grafana-oncall
    secret: oncall-token
    recipients: ["{{ event.user.phone }}"]
    allowRecipients: ["person:asha"]
`;
  },
});
test.beforeAll(({ sandbox: service, relay }) => {
  sandbox = service;
  running = relay;
}, 180_000);

const smsTo = (number: string) => sandbox.messages().filter((sent) => sent.phoneNumbers.includes(number));

describe('GoAlert through npm start', () => {
  it("texts the person its webhook URL names, once for GoAlert's retry, and drops a number outside allowRecipients", async () => {
    const { relay, secrets } = running!;
    const body = fixture('goalert/alert.json');
    const url = (to: string) =>
      `${relay.url}/hooks/goalert-signed?to=${to}&token=${encodeURIComponent(secrets['goalert-token']!)}`;
    const post = async (to: string, signature = goalertSignature(body)) => {
      const response = await fetch(url(to), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
        body,
      });
      return {
        status: response.status,
        body: (await response.json()) as { status?: string; error?: string; reason?: string },
      };
    };

    const first = await post('0712345678');
    expect(first).toMatchObject({ status: 202, body: { status: 'accepted' } });
    const [sms] = await eventually(async () => (smsTo(ASHA).length > 0 ? smsTo(ASHA) : undefined), {
      what: 'the alert SMS to asha',
    });
    expect(sms!.message).toBe(
      'GoAlert: Alert #1942: api-01 down: HTTP check failing for 5 minutes\n\nhttps://goalert.example.com/alerts/1942',
    );

    // GoAlert retries a send it saw fail: the same body to the same URL is the same notification.
    expect(await post('0712345678')).toMatchObject({ status: 200, body: { status: 'duplicate' } });

    const outsider = await post('0799000111');
    expect(outsider).toMatchObject({
      status: 200,
      body: { status: 'dropped', reason: 'no valid recipient: 2557****111 is not in allowRecipients' },
    });
    const dropped = await eventually(
      async () => (await records(relay.url, 'route=goalert-signed')).find((record) => record.state === 'DROPPED'),
      { what: 'the DROPPED record' },
    );
    expect(dropped.reason).toBe('no valid recipient: 2557****111 is not in allowRecipients');

    // Signed by another key: refused before anything is recorded.
    const forged = sign('sha512-224', body, generateKeyPairSync('ec', { namedCurve: 'P-224' }).privateKey).toString(
      'base64',
    );
    expect(await post('0754000111', forged)).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect(smsTo(ASHA)).toHaveLength(1);
    expect(smsTo(BARAKA)).toEqual([]);
  }, 120_000);

  it('sms-relay send-test --route goalert --query to=… produces the SMS a GoAlert user gets', async () => {
    const { env } = running!;
    const result = await runCli(
      [
        'send-test',
        '--route',
        'goalert',
        '--payload',
        'examples/goalert/verification.json',
        '--query',
        'to=0754000111',
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^202 /m);
    expect(result.stdout).not.toContain('0754000111');
    const [sms] = await eventually(async () => (smsTo(BARAKA).length > 0 ? smsTo(BARAKA) : undefined), {
      what: 'the verification SMS to baraka',
    });
    expect(sms!.message).toBe('GoAlert: Verification code: 428913');
  }, 120_000);
});

describe('Grafana OnCall through npm start', () => {
  it("texts the number of the user's context data with the Authorization Header credential, and refuses a wrong Basic password", async () => {
    const { relay, secrets } = running!;
    const body = fixture('grafana-oncall/personal-notification.json');
    const post = (authorization: string) =>
      fetch(`${relay.url}/hooks/oncall`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body,
      });

    const wrong = await post(`Basic ${Buffer.from('oncall:guess').toString('base64')}`);
    expect(wrong.status).toBe(401);
    const right = await post(`Bearer ${secrets['oncall-token']!}`);
    expect(right.status).toBe(202);
    await eventually(
      async () =>
        sandbox
          .messages()
          .find((sent) => sent.phoneNumbers.includes(ASHA) && sent.message.startsWith('Grafana OnCall: ')),
      { what: 'the OnCall SMS to asha' },
    );
    const texts = sandbox
      .messages()
      .filter((sent) => sent.message.startsWith('Grafana OnCall: '))
      .map((sent) => sent.message);
    expect(texts).toEqual([
      'Grafana OnCall: "InstanceDown api-01" (1 alert) https://oncall.example.com/a/grafana-oncall-app/alert-groups/I6HNZGUFG4K11',
    ]);
  }, 120_000);
});
