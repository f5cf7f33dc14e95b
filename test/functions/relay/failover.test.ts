import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProviderSource } from '../../../functions/adapters/providers';
import { CIRCUIT } from '../../../functions/core/defaults';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import { checkProviderBalances } from '../../../functions/relay/provider-balances';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState } from '../../../functions/store';
import { startAfricasTalkingSandbox } from '../../../local/sandbox/africastalking';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { alertBody, bearer, type Harness, harness, SECRETS, secretValues, useRelayServers } from './support';

/**
 * The sender sends through each provider of the config with failover (docs/providers.md): the SMS
 * service sandbox as `main`, the Africa's Talking sandbox as `at`, dynalite as the store, real
 * HTTP to both.
 */
const servers = useRelayServers({ balance: 1000, rate: 1 });
const AT_KEY = `at-key-${SECRETS.providerApiKey.slice(-8)}`;
let at: RunningSandbox;

beforeAll(async () => {
  at = await startAfricasTalkingSandbox({
    apiKey: AT_KEY,
    username: 'acme',
    balance: 500,
    rate: 0.8,
    currency: 'KES',
    senderIds: ['ALERTS', 'OPS'],
  });
});
afterAll(async () => {
  await at.close();
});
beforeEach(async () => {
  at.clearMessages();
  at.setBalance(500);
  await fetch(`${servers.sandbox.baseUrl}/_sandbox/outage`, { method: 'DELETE' });
});

const POLICY = { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 60_000, staleSendingMs: 120_000 } as const;

async function twoProviders(
  atEntry: Record<string, unknown> = {},
  top: Partial<RelayConfigInput> = {},
): Promise<Harness & { readonly relayContext: Harness['context'] }> {
  const relay = await harness({
    db: servers.db,
    baseUrl: servers.sandbox.baseUrl,
    policy: POLICY,
    secrets: secretValues({ 'at-key': AT_KEY }),
    config: ({ provider, ...config }): RelayConfigInput => ({
      ...config,
      ...top,
      routes: { ...config.routes, 'unapproved-alerts': { ...config.routes['alerts']!, senderId: 'NOTAPPROVED' } },
      providers: {
        main: { type: 'sms-service', ...provider, timeoutMs: 1_000 },
        at: { type: 'africastalking', username: 'acme', baseUrl: at.baseUrl, ...atEntry },
      },
    }),
  });
  const providers = createProviderSource({ secrets: relay.context.secrets, settings: relay.context.config.settings });
  return { ...relay, relayContext: { ...relay.context, providers } };
}

async function accepted(relay: Harness, route: string): Promise<string> {
  const response = await relay.ingest(route, alertBody(), { headers: bearer(SECRETS.alertsToken) });
  expect(response.status).toBe(202);
  return (response.body['ids'] as string[])[0]!;
}

