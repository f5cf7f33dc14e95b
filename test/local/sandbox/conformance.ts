/**
 * A conformance suite for the bulk SMS service described in docs/sms-service.md, runnable against
 * anything that speaks it over HTTP and offers a way to set the balance and read delivered sends:
 * the in-process sandbox, the CLI-started sandbox, or any later stand-in.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveredMessage, RunningSandbox } from '../../../local/sandbox/types';

/** The side door a conformance run needs: the service's API has no way to top up or see what went out. */
export interface SandboxControl {
  setBalance(balance: number): Promise<void>;
  messages(): Promise<readonly DeliveredMessage[]>;
  clearMessages(): Promise<void>;
}

export interface ConformanceTarget {
  /** The service's {base_url}, without a trailing slash. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly control: SandboxControl;
  /** What the service was configured with, so answers can be checked exactly. */
  readonly account: {
    readonly currency: string;
    /** Pick a fractional rate such as 0.1: it is what exposes floating-point drift. */
    readonly rate: number;
    readonly approvedSenderIds: readonly string[];
    readonly defaultSenderId: string;
  };
}

export interface ApiResponse {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  readonly body: unknown;
}

export interface ApiCall {
  readonly method?: string;
  /** `null` sends no X-API-Key header at all. @default the target's key */
  readonly apiKey?: string | null;
  /** Serialised as JSON unless `rawBody` is given. */
  readonly body?: unknown;
  readonly rawBody?: string;
  /** @default 'application/json' when there is a body */
  readonly contentType?: string | null;
}

/**
 * One HTTP call to the service, with the body parsed when it is JSON.
 *
 * @example
 * const { status, body } = await callApi(target, '/v1/account/balance');
 */
export async function callApi(
  { baseUrl, apiKey: targetKey }: Pick<ConformanceTarget, 'baseUrl' | 'apiKey'>,
  path: string,
  { method = 'GET', apiKey = targetKey, body, rawBody, contentType = 'application/json' }: ApiCall = {},
): Promise<ApiResponse> {
  const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
  const headers: Record<string, string> = {};
  if (apiKey !== null) headers['x-api-key'] = apiKey;
  if (payload !== undefined && contentType !== null) headers['content-type'] = contentType;
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: payload });
  const text = await response.text();
  const responseType = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    contentType: responseType,
    text,
    body: responseType.includes('json') ? JSON.parse(text) : undefined,
  };
}

/**
 * Control through the `/_sandbox` endpoints: what a test needs when the sandbox runs in another process.
 *
 * @example
 * const control = httpControl('http://127.0.0.1:4010');
 * await control.setBalance(100);
 */
export function httpControl(baseUrl: string): SandboxControl {
  const control = async (path: string, init: RequestInit = {}): Promise<unknown> => {
    const response = await fetch(`${baseUrl}/_sandbox${path}`, init);
    if (!response.ok)
      throw new Error(`${init.method ?? 'GET'} /_sandbox${path} answered ${response.status}: ${await response.text()}`);
    return response.json();
  };
  return {
    setBalance: async (balance) => {
      await control('/balance', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ balance }),
      });
    },
    messages: async () => ((await control('/messages')) as { messages: DeliveredMessage[] }).messages,
    clearMessages: async () => {
      await control('/messages', { method: 'DELETE' });
    },
  };
}

/**
 * Control through the `RunningSandbox` object of an in-process sandbox.
 *
 * @example
 * const control = inProcessControl(await startSandbox({ apiKey: 'k' }));
 */
export function inProcessControl(sandbox: RunningSandbox): SandboxControl {
  return {
    setBalance: async (balance) => sandbox.setBalance(balance),
    messages: async () => sandbox.messages(),
    clearMessages: async () => sandbox.clearMessages(),
  };
}

