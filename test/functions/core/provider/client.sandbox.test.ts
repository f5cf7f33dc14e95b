import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSmsClient, SendCertainty, SmsErrorCode, type SmsClient } from '../../../../functions/core/provider';
import { startSandbox } from '../../../../local/sandbox/server';
import type { RunningSandbox } from '../../../../local/sandbox/types';
import { API_KEY, rejectionOf, startCountingProxy } from './support';

const DEFAULT_SENDER = 'RELAYDEF';

let sandbox: RunningSandbox;
let client: SmsClient;

beforeEach(async () => {
  sandbox = await startSandbox({
    apiKey: API_KEY,
    balance: 100,
    rate: 2,
    senderIds: ['ACME', DEFAULT_SENDER],
    defaultSenderId: DEFAULT_SENDER,
  });
  client = createSmsClient({ baseUrl: sandbox.baseUrl, apiKey: API_KEY });
});

afterEach(async () => {
  client.close();
  await sandbox.close();
});

describe('getBalance', () => {
  it('returns the typed balance', async () => {
    await expect(client.getBalance()).resolves.toEqual({ success: true, balance: 100, currency: 'TZS', smsRate: 2 });
  });

  it('maps a wrong key to unauthorized, not-sent, without leaking the key', async () => {
    const wrongKey = 'sk_live_wrong-key-7777777777';
    const wrong = createSmsClient({ baseUrl: sandbox.baseUrl, apiKey: wrongKey });
    try {
      const error = await rejectionOf(wrong.getBalance(), wrongKey);
      expect(error).toMatchObject({ code: SmsErrorCode.UNAUTHORIZED });
      expect(error).toMatchObject({ status: 401, delivery: SendCertainty.NOT_SENT, operation: 'balance' });
      expect(error.serviceError).toEqual(expect.any(String));
    } finally {
      wrong.close();
    }
  });
});

