import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS, retryAfterMs } from '../../../../functions/core/provider';

describe("a 429's Retry-After", () => {
  const now = Date.parse('2026-12-04T10:00:00Z');

  it('reads delay-seconds and an HTTP date', () => {
    expect(retryAfterMs('2', now)).toBe(2_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Fri, 04 Dec 2026 10:00:30 GMT', now)).toBe(30_000);
  });

  it('takes 1 s when absent or unreadable, and a date already past as no wait', () => {
    expect(retryAfterMs(undefined, now)).toBe(DEFAULT_RETRY_AFTER_MS);
    expect(retryAfterMs('', now)).toBe(DEFAULT_RETRY_AFTER_MS);
    expect(retryAfterMs('soon', now)).toBe(DEFAULT_RETRY_AFTER_MS);
    expect(retryAfterMs('-5', now)).toBe(DEFAULT_RETRY_AFTER_MS);
    expect(retryAfterMs('Fri, 04 Dec 2026 09:59:00 GMT', now)).toBe(0);
  });

  it('waits at most 5 minutes, whatever it asks', () => {
    expect(retryAfterMs('86400', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(MAX_RETRY_AFTER_MS).toBe(300_000);
  });
});