const mainOutage = async (): Promise<void> => {
  const answer = await fetch(`${servers.sandbox.baseUrl}/_sandbox/outage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status: 503 }),
  });
  expect(answer.status).toBe(200);
};

const atNumbers = () => at.messages().flatMap((message) => message.phoneNumbers);

describe('sending through several providers, with failover', () => {
  it('sends through the first provider while it answers, and names it on the record', async () => {
    const relay = await twoProviders();
    const id = await accepted(relay, 'alerts');
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Sent);
    const record = await relay.record(id);
    expect(record).toMatchObject({ state: MessageState.Sent, provider: 'main' });
    expect(record.failoverFrom).toBeUndefined();
    expect(servers.sandbox.messages()).toHaveLength(1);
    expect(at.messages()).toHaveLength(0);
  });

  it('sends through at instead of parking when main answers 402, saying why', async () => {
    const relay = await twoProviders();
    servers.sandbox.setBalance(0);
    const id = await accepted(relay, 'alerts');
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Sent);
    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Sent,
      provider: 'at',
      failoverFrom: 'main',
      failoverReason: 'insufficient-credit',
    });
    expect(atNumbers()).toEqual(['+255712345678']);
    expect(servers.sandbox.messages()).toHaveLength(0);
    expect(relay.metrics.points).toContainEqual({ name: 'Sent', value: 1, route: 'alerts', provider: 'at' });
    expect(relay.logger.lines.find((line) => line.attributes?.['state'] === 'SENT')?.attributes).toMatchObject({
      provider: 'at',
      failoverFrom: 'main',
    });
  });

  it('parks only when the last provider of the chain has no credit either', async () => {
    const relay = await twoProviders();
    servers.sandbox.setBalance(0);
    at.setBalance(0);
    const id = await accepted(relay, 'alerts');
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Parked);
    expect(await relay.record(id)).toMatchObject({ state: MessageState.Parked, provider: 'at', failoverFrom: 'main' });
  });

  it('never sends through at an at-most-once message whose send to main timed out: it ends UNKNOWN', async () => {
    const relay = await twoProviders();
    servers.sandbox.injectFault({ kind: 'delay', ms: 2_500, count: 1 });
    const id = await accepted(relay, 'alerts');
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Unknown);
    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Unknown,
      provider: 'main',
      lastError: { delivery: 'maybe-sent', message: expect.stringMatching(/timed out .*\(SMS may have been sent\)$/) },
    });
    expect((await relay.record(id))?.lastError?.message).not.toMatch(/sent\).*sent\)/);
    // The log (and so the terminal line) names the time-out as what left it in doubt.
    const logged = relay.logger.lines.find((line) => line.attributes?.['state'] === MessageState.Unknown);
    expect(logged?.attributes?.['error']).toMatchObject({ code: 'timeout' });
    expect(at.messages()).toHaveLength(0);
  });

  it('sends the retry of an at-least-once message that may have gone out through the next provider', async () => {
    const relay = await twoProviders();
    await mainOutage();
    const id = await accepted(relay, 'alerts-alo');
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Retrying);
    expect(at.messages()).toHaveLength(0);
    relay.clock.advance(POLICY.baseDelayMs);
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Sent);
    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Sent,
      provider: 'at',
      failoverFrom: 'main',
      failoverReason: 'maybe-sent',
    });
    expect(atNumbers()).toEqual(['+255712345678']);
  });

  it(`delivers an alert through at once main's circuit opened (${CIRCUIT.failuresToOpen} failures), without another request to main`, async () => {
    const relay = await twoProviders();
    await mainOutage();
    for (let sent = 0; sent < CIRCUIT.failuresToOpen; sent += 1)
      expect(await sendMessage(relay.relayContext, await accepted(relay, 'alerts'))).toBe(SendOutcome.Unknown);
    expect((await relay.store.getCircuit()).openedAt).toBeDefined();
    expect((await relay.store.getCircuit('at')).openedAt).toBeUndefined();
    expect(relay.metrics.points).toContainEqual({ name: 'SmsServiceUnreachable', value: 1, provider: 'main' });
    const mainSends = servers.sandbox.requests().filter((request) => request.path === '/v1/sms/send').length;

    const id = await accepted(relay, 'alerts');
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Sent);
    expect(await relay.record(id)).toMatchObject({
      state: MessageState.Sent,
      provider: 'at',
      failoverFrom: 'main',
      failoverReason: 'circuit-open',
    });
    expect(servers.sandbox.requests().filter((request) => request.path === '/v1/sms/send')).toHaveLength(mainSends);
    expect(atNumbers()).toEqual(['+255712345678']);
  });

  it('fails, without failing over, a message main refuses for what it carries', async () => {
    const relay = await twoProviders();
    const id = await accepted(relay, 'unapproved-alerts');
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Failed);
    expect(await relay.record(id)).toMatchObject({ state: MessageState.Failed, provider: 'main' });
    expect(at.messages()).toHaveLength(0);
  });

  it("watches each provider's balance against its own threshold, and names the provider in its low-balance notice", async () => {
    const relay = await twoProviders(
      { balance: { threshold: 10 } },
      { balance: { threshold: 100, notify: ['+255 754 111 222'] } },
    );
    at.setBalance(4);
    const check = await checkProviderBalances(relay.relayContext);
    expect(check).toMatchObject({ balance: 1000, alerted: false });
    expect(await relay.store.getBalanceState()).toMatchObject({ lastBalance: 1000, armed: true });
    expect(await relay.store.getBalanceState('at')).toMatchObject({ lastBalance: 4, armed: false });
    const notices = await relay.records('_relay');
    expect(notices.map((notice) => notice.text)).toEqual([
      'sms-relay: SMS balance of at is KES 4, below the threshold of 10. Too little spend seen to forecast how long it lasts. Top up soon.',
    ]);
    expect(relay.metrics.points).toContainEqual({ name: 'RemainingBalance', value: 4, provider: 'at' });
  });

  it("wakes waiting records for the sender while main's circuit is open but at's is not, and none once both are", async () => {
    const relay = await twoProviders();
    const until = () => new Date(relay.clock.read().getTime() + 3_600_000);
    const first = await accepted(relay, 'alerts');
    relay.clock.advance(60_000);
    await relay.store.circuit.open({ until: until(), by: 'test' });
    expect((await sweep(relay.relayContext, { wake: true, limit: 1 })).woken).toBe(1);
    expect(await relay.record(first)).toMatchObject({ state: MessageState.Pending, wokenAt: expect.any(String) });

    const second = await accepted(relay, 'alerts');
    relay.clock.advance(60_000);
    await relay.store.circuit.open({ until: until(), by: 'test', provider: 'at' });
    await sweep(relay.relayContext, { wake: true, limit: 1 });
    expect((await relay.record(second)).wokenAt).toBeUndefined();
  });

  it("probes at's balance endpoint when at's circuit is open, and closes it when at answers, as main's", async () => {
    const relay = await twoProviders();
    const open = { threshold: CIRCUIT.failuresToOpen, firstProbeAt: () => relay.clock.read(), error: 'network' };
    for (let failure = 0; failure < CIRCUIT.failuresToOpen; failure += 1)
      await relay.store.circuit.failed({ ...open, provider: 'at' });
    expect((await relay.store.getCircuit('at')).openedAt).toBeDefined();
    relay.clock.advance(CIRCUIT.firstProbeMs);
    await sweep(relay.relayContext, { limit: 1 });
    const at = await relay.store.getCircuit('at');
    expect(at.openedAt).toBeUndefined();
    expect(at.probationSince).toEqual(expect.any(String));
    expect((await relay.store.getCircuit()).openedAt).toBeUndefined();
    expect(relay.metrics.points).toContainEqual({ name: 'SmsServiceUnreachable', value: 0, provider: 'at' });
  });
});
