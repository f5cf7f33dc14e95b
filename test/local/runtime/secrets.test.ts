import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../../helpers/fixtures';
import { loadConfigFile } from '../../../functions/core/config/load';
import { RuntimeError } from '../../../local/shared/errors';
import {
  assertUsableSecrets,
  ensureSecretsFile,
  readExistingSecrets,
  requiredSecrets,
} from '../../../local/runtime/secrets';

const loaded = loadConfigFile(new URL('../../../config/local.yaml', import.meta.url).pathname);
let dir: string;

test.beforeEach(({ tempDir }) => {
  dir = tempDir;
});

describe('the local secrets file', () => {
  test('names providerApiKey and every route secret, with the kind of value each needs', () => {
    expect(Object.fromEntries(requiredSecrets(loaded))).toEqual({
      providerApiKey: 'provider',
      'alerts-token': 'credential',
      'grafana-token': 'credential',
      'github-secret': 'key',
      'shopify-secret': 'key',
      'woocommerce-secret': 'key',
      'stripe-secret': 'whsec',
      'standard-secret': 'whsec',
      'generic-token': 'credential',
      'gitlab-token': 'credential',
      'sentry-secret': 'key',
      'pagerduty-secret': 'key',
      'uptime-kuma-token': 'credential',
      'goalert-token': 'credential',
      'grafana-oncall-token': 'credential',
      'opsgenie-key': 'credential',
      'paystack-secret': 'key',
      'sns-token': 'credential',
    });
  });

  test('is created on first run with random values, in a new directory, mode 0600', () => {
    const path = join(dir, 'nested', 'secrets.json');
    const result = ensureSecretsFile(path, loaded);
    expect(result).toMatchObject({ path, created: true, added: [] });
    const written = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
    expect(written).toEqual(result.values);
    expect(written['stripe-secret']).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(written['standard-secret']).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(written['providerApiKey']).toMatch(/^sbx_[\w-]{32}$/);
    expect(written['generic-token']).toMatch(/^[\w-]{32}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'nested')).mode & 0o777).toBe(0o700);
    expect(ensureSecretsFile(join(dir, 'other.json'), loaded).values['generic-token']).not.toBe(
      written['generic-token'],
    );
  });

  test('is left alone when complete, and gets values only for missing names', () => {
    const path = join(dir, 'secrets.json');
    writeFileSync(path, JSON.stringify({ providerApiKey: 'mine', 'github-secret': 'also mine', extra: 'kept' }));
    const result = ensureSecretsFile(path, loaded);
    expect(result.created).toBe(false);
    expect([...result.added].sort()).toEqual(
      [
        'alerts-token',
        'generic-token',
        'grafana-token',
        'shopify-secret',
        'standard-secret',
        'stripe-secret',
        'woocommerce-secret',
        'gitlab-token',
        'sentry-secret',
        'pagerduty-secret',
        'uptime-kuma-token',
        'paystack-secret',
        'sns-token',
        'goalert-token',
        'grafana-oncall-token',
        'opsgenie-key',
      ].sort(),
    );
    const written = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
    expect(written).toMatchObject({ providerApiKey: 'mine', 'github-secret': 'also mine', extra: 'kept' });

    const again = ensureSecretsFile(path, loaded);
    expect(again).toMatchObject({ created: false, added: [] });
    expect(again.values).toEqual(written);
  });

  test('refuses a file it cannot use, naming the problem but no value', () => {
    const path = join(dir, 'secrets.json');
    writeFileSync(path, '{"providerApiKey": "hidden-value-1", ');
    expect(() => ensureSecretsFile(path, loaded)).toThrow(new RuntimeError(`secrets file ${path} is not valid JSON`));
    writeFileSync(path, '["hidden-value-2"]');
    expect(() => ensureSecretsFile(path, loaded)).toThrow(/must hold a JSON object/);
    writeFileSync(path, '{"providerApiKey": 42}');
    expect(() => ensureSecretsFile(path, loaded)).toThrow(/values must be strings \(providerApiKey\)/);
    expect(() => ensureSecretsFile(dir, loaded)).toThrow(/cannot read secrets file .* \(EISDIR\)/);
  });

  test('is never created by the commands that only read it', () => {
    const path = join(dir, 'missing.json');
    expect(() => readExistingSecrets(path)).toThrow(/does not exist; "npm start" creates it on first run/);
  });
});

describe('assertUsableSecrets (npm start)', () => {
  test('refuses to start with a route secret that could never match, naming it but not its value', () => {
    const path = join(dir, 'secrets.json');
    writeFileSync(path, JSON.stringify({ providerApiKey: 'k' }));
    const { values } = ensureSecretsFile(path, loaded);
    expect(() => assertUsableSecrets(path, loaded, values)).not.toThrow();
    const broken = { ...values, 'alerts-token': ' padded-token ', 'generic-token': 'Schlüssel' };
    let error: unknown;
    try {
      assertUsableSecrets(path, loaded, broken);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RuntimeError);
    const message = (error as Error).message;
    expect(message).toContain('secret "alerts-token" (route alerts): starts or ends with a space');
    expect(message).toContain('secret "generic-token" (route notify): has non-ASCII characters');
    expect(message).not.toContain('padded-token');
    expect(message).not.toContain('Schlüssel');
  });
});
