/**
 * The Africa's Talking and HTTP gateway sandboxes speak the shapes their providers document, and
 * the provider types read them as documented: checked over real HTTP, request and answer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createProvider, ProviderConfigError, type SmsProvider } from '../../../functions/core/provider';
import { startAfricasTalkingSandbox } from '../../../local/sandbox/africastalking';
import { HTTP_GATEWAY_BODY, startHttpGatewaySandbox } from '../../../local/sandbox/http-gateway';
import type { RunningSandbox } from '../../../local/sandbox/types';

const KEY = 'at_live_key_5c1d-SECRET-99';
const running: { close(): unknown }[] = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});

async function atSandbox(balance = 100): Promise<RunningSandbox> {
  const sandbox = await startAfricasTalkingSandbox({
    apiKey: KEY,
    username: 'acme',
    balance,
    rate: 0.8,
    currency: 'KES',
    senderIds: ['ACME'],
  });
  running.push(sandbox);
  return sandbox;
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

async function atSend(sandbox: RunningSandbox, fields: Record<string, string>, key = KEY): Promise<Response> {
  return await fetch(`${sandbox.baseUrl}/version1/messaging`, {
    method: 'POST',
    headers: { apiKey: key, Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: form(fields),
  });
}

describe("the Africa's Talking sandbox", () => {
  it('answers a send 201 with SMSMessageData and a statusCode per recipient, charged per segment', async () => {
    const sandbox = await atSandbox();
    const response = await atSend(sandbox, {
      username: 'acme',
      to: '+254712345678,+2547123',
      message: 'x'.repeat(161),
      from: 'ACME',
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { SMSMessageData: { Message: string; Recipients: unknown[] } };
    expect(body.SMSMessageData.Message).toBe('Sent to 1/2 Total Cost: KES 1.6000');
    expect(body.SMSMessageData.Recipients).toEqual([
      {
        statusCode: 101,
        number: '+254712345678',
        status: 'Success',
        cost: 'KES 1.6000',
        messageId: expect.stringMatching(/^ATXid_[0-9a-f]{32}$/),
        messageParts: 2,
      },
      { statusCode: 403, number: '+2547123', status: 'InvalidPhoneNumber', cost: '0', messageId: 'None' },
    ]);
    expect(sandbox.balance()).toBe(98.4);
    expect(sandbox.messages()).toMatchObject([{ phoneNumbers: ['+254712345678'], senderId: 'ACME' }]);
  });

  it('refuses a wrong key or username with 401 and its plain-text reason', async () => {
    const sandbox = await atSandbox();
    for (const response of [
      await atSend(sandbox, { username: 'acme', to: '+254712345678', message: 'Hi' }, 'wrong'),
      await atSend(sandbox, { username: 'other', to: '+254712345678', message: 'Hi' }),
    ]) {
      expect(response.status).toBe(401);
      expect(await response.text()).toBe('The supplied authentication is invalid');
    }
    expect(sandbox.messages()).toEqual([]);
  });

  it('refuses an unapproved sender ID with no recipient at all, and a short balance with 405 InsufficientBalance', async () => {
    const sandbox = await atSandbox(0.5);
    const unapproved = await atSend(sandbox, { username: 'acme', to: '+254712345678', message: 'Hi', from: 'OTHER' });
    expect(await unapproved.json()).toEqual({ SMSMessageData: { Message: 'InvalidSenderId', Recipients: [] } });
    const short = await atSend(sandbox, { username: 'acme', to: '+254712345678', message: 'Hi' });
    expect(await short.json()).toMatchObject({
      SMSMessageData: {
        Message: 'Sent to 0/1 Total Cost: 0',
        Recipients: [{ statusCode: 405, status: 'InsufficientBalance', cost: '0', messageId: 'None' }],
      },
    });
    expect(sandbox.balance()).toBe(0.5);
  });

  it('answers the user data with the balance as "<currency> <amount>"', async () => {
    const sandbox = await atSandbox(1785.5);
    const response = await fetch(`${sandbox.baseUrl}/version1/user?username=acme`, {
      headers: { apiKey: KEY, Accept: 'application/json' },
    });
    expect(await response.json()).toEqual({ UserData: { balance: 'KES 1785.5000' } });
  });

  it('receives from the africastalking type what AT documents: form-encoded, apiKey header, Accept JSON; never logs the key', async () => {
    const sandbox = await atSandbox();
    const provider = createProvider(
      'at',
      { type: 'africastalking', username: 'acme', senderId: 'ACME', baseUrl: sandbox.baseUrl },
      { secret: (name) => (name === 'at-key' ? KEY : undefined) },
    );
    running.push(provider);
    await expect(provider.send({ to: '+254712345678', text: 'Hi' })).resolves.toMatchObject({
      status: 'sent',
      messageId: expect.stringMatching(/^ATXid_/),
      cost: { amount: 0.8, currency: 'KES' },
      segments: 1,
    });
    const [request] = sandbox.requests();
    expect(request).toMatchObject({ method: 'POST', path: '/version1/messaging', status: 201 });
    expect(request?.headers).toMatchObject({
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    });
    expect(JSON.stringify(sandbox.requests())).not.toContain(KEY);
    expect(sandbox.messages()).toMatchObject([{ senderId: 'ACME', message: 'Hi' }]);
  });

  it('reads an unapproved sender ID as rejected (FAILED, no failover)', async () => {
    const sandbox = await atSandbox();
    const provider = createProvider(
      'at',
      { type: 'africastalking', username: 'acme', senderId: 'OTHER', baseUrl: sandbox.baseUrl },
      { secret: () => KEY },
    );
    running.push(provider);
    await expect(provider.send({ to: '+254712345678', text: 'Hi' })).resolves.toMatchObject({
      status: 'not-sent',
      reason: 'rejected',
      detail: "Africa's Talking accepted no recipient: InvalidSenderId",
    });
  });
});

describe('the http type against the gateway sandbox', () => {
  async function gateway(): Promise<RunningSandbox> {
    const sandbox = await startHttpGatewaySandbox({ apiKey: KEY });
    running.push(sandbox);
    return sandbox;
  }
  const http = (url: string, accepted?: number[]): SmsProvider => {
    const provider = createProvider(
      'gw',
      {
        type: 'http',
        url,
        headers: { 'X-API-Key': '{{ secret.gw-key }}' },
        body: HTTP_GATEWAY_BODY,
        ...(accepted === undefined ? {} : { accepted }),
      },
      { secret: (name) => (name === 'gw-key' ? KEY : undefined) },
    );
    running.push(provider);
    return provider;
  };

  it('renders the body with to and text as JSON strings, whatever the text holds', async () => {
    const sandbox = await gateway();
    const text = 'Quote " backslash \\ newline\n{{ not a tag }} ünï';
    await expect(http(`${sandbox.baseUrl}/api/v1/sms/send`).send({ to: '+256712345678', text })).resolves.toEqual({
      status: 'sent',
    });
    expect(sandbox.messages()).toMatchObject([{ phoneNumbers: ['+256712345678'], message: text }]);
  });

  it('takes only the accepted statuses as sent: another 2xx may have been sent', async () => {
    const sandbox = await gateway();
    await expect(
      http(`${sandbox.baseUrl}/api/v1/sms/send`, [202]).send({ to: '+256712345678', text: 'Hi' }),
    ).resolves.toEqual({
      status: 'maybe-sent',
      detail: 'gateway answered HTTP 200',
      code: 'unexpected-answer',
    });
  });

  it('says not sent, rejected, for a 404 (certainly not acted on), and maybe sent for a 408', async () => {
    const sandbox = await gateway();
    await expect(
      http(`${sandbox.baseUrl}/api/v1/sms/other`).send({ to: '+256712345678', text: 'Hi' }),
    ).resolves.toMatchObject({
      status: 'not-sent',
      reason: 'rejected',
    });
    sandbox.injectFault({ kind: 'status', status: 408 });
    await expect(
      http(`${sandbox.baseUrl}/api/v1/sms/send`).send({ to: '+256712345678', text: 'Hi' }),
    ).resolves.toMatchObject({
      status: 'maybe-sent',
      code: 'timeout',
    });
  });

  it('refuses to start without the secret value a template reads, naming it', () => {
    expect(() =>
      createProvider(
        'gw',
        { type: 'http', url: 'https://gw.example/send', headers: { 'X-API-Key': '{{ secret.gw-key }}' }, body: '{}' },
        { secret: () => undefined },
      ),
    ).toThrow(new ProviderConfigError('gw', ['the provider secret has no gw-key']));
  });
});