describe('send', () => {
  it('sends to an array and returns the service result, recipients untouched', async () => {
    const result = await client.send({
      phoneNumbers: ['255712345678', '255687654321'],
      message: 'Order 42 shipped',
      senderId: 'ACME',
    });
    const [delivered] = sandbox.messages();
    expect(sandbox.messages()).toHaveLength(1);
    expect(delivered).toMatchObject({
      phoneNumbers: ['255712345678', '255687654321'],
      message: 'Order 42 shipped',
      senderId: 'ACME',
    });
    expect(result).toEqual({
      success: true,
      message: expect.any(String),
      senderId: 'ACME',
      recipients: delivered?.recipients,
      deducted: 4,
      remainingBalance: 96,
    });
    expect(sandbox.balance()).toBe(96);
  });

  it('sends a single string as one recipient', async () => {
    const result = await client.send({ phoneNumbers: '255712345678', message: 'Hi' });
    expect(sandbox.messages().map((message) => message.phoneNumbers)).toEqual([['255712345678']]);
    expect(result.recipients).toHaveLength(1);
    expect(result.deducted).toBe(2);
  });

  it('omits senderId so the service default applies', async () => {
    const result = await client.send({ phoneNumbers: '255712345678', message: 'Hi' });
    expect(result.senderId).toBe(DEFAULT_SENDER);
    expect(sandbox.messages()[0]?.senderId).toBe(DEFAULT_SENDER);
  });

  it('sends JSON with the documented headers', async () => {
    await client.send({ phoneNumbers: '255712345678', message: 'Hi' });
    expect(sandbox.requests()).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/v1/sms/send',
        status: 200,
        headers: expect.objectContaining({ 'content-type': 'application/json' }),
      }),
    ]);
  });

  it('maps an unapproved sender ID to a bad request, not-sent, with the service text', async () => {
    const error = await rejectionOf(
      client.send({ phoneNumbers: '255712345678', message: 'Hi', senderId: 'NOTAPPROVED' }),
    );
    expect(error).toMatchObject({ code: SmsErrorCode.BAD_REQUEST });
    expect(error).toMatchObject({ status: 400, delivery: SendCertainty.NOT_SENT, operation: 'send' });
    expect(error.serviceError).toMatch(/sender/i);
    expect(sandbox.messages()).toEqual([]);
  });

  it('maps a wrong key to unauthorized, not-sent, and never leaks the key', async () => {
    const wrongKey = 'sk_live_wrong-key-7777777777';
    const wrong = createSmsClient({ baseUrl: sandbox.baseUrl, apiKey: wrongKey });
    try {
      const error = await rejectionOf(wrong.send({ phoneNumbers: '255712345678', message: 'Hi' }), wrongKey);
      expect(error).toMatchObject({ code: SmsErrorCode.UNAUTHORIZED });
      expect(error).toMatchObject({ status: 401, delivery: SendCertainty.NOT_SENT });
      expect(sandbox.messages()).toEqual([]);
    } finally {
      wrong.close();
    }
  });

  it('maps an uncovered send to insufficient balance, not-sent', async () => {
    sandbox.setBalance(3);
    const error = await rejectionOf(client.send({ phoneNumbers: ['255712345678', '255687654321'], message: 'Hi' }));
    expect(error).toMatchObject({ code: SmsErrorCode.INSUFFICIENT_BALANCE });
    expect(error).toMatchObject({ status: 402, delivery: SendCertainty.NOT_SENT });
    expect(sandbox.messages()).toEqual([]);
    expect(sandbox.balance()).toBe(3);
  });

  it('maps a 5xx to a server error, maybe-sent, even when the SMS really went out', async () => {
    sandbox.injectFault({ kind: 'status', status: 502, deliver: true, error: 'upstream hiccup' });
    const error = await rejectionOf(client.send({ phoneNumbers: '255712345678', message: 'Hi' }));
    expect(error).toMatchObject({ code: SmsErrorCode.SERVER_ERROR });
    expect(error).toMatchObject({ status: 502, serviceError: 'upstream hiccup', delivery: SendCertainty.MAYBE_SENT });
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('maps a 429 to rate-limited, not-sent, with the wait its Retry-After asks for', async () => {
    sandbox.injectFault({ kind: 'status', status: 429, retryAfter: 3, error: 'slow down' });
    const error = await rejectionOf(client.send({ phoneNumbers: '255712345678', message: 'Hi' }));
    expect(error).toMatchObject({ code: SmsErrorCode.RATE_LIMITED, status: 429, delivery: SendCertainty.NOT_SENT });
    expect(error.retryAfterMs).toBe(3_000);
    expect(sandbox.messages()).toEqual([]);
  });

  it('maps a 429 without Retry-After to a wait of 1 s', async () => {
    sandbox.injectFault({ kind: 'status', status: 429 });
    const error = await rejectionOf(client.send({ phoneNumbers: '255712345678', message: 'Hi' }));
    expect(error).toMatchObject({
      code: SmsErrorCode.RATE_LIMITED,
      retryAfterMs: 1_000,
      delivery: SendCertainty.NOT_SENT,
    });
  });

  it('maps a 500 that sent nothing to maybe-sent too: the client cannot tell', async () => {
    sandbox.injectFault({ kind: 'status', status: 500 });
    const error = await rejectionOf(client.send({ phoneNumbers: '255712345678', message: 'Hi' }));
    expect(error).toMatchObject({ code: SmsErrorCode.SERVER_ERROR });
    expect(error.delivery).toBe(SendCertainty.MAYBE_SENT);
  });

  it('times out waiting for the answer as maybe-sent, and the held SMS does go out', async () => {
    const quick = createSmsClient({ baseUrl: sandbox.baseUrl, apiKey: API_KEY, timeoutMs: 200 });
    try {
      sandbox.injectFault({ kind: 'delay', ms: 1_500 });
      const error = await rejectionOf(quick.send({ phoneNumbers: '255712345678', message: 'Hi' }));
      expect(error).toMatchObject({
        code: SmsErrorCode.TIMEOUT,
        message: expect.stringContaining('after 200 ms in the response phase'),
      });
      expect(error).toMatchObject({ delivery: SendCertainty.MAYBE_SENT });
      await vi.waitFor(() => expect(sandbox.messages()).toHaveLength(1), { timeout: 10_000, interval: 50 });
    } finally {
      quick.close();
    }
  });

  it('takes a per-call time-out over the client one', async () => {
    sandbox.injectFault({ kind: 'delay', ms: 1_500 });
    const error = await rejectionOf(client.send({ phoneNumbers: '255712345678', message: 'Hi' }, { timeoutMs: 200 }));
    expect(error).toMatchObject({ code: SmsErrorCode.TIMEOUT, message: expect.stringContaining('after 200 ms') });
  });

  it.each([false, true])('maps a reset (deliver: %s) to a reset, maybe-sent', async (deliver) => {
    sandbox.injectFault({ kind: 'reset', deliver });
    const error = await rejectionOf(client.send({ phoneNumbers: '255712345678', message: 'Hi' }));
    expect(error).toMatchObject({ code: SmsErrorCode.RESET });
    expect(error).toMatchObject({ systemCode: 'ECONNRESET', delivery: SendCertainty.MAYBE_SENT, status: undefined });
    expect(error.message).not.toContain('reused');
    expect(sandbox.messages()).toHaveLength(deliver ? 1 : 0);
  });

  it('makes no request at all for invalid input', async () => {
    for (const request of [
      { phoneNumbers: '+255712345678', message: 'Hi' },
      { phoneNumbers: [], message: 'Hi' },
      { phoneNumbers: '255712345678', message: '' },
      { phoneNumbers: '255712345678', message: 'x'.repeat(161) },
      { phoneNumbers: '255712345678', message: 'Hi', senderId: '' },
    ]) {
      const error = await rejectionOf(client.send(request));
      expect(error).toMatchObject({ code: SmsErrorCode.VALIDATION });
      expect(error.delivery).toBe(SendCertainty.NOT_SENT);
    }
    expect(sandbox.requests()).toEqual([]);
    expect(sandbox.messages()).toEqual([]);
  });

  it('rejects a bad per-call time-out without a request', async () => {
    const error = await rejectionOf(client.send({ phoneNumbers: '255712345678', message: 'Hi' }, { timeoutMs: -5 }));
    expect(error).toMatchObject({ code: SmsErrorCode.VALIDATION });
    expect(sandbox.requests()).toEqual([]);
  });
});

