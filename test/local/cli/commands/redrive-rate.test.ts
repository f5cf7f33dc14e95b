import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaultRedriveRate, parseRate, REDRIVE_RATE } from '../../../../local/cli/commands/redrive-rate';

describe("redrive's default --rate", () => {
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-redrive-rate-'));
  afterEach(() => vi.unstubAllEnvs());

  const config = (provider: Record<string, unknown>): string => {
    const path = join(dir, `relay-${Math.random()}.yaml`);
    writeFileSync(
      path,
      JSON.stringify({
        provider: { baseUrl: 'http://127.0.0.1:9/unused', ...provider },
        secrets: 'sms-relay/rate',
        routes: { orders: { source: 'generic', secret: 'generic-token', recipients: ['0712345678'] } },
      }),
    );
    return path;
  };

  it("is half the relay config's provider.maxPerSecond, at least 1, leaving the other half for alerts", async () => {
    vi.stubEnv('RELAY_CONFIG', config({ maxPerSecond: 30 }));
    await expect(defaultRedriveRate({})).resolves.toBe(15);
    vi.stubEnv('RELAY_CONFIG', config({ maxPerSecond: 1 }));
    await expect(defaultRedriveRate({})).resolves.toBe(1);
  });

  it(`is ${REDRIVE_RATE.fallback} a second when the config sets no rate, or cannot be read`, async () => {
    vi.stubEnv('RELAY_CONFIG', config({}));
    await expect(defaultRedriveRate({})).resolves.toBe(REDRIVE_RATE.fallback);
    vi.stubEnv('RELAY_CONFIG', join(dir, 'missing.yaml'));
    await expect(defaultRedriveRate({})).resolves.toBe(REDRIVE_RATE.fallback);
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes a number of requeues a second above 0, fractions too', () => {
    expect(parseRate('5')).toBe(5);
    expect(parseRate('0.5')).toBe(0.5);
    for (const bad of ['0', '-1', 'fast', '', '20000'])
      expect(() => parseRate(bad), bad).toThrow(/requeues per second/);
  });
});
