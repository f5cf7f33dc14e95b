/**
 * The conformance table every provider type passes, each against its own sandbox over real HTTP:
 * a send is sent, certainly not sent (with the reason a failover reads), or maybe sent; the
 * balance is read where the type's API has one. A new type adds one row (docs/providers.md).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createProvider,
  NotSentReason,
  ProviderType,
  type ProviderConfig,
  type SendOutcome,
  type SmsProvider,
} from '../../../../functions/core/provider';
import { startAfricasTalkingSandbox } from '../../../../local/sandbox/africastalking';
import {
  HTTP_GATEWAY_BODY,
  HTTP_GATEWAY_SEND_PATH,
  startHttpGatewaySandbox,
} from '../../../../local/sandbox/http-gateway';
import { startSandbox } from '../../../../local/sandbox/server';
import type { RunningSandbox } from '../../../../local/sandbox/types';
import { API_KEY, closedPort } from './support';

interface TypeRow {
  readonly type: ProviderType;
  /** The provider's name in the config: its key is `providerApiKey` for `main`, else `<name>-key`. */
  readonly name: string;
  readonly keyName: string;
  /** A number the type sends to, and how its sandbox's inbox shows it. */
  readonly to: string;
  readonly inboxNumber: string;
  /** A number refused for itself, and the reason the type gives. */
  readonly badNumber: string;
  readonly badNumberReason: NotSentReason;
  /** What a 429 means for the type. */
  readonly rateLimited: SendOutcome['status'];
  readonly start: (balance: number) => Promise<RunningSandbox>;
  readonly config: (baseUrl: string) => ProviderConfig;
  /** The balance the type reads from a sandbox holding 100, or `undefined` for a type without a balance API. */
  readonly balance: { readonly balance: number; readonly currency: string } | undefined;
}

const ROWS: readonly TypeRow[] = [
  {
    type: ProviderType.SmsService,
    name: 'main',
    keyName: 'providerApiKey',
    to: '+255712345678',
    inboxNumber: '255712345678',
    badNumber: '+254712345678',
    badNumberReason: NotSentReason.InvalidNumber,
    rateLimited: 'not-sent',
    start: (balance) => startSandbox({ apiKey: API_KEY, balance, rate: 2 }),
    config: (baseUrl) => ({ type: ProviderType.SmsService, baseUrl }),
    balance: { balance: 100, currency: 'TZS' },
  },
  {
    type: ProviderType.AfricasTalking,
    name: 'at',
    keyName: 'at-key',
    to: '+254712345678',
    inboxNumber: '+254712345678',
    badNumber: '+2547123',
    badNumberReason: NotSentReason.InvalidNumber,
    rateLimited: 'not-sent',
    start: (balance) =>
      startAfricasTalkingSandbox({ apiKey: API_KEY, username: 'acme', balance, rate: 2, currency: 'KES' }),
    config: (baseUrl) => ({ type: ProviderType.AfricasTalking, username: 'acme', baseUrl }),
    balance: { balance: 100, currency: 'KES' },
  },
  {
    type: ProviderType.Http,
    name: 'gateway',
    keyName: 'gateway-key',
    to: '+256712345678',
    inboxNumber: '+256712345678',
    // The gateway answers 400: the http type cannot tell a bad number from another bad request.
    badNumber: '+2567',
    badNumberReason: NotSentReason.Rejected,
    // A 429 may come from a proxy in front of work already done (docs/providers.md).
    rateLimited: 'maybe-sent',
    start: (balance) => startHttpGatewaySandbox({ apiKey: API_KEY, balance, rate: 2 }),
    config: (baseUrl) => ({
      type: ProviderType.Http,
      url: `${baseUrl}${HTTP_GATEWAY_SEND_PATH}`,
      headers: { 'X-API-Key': '{{ secret.gateway-key }}' },
      body: HTTP_GATEWAY_BODY,
    }),
    balance: undefined,
  },
];

const running: { close(): unknown }[] = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});

async function sandboxFor(row: TypeRow, balance = 100): Promise<RunningSandbox> {
  const sandbox = await row.start(balance);
  running.push(sandbox);
  return sandbox;
}

function providerFor(row: TypeRow, baseUrl: string, key = API_KEY): SmsProvider {
  const provider = createProvider(row.name, row.config(baseUrl), {
    secret: (name) => (name === row.keyName ? key : undefined),
  });
  running.push(provider);
  return provider;
}