export const VALID_NUMBERS = ['255712345678', '255754000111', '255689999999'] as const;
const [FIRST_NUMBER, SECOND_NUMBER, THIRD_NUMBER] = VALID_NUMBERS;
const START_BALANCE = 100;

/** Exact decimal arithmetic in 1/10 000 units, the precision the service's amounts are checked at. */
function expectedAfter(balance: number, recipients: number, rate: number): { deducted: number; remaining: number } {
  const units = (amount: number): number => Math.round(amount * 10_000);
  const deductedUnits = recipients * units(rate);
  return { deducted: deductedUnits / 10_000, remaining: (units(balance) - deductedUnits) / 10_000 };
}

/**
 * Registers the conformance suite. `getTarget` is called inside each test, so it may return a
 * target prepared in a `beforeAll`.
 *
 * @example
 * describeSmsServiceConformance('in-process sandbox', () => target);
 */
export function describeSmsServiceConformance(name: string, getTarget: () => ConformanceTarget): void {
  describe(`bulk SMS service conformance: ${name}`, () => {
    let target: ConformanceTarget;

    beforeEach(async () => {
      target = getTarget();
      await target.control.setBalance(START_BALANCE);
      await target.control.clearMessages();
    });

    const send = (body: unknown, call: ApiCall = {}): Promise<ApiResponse> =>
      callApi(target, '/v1/sms/send', { method: 'POST', body, ...call });
    const balanceEndpoint = (call: ApiCall = {}): Promise<ApiResponse> => callApi(target, '/v1/account/balance', call);
    const currentBalance = async (): Promise<number> => ((await balanceEndpoint()).body as { balance: number }).balance;

    /** docs/sms-service.md, Errors: every failure carries exactly `{ success: false, error: string }`, and never the key. */
    function expectErrorBody(response: ApiResponse, status: number): void {
      expect(response.status, response.text).toBe(status);
      expect(response.contentType).toMatch(/^application\/json/);
      expect(response.body).toEqual({ success: false, error: expect.any(String) });
      expect((response.body as { error: string }).error.length).toBeGreaterThan(0);
      expect(response.text).not.toContain(target.apiKey);
    }

    async function expectNothingHappened(): Promise<void> {
      expect(await currentBalance()).toBe(START_BALANCE);
      expect(await target.control.messages()).toEqual([]);
    }

    describe('authentication (docs/sms-service.md, Authentication)', () => {
      it.each([
        ['missing', null],
        ['wrong', 'not-the-key'],
        ['empty', ''],
        ['the key plus a character', undefined],
      ] as const)(
        'answers 401 with the error body on the balance endpoint when the key is %s',
        async (_case, apiKey) => {
          const presented = apiKey === undefined ? `${target.apiKey}x` : apiKey;
          const response = await balanceEndpoint({ apiKey: presented });
          expectErrorBody(response, 401);
          if (presented !== null && presented.length > 0) expect(response.text).not.toContain(presented);
        },
      );

      it.each([
        ['missing', null],
        ['wrong', 'not-the-key'],
        ['a prefix of the real key', undefined],
      ] as const)(
        'answers 401 on the send endpoint when the key is %s, sending and charging nothing',
        async (_case, apiKey) => {
          const presented = apiKey === undefined ? target.apiKey.slice(0, -1) : apiKey;
          const response = await send({ phoneNumbers: FIRST_NUMBER, message: 'Hello' }, { apiKey: presented });
          expectErrorBody(response, 401);
          await expectNothingHappened();
        },
      );

      it('checks the key before the parameters', async () => {
        expectErrorBody(await send({ phoneNumbers: 'nope' }, { apiKey: null }), 401);
        expectErrorBody(await send(undefined, { apiKey: 'wrong', rawBody: '{not json' }), 401);
      });

      it('checks the key on unknown /v1 paths too', async () => {
        expectErrorBody(await callApi(target, '/v1/unknown', { apiKey: null }), 401);
      });
    });

    describe('GET /v1/account/balance (docs/sms-service.md, Balance)', () => {
      it('answers 200 with success, balance, currency and smsRate', async () => {
        const response = await balanceEndpoint();
        expect(response.status).toBe(200);
        expect(response.contentType).toMatch(/^application\/json/);
        expect(response.body).toEqual({
          success: true,
          balance: START_BALANCE,
          currency: target.account.currency,
          smsRate: target.account.rate,
        });
      });

      it('reflects a top-up', async () => {
        await target.control.setBalance(2500.25);
        expect(await currentBalance()).toBe(2500.25);
      });
    });

    describe('POST /v1/sms/send: success (docs/sms-service.md, Send)', () => {
      it('accepts a single string as a one-element phoneNumbers array', async () => {
        const response = await send({ phoneNumbers: FIRST_NUMBER, message: 'Hello' });
        expect(response.status, response.text).toBe(200);
        const result = response.body as { recipients: unknown[] };
        expect(result.recipients).toHaveLength(1);
        const [delivered] = await target.control.messages();
        expect(delivered?.phoneNumbers).toEqual([FIRST_NUMBER]);
      });

      it('answers with every send-result field and deducts recipients × rate', async () => {
        const response = await send({ phoneNumbers: [...VALID_NUMBERS], message: 'Deploy finished' });
        expect(response.status, response.text).toBe(200);
        const { deducted, remaining } = expectedAfter(START_BALANCE, VALID_NUMBERS.length, target.account.rate);
        expect(response.body).toEqual({
          success: true,
          message: expect.any(String),
          senderId: target.account.defaultSenderId,
          recipients: VALID_NUMBERS.map((phoneNumber) => ({
            phoneNumber,
            status: 'queued',
            messageId: expect.any(String),
          })),
          deducted,
          remainingBalance: remaining,
        });
      });

      it('makes remainingBalance equal to what the balance endpoint then shows', async () => {
        const response = await send({ phoneNumbers: [FIRST_NUMBER, SECOND_NUMBER], message: 'Hi' });
        const { remainingBalance } = response.body as { remainingBalance: number };
        expect(await currentBalance()).toBe(remainingBalance);
      });

      it('keeps amounts exact over repeated fractional deductions', async () => {
        let balance = START_BALANCE;
        for (let round = 0; round < 7; round += 1) {
          const response = await send({ phoneNumbers: [...VALID_NUMBERS], message: `Round ${round}` });
          const { deducted, remaining } = expectedAfter(balance, VALID_NUMBERS.length, target.account.rate);
          expect(response.body).toMatchObject({ deducted, remainingBalance: remaining });
          balance = remaining;
        }
        expect(await currentBalance()).toBe(balance);
      });

      it('delivers exactly what was accepted', async () => {
        const senderId = target.account.approvedSenderIds.at(-1) ?? target.account.defaultSenderId;
        await send({ phoneNumbers: [FIRST_NUMBER, THIRD_NUMBER], message: 'Disk full on db-1', senderId });
        const messages = await target.control.messages();
        expect(messages).toHaveLength(1);
        expect(messages[0]).toMatchObject({
          phoneNumbers: [FIRST_NUMBER, THIRD_NUMBER],
          message: 'Disk full on db-1',
          senderId,
        });
      });

      it('uses the default sender ID when senderId is omitted', async () => {
        const response = await send({ phoneNumbers: FIRST_NUMBER, message: 'Hi' });
        expect(response.body).toMatchObject({ success: true, senderId: target.account.defaultSenderId });
      });

      it('uses an approved senderId as given', async () => {
        for (const senderId of target.account.approvedSenderIds) {
          const response = await send({ phoneNumbers: FIRST_NUMBER, message: 'Hi', senderId });
          expect(response.status, response.text).toBe(200);
          expect(response.body).toMatchObject({ senderId });
        }
      });

      it('accepts a message of exactly 160 characters', async () => {
        const response = await send({ phoneNumbers: FIRST_NUMBER, message: 'x'.repeat(160) });
        expect(response.status, response.text).toBe(200);
      });

      it('counts characters as UTF-16 code units: 80 emoji fit, 81 do not', async () => {
        expect((await send({ phoneNumbers: FIRST_NUMBER, message: '😀'.repeat(80) })).status).toBe(200);
        expectErrorBody(await send({ phoneNumbers: FIRST_NUMBER, message: '😀'.repeat(81) }), 400);
      });

      it('accepts a Content-Type with a charset parameter', async () => {
        const response = await send(
          { phoneNumbers: FIRST_NUMBER, message: 'Hi' },
          { contentType: 'application/json; charset=utf-8' },
        );
        expect(response.status, response.text).toBe(200);
      });

      it('spends the balance down to exactly zero', async () => {
        const { deducted } = expectedAfter(START_BALANCE, 2, target.account.rate);
        await target.control.setBalance(deducted);
        const response = await send({ phoneNumbers: [FIRST_NUMBER, SECOND_NUMBER], message: 'Hi' });
        expect(response.status, response.text).toBe(200);
        expect(response.body).toMatchObject({ deducted, remainingBalance: 0 });
        expect(await currentBalance()).toBe(0);
      });
    });

    describe('POST /v1/sms/send: invalid parameters → 400 (docs/sms-service.md, Send and Errors)', () => {
      const invalidBodies: readonly (readonly [string, unknown])[] = [
        ['phoneNumbers missing', { message: 'Hi' }],
        ['phoneNumbers an empty array', { phoneNumbers: [], message: 'Hi' }],
        ['phoneNumbers null', { phoneNumbers: null, message: 'Hi' }],
        ['phoneNumbers a number', { phoneNumbers: 255712345678, message: 'Hi' }],
        ['phoneNumbers an object', { phoneNumbers: { number: FIRST_NUMBER }, message: 'Hi' }],
        ['phoneNumbers holding a number', { phoneNumbers: [255712345678], message: 'Hi' }],
        ['phoneNumbers holding null', { phoneNumbers: [FIRST_NUMBER, null], message: 'Hi' }],
        ['a number with a plus sign', { phoneNumbers: '+255712345678', message: 'Hi' }],
        ['a national-format number', { phoneNumbers: '0712345678', message: 'Hi' }],
        ['a number one digit short', { phoneNumbers: '25571234567', message: 'Hi' }],
        ['a number one digit long', { phoneNumbers: '2557123456789', message: 'Hi' }],
        ['a number with spaces', { phoneNumbers: '255 712 345 678', message: 'Hi' }],
        ['a number with a letter', { phoneNumbers: '25571234567a', message: 'Hi' }],
        ['another country code', { phoneNumbers: '254712345678', message: 'Hi' }],
        ['a number with a trailing newline', { phoneNumbers: `${FIRST_NUMBER}\n`, message: 'Hi' }],
        ['an empty string number', { phoneNumbers: '', message: 'Hi' }],
        [
          'one invalid number among valid ones',
          { phoneNumbers: [FIRST_NUMBER, '0712345678', SECOND_NUMBER], message: 'Hi' },
        ],
        ['message missing', { phoneNumbers: FIRST_NUMBER }],
        ['message empty', { phoneNumbers: FIRST_NUMBER, message: '' }],
        ['message blank', { phoneNumbers: FIRST_NUMBER, message: ' \n ' }],
        ['message null', { phoneNumbers: FIRST_NUMBER, message: null }],
        ['message a number', { phoneNumbers: FIRST_NUMBER, message: 42 }],
        ['message of 161 characters', { phoneNumbers: FIRST_NUMBER, message: 'x'.repeat(161) }],
        ['senderId not approved', { phoneNumbers: FIRST_NUMBER, message: 'Hi', senderId: 'NOT-APPROVED-X' }],
        ['senderId empty', { phoneNumbers: FIRST_NUMBER, message: 'Hi', senderId: '' }],
        ['senderId a number', { phoneNumbers: FIRST_NUMBER, message: 'Hi', senderId: 7 }],
        ['senderId null', { phoneNumbers: FIRST_NUMBER, message: 'Hi', senderId: null }],
        ['the body an array', [{ phoneNumbers: FIRST_NUMBER, message: 'Hi' }]],
        ['the body a string', 'phoneNumbers=255712345678'],
        ['the body null', null],
      ];

      it.each(invalidBodies)(
        'answers 400 with the error body for %s, sending and charging nothing',
        async (_case, body) => {
          expectErrorBody(await send(body), 400);
          await expectNothingHappened();
        },
      );

      it.each([
        ['malformed JSON', { rawBody: '{"phoneNumbers": "255712345678", "message": ' }],
        ['an empty body', { rawBody: '' }],
        [
          'a text/plain Content-Type',
          { rawBody: JSON.stringify({ phoneNumbers: FIRST_NUMBER, message: 'Hi' }), contentType: 'text/plain' },
        ],
        [
          'a form Content-Type',
          { rawBody: 'phoneNumbers=255712345678&message=Hi', contentType: 'application/x-www-form-urlencoded' },
        ],
        [
          'no Content-Type',
          { rawBody: JSON.stringify({ phoneNumbers: FIRST_NUMBER, message: 'Hi' }), contentType: null },
        ],
      ] as const)('answers 400 with the error body for %s', async (_case, call) => {
        expectErrorBody(await send(undefined, call), 400);
        await expectNothingHappened();
      });

      it('answers 400, not 402, when the request is both invalid and unaffordable', async () => {
        await target.control.setBalance(0);
        expectErrorBody(await send({ phoneNumbers: '0712345678', message: 'Hi' }), 400);
      });

      it('never echoes the key, even when a client sends it in the wrong field', async () => {
        const response = await send({ phoneNumbers: [target.apiKey], message: 'Hi', senderId: target.apiKey });
        expectErrorBody(response, 400);
      });
    });

    describe('POST /v1/sms/send: insufficient balance → 402 (docs/sms-service.md, Send and Errors)', () => {
      it('answers 402 with the error body and leaves balance and inbox untouched', async () => {
        const { deducted: costOfThree } = expectedAfter(START_BALANCE, 3, target.account.rate);
        const { remaining: justShort } = expectedAfter(costOfThree, 1, 0.0001);
        await target.control.setBalance(justShort);
        expectErrorBody(await send({ phoneNumbers: [...VALID_NUMBERS], message: 'Hi' }), 402);
        expect(await currentBalance()).toBe(justShort);
        expect(await target.control.messages()).toEqual([]);
      });

      it('answers 402 on an empty balance', async () => {
        await target.control.setBalance(0);
        expectErrorBody(await send({ phoneNumbers: FIRST_NUMBER, message: 'Hi' }), 402);
        expect(await currentBalance()).toBe(0);
        expect(await target.control.messages()).toEqual([]);
      });
    });

    describe('other paths and methods', () => {
      it.each([
        ['GET', '/v1/sms/send'],
        ['PUT', '/v1/sms/send'],
        ['POST', '/v1/account/balance'],
        ['DELETE', '/v1/account/balance'],
      ])('answers 405 with the error body to %s %s', async (method, path) => {
        expectErrorBody(await callApi(target, path, { method }), 405);
        await expectNothingHappened();
      });

      it.each(['/v1/sms', '/v1/sms/send/extra', '/v1/account', '/v2/sms/send', '/'])(
        'answers 404 with the error body to %s',
        async (path) => {
          expectErrorBody(await callApi(target, path), 404);
        },
      );

      it('ignores a query string when routing', async () => {
        expect((await callApi(target, '/v1/account/balance?verbose=1')).status).toBe(200);
      });
    });
  });
}
