import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SecretUnavailableError } from '../../../functions/adapters/errors';
import { createFileSecretSource, createSecretsManagerSource } from '../../../functions/adapters/secrets';
import { stubEnvironment } from '../handlers/support';

const secretsManager = mockClient(SecretsManagerClient);

beforeEach(() => {
  stubEnvironment({});
  secretsManager.reset();
});
afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(() => secretsManager.restore());

describe('createSecretsManagerSource', () => {
  const values = { providerApiKey: 'key-1', 'alerts-token': 'token-1', notAString: 42 };

  it('reads the JSON secret once and serves later reads from the cache', async () => {
    const secretId = `sms-relay/${randomUUID()}`;
    secretsManager.on(GetSecretValueCommand, { SecretId: secretId }).resolves({ SecretString: JSON.stringify(values) });
    const source = createSecretsManagerSource(secretId);

    expect(await source.get('providerApiKey')).toBe('key-1');
    expect(await source.get('alerts-token')).toBe('token-1');
    expect(await source.get('notAString')).toBeUndefined();
    expect(await source.get('missing')).toBeUndefined();
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('fetches again on refresh, once for any number of concurrent refreshes, and serves the new value', async () => {
    const secretId = `sms-relay/${randomUUID()}`;
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretId })
      .resolvesOnce({ SecretString: JSON.stringify(values) })
      .resolves({ SecretString: JSON.stringify({ ...values, providerApiKey: 'key-2' }) });
    const source = createSecretsManagerSource(secretId);
    expect(await source.get('providerApiKey')).toBe('key-1');

    await Promise.all([source.refresh(), source.refresh(), source.refresh()]);

    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(2);
    expect(await source.get('providerApiKey')).toBe('key-2');
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('refuses a secret that is not JSON without repeating any of it', async () => {
    const secretId = `sms-relay/${randomUUID()}`;
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretId })
      .resolves({ SecretString: 'plain-text-secret-value' });

    const error: unknown = await createSecretsManagerSource(secretId)
      .get('providerApiKey')
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(SecretUnavailableError);
    expect((error as Error).message).toBe(`secret ${secretId} is not valid JSON`);
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain('plain-text');
    expect((error as Error).cause).toBeUndefined();
  });

  it("names an AWS error by its name, status and the service's own text", async () => {
    const secretId = `sms-relay/${randomUUID()}`;
    secretsManager.on(GetSecretValueCommand, { SecretId: secretId }).rejects(
      new ResourceNotFoundException({
        message: "Secrets Manager can't find the specified secret.",
        $metadata: { httpStatusCode: 400 },
      }),
    );

    await expect(createSecretsManagerSource(secretId).get('providerApiKey')).rejects.toThrow(
      `cannot read secret ${secretId}: ResourceNotFoundException (HTTP 400): Secrets Manager can't find the specified secret.`,
    );
  });
});

describe('createFileSecretSource', () => {
  const dir = mkdtempSync(join(tmpdir(), 'secrets-file-'));

  it('reads the file once, and again on refresh', async () => {
    const path = join(dir, `${randomUUID()}.json`);
    writeFileSync(path, JSON.stringify({ providerApiKey: 'one' }));
    const source = createFileSecretSource(path);
    expect(await source.get('providerApiKey')).toBe('one');

    writeFileSync(path, JSON.stringify({ providerApiKey: 'two' }));
    expect(await source.get('providerApiKey')).toBe('one');
    await source.refresh();
    expect(await source.get('providerApiKey')).toBe('two');
  });

  it('refuses a missing or broken file without quoting it, and reads it once it is fixed', async () => {
    const path = join(dir, `${randomUUID()}.json`);
    const source = createFileSecretSource(path);
    await expect(source.get('providerApiKey')).rejects.toThrow(`cannot read the secrets file ${path} (ENOENT)`);

    writeFileSync(path, '{"providerApiKey": "half-written-secret"');
    const error: unknown = await source.get('providerApiKey').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SecretUnavailableError);
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain('half-written-secret');

    writeFileSync(path, '["not", "an", "object"]');
    await expect(source.get('providerApiKey')).rejects.toThrow(
      `the secrets file ${path} is not a JSON object of named values`,
    );

    writeFileSync(path, '{"providerApiKey": "whole"}');
    expect(await source.get('providerApiKey')).toBe('whole');
  });
});