describe('connection pool', () => {
  it('carries sequential calls over one keep-alive connection', async () => {
    const proxy = await startCountingProxy(sandbox.port);
    const pooled = createSmsClient({ baseUrl: proxy.baseUrl, apiKey: API_KEY });
    try {
      await pooled.getBalance();
      await pooled.send({ phoneNumbers: '255712345678', message: 'one' });
      await pooled.send({ phoneNumbers: '255712345678', message: 'two' });
      await pooled.getBalance();
      expect(proxy.connections()).toBe(1);
      expect(sandbox.messages()).toHaveLength(2);
    } finally {
      pooled.close();
      await proxy.close();
    }
  });

  it('holds the key where no inspection or serialisation of the client reaches it', () => {
    expect(inspect(client, { depth: Infinity, showHidden: true })).not.toContain(API_KEY);
    expect(JSON.stringify(client)).not.toContain(API_KEY);
    expect(Object.isFrozen(client)).toBe(true);
  });

  it('fails calls after close() without a request', async () => {
    client.close();
    client.close();
    const error = await rejectionOf(client.send({ phoneNumbers: '255712345678', message: 'Hi' }));
    expect(error).toMatchObject({ code: SmsErrorCode.CLIENT_CLOSED });
    expect(error.delivery).toBe(SendCertainty.NOT_SENT);
    await expect(client.getBalance()).rejects.toMatchObject({ code: SmsErrorCode.CLIENT_CLOSED });
    expect(sandbox.requests()).toEqual([]);
  });
});
