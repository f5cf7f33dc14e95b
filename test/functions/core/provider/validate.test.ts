import { describe, expect, it } from 'vitest';
import {
  createSmsClient,
  describeSmsError,
  MAX_MESSAGE_LENGTH,
  SmsClientConfigError,
  SendCertainty,
  SmsErrorCode,
  SmsOperation,
  SmsServiceError,
  validateSendRequest,
} from '../../../../functions/core/provider';
import { sendCertaintyOf } from '../../../../functions/core/provider/transport';
import { parseBalance, parseSendResult, resolveClientOptions } from '../../../../functions/core/provider/validate';
import { API_KEY, expectNoSecret } from './support';

function validationIssues(request: unknown): readonly string[] {
  try {
    validateSendRequest(request);
  } catch (error) {
    expect(error).toBeInstanceOf(SmsServiceError);
    const validation = error as SmsServiceError;
    expect(validation.code).toBe(SmsErrorCode.VALIDATION);
    expect(validation.delivery).toBe(SendCertainty.NOT_SENT);
    return validation.issues ?? [];
  }
  throw new Error('expected a validation error');
}

describe('validateSendRequest', () => {
  it('takes a single string as one recipient and normalises it to a one-element array', () => {
    expect(validateSendRequest({ phoneNumbers: '255712345678', message: 'Hi' })).toEqual({
      phoneNumbers: ['255712345678'],
      message: 'Hi',
      senderId: undefined,
    });
  });

  it('keeps an array and a given senderId', () => {
    expect(
      validateSendRequest({ phoneNumbers: ['255712345678', '255687654321'], message: 'Hi', senderId: 'ACME' }),
    ).toEqual({
      phoneNumbers: ['255712345678', '255687654321'],
      message: 'Hi',
      senderId: 'ACME',
    });
  });

  it.each([
    ['a plus sign', '+255712345678'],
    ['another country code', '254712345678'],
    ['eight digits after 255', '25571234567'],
    ['ten digits after 255', '2557123456789'],
    ['spaces', '255 712 345 678'],
    ['non-ASCII digits', '２５５７１２３４５６７８'],
    ['a trailing newline', '255712345678\n'],
  ])('rejects a number with %s, without echoing it', (_label, number) => {
    const issues = validationIssues({ phoneNumbers: [number], message: 'Hi' });
    expect(issues).toEqual(['phoneNumbers[0] must be 255 followed by nine digits']);
    expect(issues.join()).not.toContain(number.trim());
  });

  it('rejects an empty list, a non-string element, a duplicate and a wrong type', () => {
    expect(validationIssues({ phoneNumbers: [], message: 'Hi' })).toEqual([
      'phoneNumbers must list at least one recipient',
    ]);
    expect(validationIssues({ phoneNumbers: ['255712345678', 255712345678], message: 'Hi' })).toEqual([
      'phoneNumbers[1] must be 255 followed by nine digits',
    ]);
    expect(validationIssues({ phoneNumbers: ['255712345678', '255712345678'], message: 'Hi' })).toEqual([
      'phoneNumbers[1] repeats phoneNumbers[0]',
    ]);
    expect(validationIssues({ phoneNumbers: { 0: '255712345678' }, message: 'Hi' })).toEqual([
      'phoneNumbers must be a string or an array of strings',
    ]);
    expect(validationIssues({ phoneNumbers: '0712345678', message: 'Hi' })).toEqual([
      'phoneNumbers must be 255 followed by nine digits',
    ]);
  });

  it('counts the message in UTF-16 code units: 160 passes, 161 does not, an emoji counts two', () => {
    expect(
      validateSendRequest({ phoneNumbers: '255712345678', message: 'x'.repeat(MAX_MESSAGE_LENGTH) }).message,
    ).toHaveLength(160);
    expect(validationIssues({ phoneNumbers: '255712345678', message: 'x'.repeat(161) })).toEqual([
      'message is 161 UTF-16 code units long, at most 160 are allowed',
    ]);
    expect(validateSendRequest({ phoneNumbers: '255712345678', message: '😀'.repeat(80) }).message).toHaveLength(160);
    expect(validationIssues({ phoneNumbers: '255712345678', message: `${'😀'.repeat(80)}x` })).toHaveLength(1);
  });

  it('rejects an empty, blank, non-string or malformed message', () => {
    expect(validationIssues({ phoneNumbers: '255712345678', message: '' })).toEqual([
      'message must not be empty or blank',
    ]);
    expect(validationIssues({ phoneNumbers: '255712345678', message: ' \n\t' })).toEqual([
      'message must not be empty or blank',
    ]);
    expect(validationIssues({ phoneNumbers: '255712345678', message: 42 })).toEqual(['message must be a string']);
    expect(validationIssues({ phoneNumbers: '255712345678' })).toEqual(['message must be a string']);
    expect(validationIssues({ phoneNumbers: '255712345678', message: 'half \ud83d pair' })).toEqual([
      'message contains an unpaired UTF-16 surrogate',
    ]);
  });

  it('rejects a blank or non-string senderId but accepts it absent', () => {
    expect(validationIssues({ phoneNumbers: '255712345678', message: 'Hi', senderId: '' })).toEqual([
      'senderId must be a non-blank string when given',
    ]);
    expect(validationIssues({ phoneNumbers: '255712345678', message: 'Hi', senderId: null })).toHaveLength(1);
    expect(
      validateSendRequest({ phoneNumbers: '255712345678', message: 'Hi', senderId: undefined }).senderId,
    ).toBeUndefined();
  });

  it('reports every problem at once, and a non-object request', () => {
    expect(validationIssues({ phoneNumbers: [], message: '' })).toHaveLength(2);
    expect(validationIssues(null)).toEqual(['request must be an object']);
    expect(validationIssues('255712345678')).toEqual(['request must be an object']);
  });
});

