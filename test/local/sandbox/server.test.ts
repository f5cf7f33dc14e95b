import { Agent, request as httpRequest } from 'node:http';
import { createConnection } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidSandboxFaultError, InvalidSandboxOptionsError, SandboxStartError } from '../../../local/sandbox/errors';
import { startSandbox } from '../../../local/sandbox/server';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { waitUntil } from '../../helpers/wait';
import {
  callApi,
  describeSmsServiceConformance,
  inProcessControl,
  VALID_NUMBERS,
  type ConformanceTarget,
} from './conformance';

const API_KEY = 'sandbox-test-key-5f1c9e';
const ACCOUNT = { currency: 'TZS', rate: 0.1, senderIds: ['ACME', 'ALERTS'], defaultSenderId: 'ACME' } as const;
const [FIRST_NUMBER, SECOND_NUMBER] = VALID_NUMBERS;

function start(overrides: Partial<Parameters<typeof startSandbox>[0]> = {}): Promise<RunningSandbox> {
  return startSandbox({ apiKey: API_KEY, balance: 100, ...ACCOUNT, ...overrides });
}

describe('startSandbox', () => {
  describe('conformance', () => {
    let sandbox: RunningSandbox;
    beforeAll(async () => {
      sandbox = await start();
    });
    afterAll(async () => {
      await sandbox.close();
    });
    describeSmsServiceConformance(
      'in-process sandbox',
      (): ConformanceTarget => ({
        baseUrl: sandbox.baseUrl,
        apiKey: API_KEY,
        control: inProcessControl(sandbox),
        account: {
          currency: ACCOUNT.currency,
          rate: ACCOUNT.rate,
          approvedSenderIds: ACCOUNT.senderIds,
          defaultSenderId: ACCOUNT.defaultSenderId,
        },
      }),
    );
  });

  describe('options', () => {
    it('applies the documented defaults', async () => {
      const sandbox = await startSandbox({ apiKey: API_KEY });
      try {
        expect(sandbox.baseUrl).toBe(`http://127.0.0.1:${sandbox.port}`);
        expect(sandbox.port).toBeGreaterThan(0);
        const { body } = await callApi({ baseUrl: sandbox.baseUrl, apiKey: API_KEY }, '/v1/account/balance');
        expect(body).toEqual({ success: true, balance: 10_000, currency: 'TZS', smsRate: 20 });
        const account = await (await fetch(`${sandbox.baseUrl}/_sandbox/account`)).json();
        expect(account).toEqual({
          balance: 10_000,
          currency: 'TZS',
          smsRate: 20,
          senderIds: ['SANDBOX'],
          defaultSenderId: 'SANDBOX',
        });
      } finally {
        await sandbox.close();
      }
    });

    it.each([
      ['an empty apiKey', { apiKey: '' }],
      ['a negative balance', { balance: -1 }],
      ['a NaN rate', { rate: Number.NaN }],
      ['a rate with five decimals', { rate: 0.00001 }],
      ['a lower-case currency', { currency: 'tzs' }],
      ['no sender IDs', { senderIds: [] }],
      ['a blank sender ID', { senderIds: ['ACME', ' '] }],
      ['a port out of range', { port: 70_000 }],
    ])('rejects %s with InvalidSandboxOptionsError', async (_case, overrides) => {
      await expect(start(overrides)).rejects.toBeInstanceOf(InvalidSandboxOptionsError);
    });

    it('reports a port in use as SandboxStartError with the socket error as cause', async () => {
      const first = await start();
      try {
        const failure = await start({ port: first.port }).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(SandboxStartError);
        expect((failure as SandboxStartError).cause).toMatchObject({ code: 'EADDRINUSE' });
      } finally {
        await first.close();
      }
    });

    it('accepts the default sender ID explicitly even when it is not on the approved list', async () => {
      const sandbox = await start({ senderIds: ['ACME'], defaultSenderId: 'SMSRELAY' });
      try {
        const target = { baseUrl: sandbox.baseUrl, apiKey: API_KEY };
        const implicit = await callApi(target, '/v1/sms/send', {
          method: 'POST',
          body: { phoneNumbers: FIRST_NUMBER, message: 'Hi' },
        });
        expect(implicit.body).toMatchObject({ senderId: 'SMSRELAY' });
        const explicit = await callApi(target, '/v1/sms/send', {
          method: 'POST',
          body: { phoneNumbers: FIRST_NUMBER, message: 'Hi', senderId: 'SMSRELAY' },
        });
        expect(explicit.status).toBe(200);
      } finally {
        await sandbox.close();
      }
    });

    it('tells onDelivered about each accepted send, and a throwing observer changes nothing', async () => {
      const seen: string[] = [];
      const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      const sandbox = await start({
        onDelivered: (message) => {
          seen.push(message.message);
          throw new Error('observer broke');
        },
      });
      try {
        const response = await callApi({ baseUrl: sandbox.baseUrl, apiKey: API_KEY }, '/v1/sms/send', {
          method: 'POST',
          body: { phoneNumbers: FIRST_NUMBER, message: 'observed' },
        });
        expect(response.status).toBe(200);
        expect(seen).toEqual(['observed']);
        expect(sandbox.messages()).toHaveLength(1);
        expect(emitWarning).toHaveBeenCalledWith(expect.stringContaining('observer broke'));
      } finally {
        emitWarning.mockRestore();
        await sandbox.close();
      }
    });
  });

  describe('control and faults', () => {
    let sandbox: RunningSandbox;
    let target: { baseUrl: string; apiKey: string };
    const sendOne = (message = 'Hi', apiKey: string | null = API_KEY) =>
      callApi(target, '/v1/sms/send', {
        method: 'POST',
        apiKey,
        body: { phoneNumbers: [FIRST_NUMBER, SECOND_NUMBER], message },
      });
    const control = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> => {
      const response = await fetch(`${sandbox.baseUrl}/_sandbox${path}`, init);
      return { status: response.status, body: await response.json() };
    };
    const postJson = (body: unknown): RequestInit => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

    beforeEach(async () => {
      sandbox = await start({ balance: 10 });
      target = { baseUrl: sandbox.baseUrl, apiKey: API_KEY };
    });
    afterEach(async () => {
      await sandbox.close();
    });

    describe('status faults', () => {
      it('answers the fault status with the error body, delivering and charging nothing', async () => {
        sandbox.injectFault({ kind: 'status', status: 503 });
        const faulted = await sendOne();
        expect(faulted.status).toBe(503);
        expect(faulted.body).toEqual({ success: false, error: expect.stringContaining('503') });
        expect(sandbox.messages()).toEqual([]);
        expect(sandbox.balance()).toBe(10);
        expect((await sendOne()).status).toBe(200);
      });

      it('uses a custom error text', async () => {
        sandbox.injectFault({ kind: 'status', status: 500, error: 'Database unavailable' });
        expect((await sendOne()).body).toEqual({ success: false, error: 'Database unavailable' });
      });

      it('with deliver, sends and charges before answering the fault status', async () => {
        sandbox.injectFault({ kind: 'status', status: 502, deliver: true });
        const faulted = await sendOne('went out');
        expect(faulted.status).toBe(502);
        expect(sandbox.messages().map(({ message }) => message)).toEqual(['went out']);
        expect(sandbox.balance()).toBe(9.8);
        const { body } = await callApi(target, '/v1/account/balance');
        expect(body).toMatchObject({ balance: 9.8 });
      });

      it('with deliver, still answers the fault status for an invalid send, delivering nothing', async () => {
        sandbox.injectFault({ kind: 'status', status: 500, deliver: true });
        const response = await callApi(target, '/v1/sms/send', {
          method: 'POST',
          body: { phoneNumbers: 'nope', message: 'Hi' },
        });
        expect(response.status).toBe(500);
        expect(sandbox.messages()).toEqual([]);
        expect(sandbox.balance()).toBe(10);
      });

      it('serves count sends, then the next fault in FIFO order, then normal answers', async () => {
        sandbox.injectFault({ kind: 'status', status: 500, count: 2 });
        sandbox.injectFault({ kind: 'status', status: 429 });
        const statuses: number[] = [];
        for (let attempt = 0; attempt < 4; attempt += 1) statuses.push((await sendOne()).status);
        expect(statuses).toEqual([500, 500, 429, 200]);
      });

      it('is not consumed by an unauthenticated send nor by the balance endpoint', async () => {
        sandbox.injectFault({ kind: 'status', status: 503 });
        expect((await sendOne('Hi', null)).status).toBe(401);
        expect((await sendOne('Hi', 'wrong-key')).status).toBe(401);
        expect((await callApi(target, '/v1/account/balance')).status).toBe(200);
        expect((await sendOne()).status).toBe(503);
        expect((await sendOne()).status).toBe(200);
      });

      it('is cleared by clearFaults and by DELETE /_sandbox/faults', async () => {
        sandbox.injectFault({ kind: 'status', status: 503, count: 3 });
        sandbox.clearFaults();
        expect((await sendOne()).status).toBe(200);
        expect((await control('/faults', postJson({ kind: 'status', status: 503, count: 2 }))).body).toEqual({
          queued: 2,
        });
        expect((await control('/faults')).body).toEqual({ queued: 2 });
        expect((await control('/faults', { method: 'DELETE' })).body).toEqual({ cleared: 2 });
        expect((await sendOne()).status).toBe(200);
      });
    });

    describe('outage', () => {
      it('fails every /v1 request, the balance endpoint and a wrong key included, until DELETE; nothing delivered or charged', async () => {
        expect((await control('/outage')).body).toEqual({ down: false });
        const down = await control('/outage', postJson({ status: 502 }));
        expect(down).toMatchObject({
          status: 200,
          body: { down: true, kind: 'status', status: 502, since: expect.any(String) },
        });
        expect((await sendOne()).status).toBe(502);
        expect((await sendOne('Hi', 'wrong-key')).status).toBe(502);
        expect((await callApi(target, '/v1/account/balance')).status).toBe(502);
        expect(sandbox.messages()).toHaveLength(0);
        expect((await control('/outage', postJson({ kind: 'reset' }))).body).toMatchObject({
          down: true,
          kind: 'reset',
          status: 503,
        });
        await expect(callApi(target, '/v1/account/balance')).rejects.toThrow();
        expect((await control('/outage', { method: 'DELETE' })).body).toEqual({ down: false });
        expect((await callApi(target, '/v1/account/balance')).body).toMatchObject({ success: true, balance: 10 });
        expect((await sendOne()).status).toBe(200);
      });

      it('with only, fails one endpoint and leaves the other answering', async () => {
        expect((await control('/outage', postJson({ status: 503, only: 'balance' }))).body).toMatchObject({
          down: true,
          only: 'balance',
        });
        expect((await callApi(target, '/v1/account/balance')).status).toBe(503);
        expect((await sendOne()).status).toBe(200);
        await control('/outage', postJson({ status: 503, only: 'send' }));
        expect((await callApi(target, '/v1/account/balance')).status).toBe(200);
        expect((await sendOne()).status).toBe(503);
        await control('/outage', { method: 'DELETE' });
        expect((await sendOne()).status).toBe(200);
      });

      it('refuses an outage that is not a failure', async () => {
        expect((await control('/outage', postJson({ status: 200 }))).status).toBe(400);
        expect((await control('/outage', postJson({ kind: 'delay' }))).status).toBe(400);
        expect((await control('/outage')).body).toEqual({ down: false });
      });
    });

    describe('rate limit', () => {
      it('answers 429 with Retry-After: 1 past maxPerSecond sends in one second, delivering nothing; DELETE lifts it', async () => {
        expect((await control('/rate-limit')).body).toEqual({ maxPerSecond: null });
        expect((await control('/rate-limit', postJson({ maxPerSecond: 2 }))).body).toEqual({ maxPerSecond: 2 });
        // Sent together, so most land in one second; every second admits at most 2. (Counted by
        // the seconds the burst spanned: a send admitted at a second's end is stamped in the next.)
        const firstSecond = Math.floor(Date.now() / 1_000);
        const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => sendOne(`burst ${index}`)));
        const seconds = Math.floor(Date.now() / 1_000) - firstSecond + 1;
        const refused = answers.filter((answer) => answer.status === 429);
        expect(refused.length).toBeGreaterThan(0);
        const admitted = answers.filter((answer) => answer.status === 200);
        expect(admitted).toHaveLength(sandbox.messages().length);
        expect(admitted.length).toBeLessThanOrEqual(2 * seconds);
        expect((await control('/rate-limit', { method: 'DELETE' })).body).toEqual({ maxPerSecond: null });
      });

      it('sends Retry-After with a status fault that names it', async () => {
        sandbox.injectFault({ kind: 'status', status: 429, retryAfter: 5 });
        const response = await fetch(`${sandbox.baseUrl}/v1/sms/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
          body: JSON.stringify({ phoneNumbers: '255712345678', message: 'Hi' }),
        });
        expect(response.status).toBe(429);
        expect(response.headers.get('retry-after')).toBe('5');
      });
    });

    describe('delay faults', () => {
      it('holds the send for ms, then delivers and charges it normally', async () => {
        sandbox.injectFault({ kind: 'delay', ms: 400 });
        const startedAt = performance.now();
        const response = await sendOne();
        expect(performance.now() - startedAt).toBeGreaterThanOrEqual(380);
        expect(response.status).toBe(200);
        expect(sandbox.messages()).toHaveLength(1);
        const quickStart = performance.now();
        await sendOne();
        expect(performance.now() - quickStart).toBeLessThan(380);
      });

      it('does not hold up close()', async () => {
        sandbox.injectFault({ kind: 'delay', ms: 60_000 });
        const pending = sendOne().catch((error: unknown) => error);
        // The fault is taken once the send is in hand: from then on the server is holding it.
        await waitUntil(
          'the queued faults to be used up',
          async () => ((await control('/faults')).body as { queued: number }).queued === 0,
        );
        const closeStartedAt = performance.now();
        await sandbox.close();
        expect(performance.now() - closeStartedAt).toBeLessThan(1_000);
        expect(await pending).toBeInstanceOf(Error);
        expect(sandbox.messages()).toEqual([]);
      });
    });

    describe('reset faults', () => {
      it('drops the connection without delivering or charging', async () => {
        sandbox.injectFault({ kind: 'reset' });
        const failure = await sendOne().catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(TypeError);
        expect(sandbox.messages()).toEqual([]);
        expect(sandbox.balance()).toBe(10);
        expect(sandbox.requests().at(-1)).toMatchObject({ method: 'POST', path: '/v1/sms/send', status: 0 });
        expect((await sendOne()).status).toBe(200);
      });

      it('with deliver, delivers and charges before dropping the connection', async () => {
        sandbox.injectFault({ kind: 'reset', deliver: true });
        const failure = await sendOne('went out').catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(TypeError);
        expect(sandbox.messages().map(({ message }) => message)).toEqual(['went out']);
        expect(sandbox.balance()).toBe(9.8);
      });
    });

    describe('control endpoints', () => {
      it('rejects an invalid fault in process and over HTTP', async () => {
        expect(() => sandbox.injectFault({ kind: 'status', status: 200 })).toThrow(InvalidSandboxFaultError);
        expect(() => sandbox.injectFault({ kind: 'delay', ms: -1 })).toThrow(InvalidSandboxFaultError);
        for (const fault of [
          { kind: 'status', status: 200 },
          { kind: 'explode' },
          { kind: 'reset', count: 0 },
          { kind: 'delay' },
        ]) {
          const response = await control('/faults', postJson(fault));
          expect(response.status).toBe(400);
          expect(response.body).toEqual({ success: false, error: expect.any(String) });
        }
        expect((await control('/faults', { method: 'POST', body: '{oops' })).status).toBe(400);
        expect((await sendOne()).status).toBe(200);
      });

      it('tops up the balance in process and over HTTP', async () => {
        sandbox.setBalance(0);
        expect((await sendOne()).status).toBe(402);
        sandbox.setBalance(0.2);
        expect((await sendOne()).status).toBe(200);
        expect(sandbox.balance()).toBe(0);
        const topUp = await control('/balance', postJson({ balance: 55.5 }));
        expect(topUp.body).toEqual({
          balance: 55.5,
          currency: 'TZS',
          smsRate: 0.1,
          senderIds: ['ACME', 'ALERTS'],
          defaultSenderId: 'ACME',
        });
        expect((await callApi(target, '/v1/account/balance')).body).toMatchObject({ balance: 55.5 });
        for (const body of [{ balance: -5 }, { balance: '5' }, { balance: 1.00001 }, {}, { balance: 5, extra: true }]) {
          expect((await control('/balance', postJson(body))).status).toBe(400);
        }
        expect(() => sandbox.setBalance(Number.POSITIVE_INFINITY)).toThrow(InvalidSandboxOptionsError);
        expect(sandbox.balance()).toBe(55.5);
      });

      it('lists and clears the inbox in process and over HTTP', async () => {
        await sendOne('first');
        await sendOne('second');
        const listed = (await control('/messages')).body as { messages: { message: string; recipients: unknown[] }[] };
        expect(listed.messages.map(({ message }) => message)).toEqual(['first', 'second']);
        expect(listed.messages[0]).toEqual(sandbox.messages()[0]);
        expect(listed.messages[0]?.recipients).toHaveLength(2);
        expect((await control('/messages', { method: 'DELETE' })).body).toEqual({ cleared: 2 });
        expect(sandbox.messages()).toEqual([]);
        await sendOne('third');
        sandbox.clearMessages();
        expect(sandbox.messages()).toEqual([]);
      });

      it('logs every /v1 request with its status and headers, never the key', async () => {
        await callApi(target, '/v1/account/balance');
        await sendOne('Hi', 'wrong-key-123');
        await callApi(target, '/v1/nowhere');
        await sendOne();
        await control('/account');
        const logged = (await control('/requests')).body as {
          requests: { method: string; path: string; status: number }[];
        };
        expect(logged.requests.map(({ method, path, status }) => `${method} ${path} ${status}`)).toEqual([
          'GET /v1/account/balance 200',
          'POST /v1/sms/send 401',
          'GET /v1/nowhere 404',
          'POST /v1/sms/send 200',
        ]);
        expect(logged.requests).toEqual(sandbox.requests());
        expect(sandbox.requests()[3]?.headers).toMatchObject({ 'content-type': 'application/json' });
        const serialised = JSON.stringify(logged);
        expect(serialised).not.toContain(API_KEY);
        expect(serialised).not.toContain('wrong-key-123');
        expect(serialised).not.toContain('x-api-key');
        expect((await control('/requests', { method: 'DELETE' })).body).toEqual({ cleared: 4 });
        sandbox.clearRequests();
        expect(sandbox.requests()).toEqual([]);
      });

      it('answers unknown control paths with 404 and wrong methods with 405 and Allow', async () => {
        expect((await control('/nothing')).status).toBe(404);
        const response = await fetch(`${sandbox.baseUrl}/_sandbox/account`, { method: 'DELETE' });
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('GET');
        expect(await response.json()).toEqual({ success: false, error: expect.any(String) });
      });

      it('refuses a cross-site control request and a control POST that is not JSON, changing nothing', async () => {
        const zero = JSON.stringify({ balance: 0 });
        const fault = JSON.stringify({ kind: 'status', status: 503, count: 5 });
        // What a page of another site can make the browser send without a preflight: a text/plain POST.
        const forged: { path: string; headers: Record<string, string>; body: string }[] = [
          {
            path: '/balance',
            headers: { 'content-type': 'text/plain', origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
            body: zero,
          },
          {
            path: '/faults',
            headers: { 'content-type': 'text/plain', origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
            body: fault,
          },
          { path: '/balance', headers: { 'content-type': 'text/plain', 'sec-fetch-site': 'cross-site' }, body: zero },
          { path: '/balance', headers: { 'content-type': 'application/json', origin: 'null' }, body: zero },
        ];
        for (const { path, headers, body } of forged) {
          const answer = await control(path, { method: 'POST', headers, body });
          expect({ path, headers, ...answer }).toEqual({
            path,
            headers,
            status: 403,
            body: { success: false, error: expect.stringMatching(/^(foreign origin|cross-site request)/) },
          });
        }
        // From this machine but not JSON (curl's default form type, or none): refused too.
        for (const type of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
          const answer = await control('/balance', {
            method: 'POST',
            ...(type === undefined ? {} : { headers: { 'content-type': type } }),
            body: zero,
          });
          expect({ type, ...answer }).toEqual({
            type,
            status: 400,
            body: { success: false, error: 'Content-Type must be application/json' },
          });
        }
        expect(sandbox.balance()).toBe(10);
        expect((await control('/faults')).body).toEqual({ queued: 0 });
        expect((await sendOne()).status).toBe(200);
        // The same origin (the sandbox's own page, a tool) still tops up.
        const sameOrigin = await control('/balance', {
          method: 'POST',
          headers: {
            'content-type': 'application/json; charset=utf-8',
            origin: sandbox.baseUrl,
            'sec-fetch-site': 'same-origin',
          },
          body: JSON.stringify({ balance: 50 }),
        });
        expect(sameOrigin.status).toBe(200);
        expect(sandbox.balance()).toBe(50);
      });

      it('answers an oversized body with 413 and the error body', async () => {
        const response = await callApi(target, '/v1/sms/send', {
          method: 'POST',
          rawBody: `"${'x'.repeat(1024 * 1024 + 10)}"`,
        });
        expect(response.status).toBe(413);
        expect(response.body).toEqual({ success: false, error: expect.any(String) });
      });
    });

    describe('connections', () => {
      it('serves many requests, errors included, over one keep-alive connection', async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          const ports = new Set<number>();
          const statuses: number[] = [];
          const cases = [
            { method: 'GET', path: '/v1/account/balance', key: API_KEY, body: undefined },
            {
              method: 'POST',
              path: '/v1/sms/send',
              key: 'wrong',
              body: '{"phoneNumbers":"255712345678","message":"Hi"}',
            },
            { method: 'POST', path: '/v1/sms/send', key: API_KEY, body: '{"phoneNumbers":"bad","message":"Hi"}' },
            {
              method: 'POST',
              path: '/v1/sms/send',
              key: API_KEY,
              body: '{"phoneNumbers":"255712345678","message":"Hi"}',
            },
            { method: 'GET', path: '/v1/missing', key: API_KEY, body: undefined },
            { method: 'GET', path: '/v1/account/balance', key: API_KEY, body: undefined },
          ];
          for (const { method, path, key, body } of cases) {
            const { status, localPort } = await rawRequest(agent, `${sandbox.baseUrl}${path}`, method, key, body);
            statuses.push(status);
            ports.add(localPort);
          }
          expect(statuses).toEqual([200, 401, 400, 200, 404, 200]);
          expect(ports.size).toBe(1);
        } finally {
          agent.destroy();
        }
      });

      it('closes promptly while a client holds an idle keep-alive connection', async () => {
        const agent = new Agent({ keepAlive: true });
        try {
          await rawRequest(agent, `${sandbox.baseUrl}/v1/account/balance`, 'GET', API_KEY, undefined);
          const closeStartedAt = performance.now();
          await sandbox.close();
          expect(performance.now() - closeStartedAt).toBeLessThan(1_000);
          await expect(fetch(`${sandbox.baseUrl}/v1/account/balance`)).rejects.toThrow();
        } finally {
          agent.destroy();
        }
      });

      it('closes promptly while a client is still sending a request body', async () => {
        const connection = createConnection({ host: '127.0.0.1', port: sandbox.port });
        connection.on('error', () => undefined);
        await new Promise<void>((resolve) => connection.once('connect', resolve));
        const closedByServer = new Promise<void>((resolve) => connection.once('close', () => resolve()));
        connection.write(
          `POST /v1/sms/send HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${API_KEY}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"phoneNumbers":',
        );
        // Give the server time to parse the headers and start waiting for the rest of the body.
        await new Promise((resolve) => setTimeout(resolve, 150));
        const closeStartedAt = performance.now();
        await sandbox.close();
        expect(performance.now() - closeStartedAt).toBeLessThan(1_000);
        await closedByServer;
        expect(sandbox.messages()).toEqual([]);
      });

      it('lets close() be called twice', async () => {
        await sandbox.close();
        await expect(sandbox.close()).resolves.toBeUndefined();
      });
    });
  });
});

/** A request on a given agent, reporting which local port (so which connection) carried it. */
function rawRequest(
  agent: Agent,
  url: string,
  method: string,
  apiKey: string,
  body: string | undefined,
): Promise<{ status: number; localPort: number }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method, agent, headers: { 'x-api-key': apiKey, 'content-type': 'application/json' } },
      (response) => {
        const localPort = response.socket.localPort ?? -1;
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, localPort }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