describe.each(ROWS)('the $type provider type', (row) => {
  it('sends one SMS to one number and says sent; the sandbox has it in its inbox', async () => {
    const sandbox = await sandboxFor(row);
    const outcome = await providerFor(row, sandbox.baseUrl).send({ to: row.to, text: 'Disk "full" on db-1' });
    expect(outcome.status).toBe('sent');
    expect(sandbox.messages().map(({ phoneNumbers, message }) => ({ phoneNumbers, message }))).toEqual([
      { phoneNumbers: [row.inboxNumber], message: 'Disk "full" on db-1' },
    ]);
    expect(sandbox.balance()).toBe(98);
  });

  it('says not sent, unreachable, when nothing listens at its address', async () => {
    const port = await closedPort();
    const outcome = await providerFor(row, `http://127.0.0.1:${port}`).send({ to: row.to, text: 'Hi' });
    expect(outcome).toMatchObject({ status: 'not-sent', reason: NotSentReason.Unreachable });
  });

  it('says not sent, refused-key, for a wrong key, and never shows the key', async () => {
    const sandbox = await sandboxFor(row);
    const wrongKey = 'sk_wrong_key_0000111122223333';
    const outcome = await providerFor(row, sandbox.baseUrl, wrongKey).send({ to: row.to, text: 'Hi' });
    expect(outcome).toMatchObject({ status: 'not-sent', reason: NotSentReason.RefusedKey });
    expect(JSON.stringify(outcome)).not.toContain(wrongKey);
    expect(sandbox.messages()).toEqual([]);
  });

  it('says not sent, insufficient-credit, when the balance does not cover the SMS', async () => {
    const sandbox = await sandboxFor(row, 1);
    const outcome = await providerFor(row, sandbox.baseUrl).send({ to: row.to, text: 'Hi' });
    expect(outcome).toMatchObject({ status: 'not-sent', reason: NotSentReason.InsufficientCredit });
    expect(sandbox.messages()).toEqual([]);
    expect(sandbox.balance()).toBe(1);
  });

  it('says not sent for the number itself, a reason no failover takes', async () => {
    const sandbox = await sandboxFor(row);
    const outcome = await providerFor(row, sandbox.baseUrl).send({ to: row.badNumber, text: 'Hi' });
    expect(outcome).toMatchObject({ status: 'not-sent', reason: row.badNumberReason });
    expect(sandbox.messages()).toEqual([]);
  });

  it('says maybe sent when the answer times out after the request left', async () => {
    const sandbox = await sandboxFor(row);
    sandbox.injectFault({ kind: 'delay', ms: 60_000 });
    const outcome = await providerFor(row, sandbox.baseUrl).send({ to: row.to, text: 'Hi' }, { timeoutMs: 300 });
    // The code names the time-out, so the record and the terminal say why the send is in doubt.
    expect(outcome).toMatchObject({ status: 'maybe-sent', code: 'timeout' });
    expect(outcome.status === 'maybe-sent' && outcome.detail).toContain('response phase');
  });

  it('says maybe sent when the connection is reset after the request left', async () => {
    const sandbox = await sandboxFor(row);
    sandbox.injectFault({ kind: 'reset', deliver: true });
    const outcome = await providerFor(row, sandbox.baseUrl).send({ to: row.to, text: 'Hi' });
    expect(outcome).toMatchObject({ status: 'maybe-sent', code: 'reset' });
    // It was sent: a second provider sending it would double the SMS.
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('says maybe sent on a 5xx, and on every request of an outage', async () => {
    const sandbox = await sandboxFor(row);
    sandbox.injectFault({ kind: 'status', status: 502 });
    const provider = providerFor(row, sandbox.baseUrl);
    await expect(provider.send({ to: row.to, text: 'Hi' })).resolves.toMatchObject({
      status: 'maybe-sent',
      code: 'server-error',
    });
    const outage = await fetch(`${sandbox.baseUrl}/_sandbox/outage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 503 }),
    });
    expect(outage.status).toBe(200);
    await expect(provider.send({ to: row.to, text: 'Hi' })).resolves.toMatchObject({ status: 'maybe-sent' });
    expect(sandbox.messages()).toEqual([]);
  });

  it(`answers a 429 as ${row.rateLimited}`, async () => {
    const sandbox = await sandboxFor(row);
    sandbox.injectFault({ kind: 'status', status: 429, retryAfter: 2 });
    const outcome = await providerFor(row, sandbox.baseUrl).send({ to: row.to, text: 'Hi' });
    expect(outcome.status).toBe(row.rateLimited);
    if (outcome.status === 'not-sent') expect(outcome).toMatchObject({ reason: 'rate-limited', retryAfterMs: 2_000 });
  });

  it('reads the balance where its API has one', async () => {
    const sandbox = await sandboxFor(row);
    const provider = providerFor(row, sandbox.baseUrl);
    if (row.balance === undefined) {
      expect(provider.balance).toBeUndefined();
      return;
    }
    await expect(provider.balance?.()).resolves.toMatchObject({ ok: true, ...row.balance });
    sandbox.setBalance(42.5);
    await expect(provider.balance?.()).resolves.toMatchObject({ ok: true, balance: 42.5 });
  });
});
