import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProviderSource } from '../../../functions/adapters/providers';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { MessageState } from '../../../functions/store';
import { startAfricasTalkingSandbox } from '../../../local/sandbox/africastalking';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { bearer, type Harness, harness, SECRETS, secretValues, useRelayServers } from './support';

/**
 * A webhook's number goes to the provider its E.164 prefix is routed to (docs/providers.md):
 * `main` (the SMS service sandbox) texts +255, `at` (the Africa's Talking sandbox) +254, nobody
 * +243. Real HTTP to both sandboxes, dynalite as the store.
 */
const servers = useRelayServers({ balance: 1000, rate: 1 });
const AT_KEY = `at-key-${SECRETS.providerApiKey.slice(-8)}`;
let at: RunningSandbox;

beforeAll(async () => {
  at = await startAfricasTalkingSandbox({ apiKey: AT_KEY, username: 'acme', balance: 500, rate: 0.8, currency: 'KES' });
});
afterAll(async () => {
  await at.close();
});
beforeEach(() => {
  at.clearMessages();
  servers.sandbox.clearMessages();
});

async function routedByNumber(): Promise<Harness & { readonly relayContext: Harness['context'] }> {
  const relay = await harness({
    db: servers.db,
    baseUrl: servers.sandbox.baseUrl,
    secrets: secretValues({ 'at-key': AT_KEY }),
    config: ({ provider, ...config }): RelayConfigInput => ({
      ...config,
      routes: {
        ...config.routes,
        phone: { source: 'generic', secret: 'generic-token', recipients: ['{{ phone }}'], template: '{{ message }}' },
      },
      providers: {
        main: { type: 'sms-service', ...provider },
        at: { type: 'africastalking', username: 'acme', baseUrl: at.baseUrl },
      },
      routing: [
        { numbers: ['+255'], use: ['main'] },
        { numbers: ['+254'], use: ['at'] },
      ],
    }),
  });
  const providers = createProviderSource({ secrets: relay.context.secrets, settings: relay.context.config.settings });
  return { ...relay, relayContext: { ...relay.context, providers } };
}

async function webhookTo(relay: Harness, phone: string): Promise<string> {
  const response = await relay.ingest('phone', JSON.stringify({ message: 'Disk full on db-1', phone }), {
    headers: bearer(SECRETS.genericToken),
  });
  expect(response.status).toBe(202);
  return (response.body['ids'] as string[])[0]!;
}

describe('a webhook number goes to the provider its country is routed to', () => {
  it('sends a +254 number through at, recorded as its E.164 digits', async () => {
    const relay = await routedByNumber();
    const id = await webhookTo(relay, '+254712345678');
    expect(await relay.record(id)).toMatchObject({ state: MessageState.Pending, to: ['254712345678'] });
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Sent);
    expect(await relay.record(id)).toMatchObject({ state: MessageState.Sent, provider: 'at' });
    expect(at.messages().flatMap((message) => message.phoneNumbers)).toEqual(['+254712345678']);
    expect(servers.sandbox.messages()).toHaveLength(0);
  });

  it('still sends a 0712… number through main as 255712…', async () => {
    const relay = await routedByNumber();
    const id = await webhookTo(relay, '0712 345 678');
    expect(await sendMessage(relay.relayContext, id)).toBe(SendOutcome.Sent);
    expect(await relay.record(id)).toMatchObject({ state: MessageState.Sent, provider: 'main', to: ['255712345678'] });
    expect(servers.sandbox.messages().flatMap((message) => message.phoneNumbers)).toEqual(['255712345678']);
    expect(at.messages()).toHaveLength(0);
  });

  it('drops a +243 number no provider texts, the answer and the record saying so with the number masked', async () => {
    const relay = await routedByNumber();
    const response = await relay.ingest(
      'phone',
      JSON.stringify({ message: 'Disk full on db-1', phone: '+243 812 345 678' }),
      { headers: bearer(SECRETS.genericToken) },
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'dropped',
      reason: 'no valid recipient: no provider for +2438****678',
    });
    const [record, ...more] = await relay.records('phone');
    expect(more).toHaveLength(0);
    expect(record).toMatchObject({
      state: MessageState.Dropped,
      reason: 'no valid recipient: no provider for +2438****678',
    });
    expect(JSON.stringify(record)).not.toContain('243812345678');
    expect(at.messages()).toHaveLength(0);
    expect(servers.sandbox.messages()).toHaveLength(0);
  });
});