describe('resolveClientOptions', () => {
  it('splits the base URL into host, port and a path prefix without trailing slashes', () => {
    expect(resolveClientOptions({ baseUrl: 'https://sms.example/api/', apiKey: API_KEY })).toMatchObject({
      tls: true,
      hostname: 'sms.example',
      port: 443,
      pathPrefix: '/api',
      timeoutMs: 10_000,
    });
    expect(resolveClientOptions({ baseUrl: 'http://127.0.0.1:8080', apiKey: API_KEY })).toMatchObject({
      tls: false,
      hostname: '127.0.0.1',
      port: 8080,
      pathPrefix: '',
    });
    expect(resolveClientOptions({ baseUrl: 'http://[::1]:9000//', apiKey: API_KEY })).toMatchObject({
      hostname: '::1',
      pathPrefix: '',
    });
  });

  it.each([
    ['ftp://sms.example', 'baseUrl must use http: or https:'],
    ['sms.example/v1', 'baseUrl is not a valid absolute URL'],
    ['https://sms.example/?x=1', 'baseUrl must not have a query or fragment'],
    ['', 'baseUrl must be a non-empty string'],
  ])('rejects baseUrl %j', (baseUrl, problem) => {
    expect(() => resolveClientOptions({ baseUrl, apiKey: API_KEY })).toThrow(problem);
  });

  it('never puts the key or URL credentials into its error', () => {
    const errors: unknown[] = [];
    for (const options of [
      { baseUrl: `https://user:${API_KEY}@sms.example`, apiKey: 'k' },
      { baseUrl: `not a url ${API_KEY}`, apiKey: 'k' },
      { baseUrl: 'https://sms.example', apiKey: `${API_KEY}\n` },
      { baseUrl: 'https://sms.example', apiKey: ` ${API_KEY}` },
    ]) {
      try {
        createSmsClient(options);
      } catch (error) {
        errors.push(error);
      }
    }
    expect(errors).toHaveLength(4);
    for (const error of errors) {
      expect(error).toBeInstanceOf(SmsClientConfigError);
      expectNoSecret(error);
    }
  });

  it('rejects bad time-outs and an empty key, all at once', () => {
    expect(() =>
      resolveClientOptions({
        baseUrl: 'https://sms.example',
        apiKey: '',
        timeoutMs: 0,
        userAgent: '',
        keepAliveMs: -1,
      }),
    ).toThrow(
      expect.objectContaining({
        problems: [
          'apiKey must be a non-empty string of printable ASCII without surrounding spaces',
          'timeoutMs must be a number of milliseconds between 1 and 2147483647',
          'keepAliveMs must be a number of milliseconds between 1 and 2147483647',
          'userAgent must be a non-empty string of printable ASCII',
        ],
      }),
    );
  });
});

