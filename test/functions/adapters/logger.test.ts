import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger, maskingReplacer, relayLogger } from '../../../functions/adapters/logger';
import { type Captured, captureStdout, stubEnvironment } from '../handlers/support';

beforeEach(() => stubEnvironment({}));
afterEach(() => vi.unstubAllEnvs());

describe('the logger', () => {
  let out: Captured;
  beforeEach(() => {
    out = captureStdout();
  });
  afterEach(() => {
    out.restore();
  });

  it('masks phone numbers in every string and redacts credential keys, at any depth', () => {
    const logger = relayLogger(createLogger());
    const error = new Error('send to +255 712 345 678 failed', { cause: new Error('0754111222 unreachable') });

    logger.warn('sms to 255712345678', {
      to: ['255712345678', '0754 111 222'],
      apiKey: 'k-1',
      headers: { 'x-api-key': 'k-2', Authorization: 'Bearer t-1', 'content-type': 'application/json' },
      providerApiKey: 'k-3',
      clientSecret: 's-1',
      password: 'p-1',
      accessToken: 't-2',
      secretName: 'alerts-token',
      orderId: '820982911946154508',
      error,
      message: 'a reserved key is renamed, not dropped',
    });

    const [line, ...more] = out.logs();
    expect(more).toEqual([]);
    const text = JSON.stringify(line);
    for (const leak of ['712345678', '754111222', '754 111 222', 'k-1', 'k-2', 'k-3', 't-1', 't-2', 's-1', 'p-1'])
      expect(text).not.toContain(leak);
    expect(line).toMatchObject({
      level: 'WARN',
      message: 'sms to 2557****678',
      service: 'sms-relay',
      to: ['2557****678', '2557****222'],
      apiKey: '[REDACTED]',
      headers: { 'x-api-key': '[REDACTED]', Authorization: '[REDACTED]', 'content-type': 'application/json' },
      providerApiKey: '[REDACTED]',
      secretName: 'alerts-token',
      // Long ids are not numbers to mask.
      orderId: '820982911946154508',
      error: { name: 'Error', message: 'send to 2557****678 failed', cause: { message: '2557****222 unreachable' } },
      detail_message: 'a reserved key is renamed, not dropped',
    });
  });

  it('masks a number written without its prefix, spaced or not, as the console does (one masker)', () => {
    const logger = relayLogger(createLogger());
    logger.warn('recipient dropped', { entry: 'call 712 345 678 now', reason: 'from 754111222', amount: 712345678 });
    const [line] = out.logs();
    for (const leak of ['712 345 678', '754111222', '712345678']) expect(JSON.stringify(line)).not.toContain(leak);
    expect(line).toMatchObject({ entry: 'call 2557****678 now', reason: 'from 2557****222', amount: '2557****678' });
  });

  it('is a plain JSON replacer', () => {
    expect(
      JSON.stringify(
        {
          to: '255712345678',
          token: 'x',
          nested: [{ 'X-Api-Key': 'y' }],
          phone: 255712345678,
          count: 3,
          orderId: 820982911946154,
        },
        maskingReplacer,
      ),
    ).toBe(
      '{"to":"2557****678","token":"[REDACTED]","nested":[{"X-Api-Key":"[REDACTED]"}],"phone":"2557****678","count":3,"orderId":820982911946154}',
    );
  });
});
