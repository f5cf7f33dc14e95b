import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSmsClient } from '../../../functions/core/provider';
import { MissingSecretValueError } from '../../../functions/adapters/errors';
import { createFileSecretSource } from '../../../functions/adapters/secrets';
import { createSmsClientSource } from '../../../functions/adapters/sms';
import { stubEnvironment } from '../handlers/support';

beforeEach(() => stubEnvironment({}));
afterEach(() => vi.unstubAllEnvs());

describe('createSmsClientSource', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sms-source-'));

  function counting(): { create: typeof createSmsClient; keys: string[] } {
    const keys: string[] = [];
    return {
      keys,
      create: (options) => {
        keys.push(options.apiKey);
        // The real client; it connects only when used, which these tests never do.
        return createSmsClient(options);
      },
    };
  }

  it('builds one client per API key, and a new one only when a refresh finds a new key', async () => {
    const path = join(dir, `${randomUUID()}.json`);
    writeFileSync(path, JSON.stringify({ providerApiKey: 'key-a' }));
    const { create, keys } = counting();
    const source = createSmsClientSource({
      secrets: createFileSecretSource(path),
      baseUrl: 'http://127.0.0.1:9',
      timeoutMs: 1_000,
      create,
    });

    const first = await source.client();
    expect(await source.client()).toBe(first);
    expect(await source.refresh()).toBe(first);

    writeFileSync(path, JSON.stringify({ providerApiKey: 'key-b' }));
    const second = await source.refresh();
    expect(second).not.toBe(first);
    expect(await source.client()).toBe(second);
    expect(keys).toEqual(['key-a', 'key-b']);
  });

  it('uses a fixed PROVIDER_API_KEY without reading the secret', async () => {
    const { create, keys } = counting();
    const source = createSmsClientSource({
      secrets: createFileSecretSource(join(dir, 'absent.json')),
      baseUrl: 'http://127.0.0.1:9',
      timeoutMs: 1_000,
      apiKey: 'fixed',
      create,
    });

    expect(await source.refresh()).toBe(await source.client());
    expect(keys).toEqual(['fixed']);
  });

  it('closes every client it made on close(), and builds a new one afterwards', async () => {
    const path = join(dir, `${randomUUID()}.json`);
    writeFileSync(path, JSON.stringify({ providerApiKey: 'key-a' }));
    const { create, keys } = counting();
    const source = createSmsClientSource({
      secrets: createFileSecretSource(path),
      baseUrl: 'http://127.0.0.1:9',
      timeoutMs: 1_000,
      create,
    });

    const first = await source.client();
    writeFileSync(path, JSON.stringify({ providerApiKey: 'key-b' }));
    const second = await source.refresh();
    source.close();
    await expect(first.getBalance()).rejects.toThrow('SMS client is closed');
    await expect(second.getBalance()).rejects.toThrow('SMS client is closed');
    expect(await source.client()).not.toBe(second);
    expect(keys).toEqual(['key-a', 'key-b', 'key-b']);
  });

  it('fails with the value name when the secret has no providerApiKey', async () => {
    const path = join(dir, `${randomUUID()}.json`);
    writeFileSync(path, JSON.stringify({ 'alerts-token': 'x' }));
    const source = createSmsClientSource({
      secrets: createFileSecretSource(path),
      baseUrl: 'http://127.0.0.1:9',
      timeoutMs: 1_000,
    });

    await expect(source.client()).rejects.toBeInstanceOf(MissingSecretValueError);
    await expect(source.client()).rejects.toThrow('the secret has no value named "providerApiKey"');
  });
});