describe('response shapes', () => {
  it('accepts the documented balance and drops extra fields', () => {
    expect(parseBalance({ success: true, balance: 5, currency: 'TZS', smsRate: 20, extra: 1 })).toEqual({
      success: true,
      balance: 5,
      currency: 'TZS',
      smsRate: 20,
    });
  });

  it.each([
    [null, 'body is not a JSON object'],
    [[], 'body is not a JSON object'],
    [{ balance: 5, currency: 'TZS', smsRate: 20 }, 'success is not true'],
    [{ success: 'true', balance: 5, currency: 'TZS', smsRate: 20 }, 'success is not true'],
    [{ success: true, balance: '5', currency: 'TZS', smsRate: 20 }, 'balance is not a number'],
    [{ success: true, balance: 5, smsRate: 20 }, 'currency is not a string'],
    [{ success: true, balance: 5, currency: 'TZS' }, 'smsRate is not a number'],
  ])('names what is wrong with balance %j', (body, problem) => {
    expect(parseBalance(body)).toBe(problem);
  });

  it('keeps recipients as the very array the service returned', () => {
    const recipients = [{ anything: 1 }, 'x'];
    const result = parseSendResult({
      success: true,
      message: 'ok',
      senderId: 'S',
      recipients,
      deducted: 2,
      remainingBalance: 8,
    });
    expect(typeof result).toBe('object');
    expect((result as { recipients: unknown }).recipients).toBe(recipients);
  });

  it.each([
    [{ success: false, error: 'nope' }, 'success is not true'],
    [{ success: true, senderId: 'S', recipients: [], deducted: 1, remainingBalance: 1 }, 'message is not a string'],
    [{ success: true, message: 'm', recipients: [], deducted: 1, remainingBalance: 1 }, 'senderId is not a string'],
    [
      { success: true, message: 'm', senderId: 'S', recipients: {}, deducted: 1, remainingBalance: 1 },
      'recipients is not an array',
    ],
    [
      { success: true, message: 'm', senderId: 'S', recipients: [], deducted: '1', remainingBalance: 1 },
      'deducted is not a number',
    ],
    [{ success: true, message: 'm', senderId: 'S', recipients: [], deducted: 1 }, 'remainingBalance is not a number'],
  ])('names what is wrong with send result %j', (body, problem) => {
    expect(parseSendResult(body)).toBe(problem);
  });
});

describe('sendCertaintyOf', () => {
  it.each([
    [SmsOperation.SEND, false, undefined, SendCertainty.NOT_SENT],
    [SmsOperation.SEND, true, undefined, SendCertainty.MAYBE_SENT],
    [SmsOperation.SEND, true, 400, SendCertainty.NOT_SENT],
    [SmsOperation.SEND, true, 401, SendCertainty.NOT_SENT],
    [SmsOperation.SEND, true, 402, SendCertainty.NOT_SENT],
    [SmsOperation.SEND, true, 200, SendCertainty.MAYBE_SENT],
    [SmsOperation.SEND, true, 500, SendCertainty.MAYBE_SENT],
    [SmsOperation.SEND, true, 418, SendCertainty.MAYBE_SENT],
    [SmsOperation.SEND, false, 503, SendCertainty.MAYBE_SENT],
    [SmsOperation.BALANCE, true, undefined, SendCertainty.NOT_SENT],
    [SmsOperation.BALANCE, true, 500, SendCertainty.NOT_SENT],
  ] as const)('%s, request sent %s, status %s → %s', (operation, requestSent, status, expected) => {
    expect(sendCertaintyOf(operation, requestSent, status)).toBe(expected);
  });
});

describe('describeSmsError', () => {
  it('keeps only log-safe fields', () => {
    const error = new SmsServiceError('SMS service failed (HTTP 503)', {
      operation: 'send',
      code: 'server-error',
      delivery: 'maybe-sent',
      status: 503,
      serviceError: 'busy',
    });
    expect(describeSmsError(error)).toEqual({
      name: 'SmsServiceError',
      delivery: 'maybe-sent',
      code: 'server-error',
      operation: 'send',
      status: 503,
      serviceError: 'busy',
    });
    expect(
      describeSmsError(
        new SmsServiceError('rejected', { operation: 'send', code: 'bad-request', delivery: 'not-sent', status: 400 }),
      ),
    ).toEqual({
      name: 'SmsServiceError',
      delivery: 'not-sent',
      code: 'bad-request',
      operation: 'send',
      status: 400,
    });
  });

  it("adds Node's code of a network failure", () => {
    expect(
      describeSmsError(
        new SmsServiceError('reset', {
          operation: 'send',
          code: 'reset',
          delivery: 'maybe-sent',
          systemCode: 'ECONNRESET',
        }),
      ),
    ).toEqual({
      name: 'SmsServiceError',
      delivery: 'maybe-sent',
      code: 'reset',
      operation: 'send',
      systemCode: 'ECONNRESET',
    });
  });

  it('assumes maybe-sent for errors it does not know, without their message', () => {
    expect(describeSmsError(new TypeError(`boom ${API_KEY}`))).toEqual({ name: 'TypeError', delivery: 'maybe-sent' });
    expect(describeSmsError('text')).toEqual({ name: 'string', delivery: 'maybe-sent' });
  });
});
