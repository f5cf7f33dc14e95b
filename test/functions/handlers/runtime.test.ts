import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSmsClient } from '../../../functions/core/provider';
import { ENV_DEFAULTS, readEnvironment } from '../../../functions/handlers/wiring/env';
import { MissingSecretValueError, SecretUnavailableError } from '../../../functions/adapters/errors';
import { EnvironmentError } from '../../../functions/handlers/wiring/errors';
import { createLogger, maskingReplacer, relayLogger } from '../../../functions/adapters/logger';
import { createMetrics, flushMetrics, relayMetrics } from '../../../functions/handlers/wiring/metrics';
import { createFileSecretSource, createSecretsManagerSource } from '../../../functions/adapters/secrets';
import { createSmsClientSource } from '../../../functions/adapters/sms';
import { DEFAULT_RETRY_POLICY } from '../../../functions/relay/ports';
import { type Captured, captureStdout, stubEnvironment } from './support';

const secretsManager = mockClient(SecretsManagerClient);

beforeEach(() => {
  stubEnvironment({});
  secretsManager.reset();
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('readEnvironment', () => {
  const minimal = { RELAY_CONFIG: '/opt/relay.yaml', TABLE_NAME: 'sms-relay', SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:1:secret:sms-relay' };

  it('reads the minimal AWS environment with the defaults', () => {
    expect(readEnvironment(minimal)).toEqual({
      configPath: '/opt/relay.yaml',
      tableName: 'sms-relay',
      secrets: { kind: 'secrets-manager', routes: minimal.SECRET_ID, provider: minimal.SECRET_ID },
      maxBodyBytes: ENV_DEFAULTS.maxBodyBytes,
      policy: DEFAULT_RETRY_POLICY,
      sweepPendingGraceMs: 10_000,
    });
  });

  it('reads the route secrets (SECRET_ID) and the provider key (PROVIDER_SECRET_ID) apart, each only when given', () => {
    const { SECRET_ID: routes, ...withoutRoutes } = minimal;
    const provider = `${routes}/provider`;
    expect(readEnvironment({ ...minimal, PROVIDER_SECRET_ID: provider }).secrets).toEqual({ kind: 'secrets-manager', routes, provider });
    expect(readEnvironment({ ...withoutRoutes, PROVIDER_SECRET_ID: provider }).secrets).toEqual({ kind: 'secrets-manager', provider });
  });

  it('resolves a relative RELAY_CONFIG against LAMBDA_TASK_ROOT, as deployed', () => {
    expect(readEnvironment({ ...minimal, RELAY_CONFIG: 'relay-config.yaml', LAMBDA_TASK_ROOT: '/var/task' }).configPath).toBe('/var/task/relay-config.yaml');
    expect(readEnvironment({ ...minimal, RELAY_CONFIG: 'config/local.yaml' }).configPath).toBe(join(process.cwd(), 'config/local.yaml'));
  });

  it('prefers the local secrets file over SECRET_ID, and reads every override', () => {
    const env = readEnvironment({
      ...minimal,
      RELAY_SECRETS_FILE: '.relay/secrets.json',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      PROVIDER_BASE_URL: 'http://127.0.0.1:4010',
      PROVIDER_API_KEY: 'local-key',
      MAX_BODY_BYTES: '1024',
      RETRY_MAX_ATTEMPTS: '2',
      RETRY_BASE_DELAY_MS: '0',
      STALE_SENDING_MS: '30000',
      SWEEP_PENDING_GRACE_MS: '0',
      BALANCE_THRESHOLD: '12.5',
    });
    expect(env).toEqual({
      configPath: '/opt/relay.yaml',
      tableName: 'sms-relay',
      dynamodbEndpoint: 'http://127.0.0.1:8000',
      secrets: { kind: 'file', path: join(process.cwd(), '.relay/secrets.json') },
      providerBaseUrl: 'http://127.0.0.1:4010',
      providerApiKey: 'local-key',
      maxBodyBytes: 1024,
      policy: { ...DEFAULT_RETRY_POLICY, maxAttempts: 2, baseDelayMs: 0, staleSendingMs: 30_000 },
      sweepPendingGraceMs: 0,
      balanceThreshold: 12.5,
    });
  });

  it('reports every problem at once, and treats empty values as unset', () => {
    let caught: unknown;
    try {
      readEnvironment({ TABLE_NAME: '', MAX_BODY_BYTES: '10kb', RETRY_MAX_ATTEMPTS: '0', DYNAMODB_ENDPOINT: 'localhost:8000', PROVIDER_BASE_URL: 'ftp://user:pw@x' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EnvironmentError);
    expect((caught as EnvironmentError).problems).toEqual([
      'RELAY_CONFIG is required (path of the config YAML)',
      'TABLE_NAME is required (the DynamoDB table)',
      'DYNAMODB_ENDPOINT must be an http(s) URL, got "localhost:8000"',
      'SECRET_ID, PROVIDER_SECRET_ID or RELAY_SECRETS_FILE is required (where the route secrets and the provider API key are)',
      'PROVIDER_BASE_URL must be an http(s) URL',
      'MAX_BODY_BYTES must be a whole number ≥ 1, got "10kb"',
      'RETRY_MAX_ATTEMPTS must be a whole number ≥ 1, got "0"',
    ]);
    // A URL can carry credentials: it is not echoed.
    expect((caught as Error).message).not.toContain('pw@');
  });

  it('refuses a PROVIDER_BASE_URL with credentials, as the local runtime does, without echoing it', () => {
    let caught: unknown;
    try {
      readEnvironment({ RELAY_CONFIG: 'c.yaml', TABLE_NAME: 't', SECRET_ID: 's', PROVIDER_BASE_URL: 'https://user:pw@sms.example' });
    } catch (error) {
      caught = error;
    }
    expect((caught as EnvironmentError | undefined)?.problems).toEqual(['PROVIDER_BASE_URL must not contain credentials; use PROVIDER_API_KEY']);
    expect((caught as Error).message).not.toContain('pw@');
  });
});

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
    secretsManager.on(GetSecretValueCommand, { SecretId: secretId }).resolves({ SecretString: 'plain-text-secret-value' });

    const error: unknown = await createSecretsManagerSource(secretId).get('providerApiKey').catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(SecretUnavailableError);
    expect((error as Error).message).toBe(`secret ${secretId} is not valid JSON`);
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain('plain-text');
    expect((error as Error).cause).toBeUndefined();
  });

  it("names an AWS error by its name, status and the service's own text", async () => {
    const secretId = `sms-relay/${randomUUID()}`;
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretId })
      .rejects(new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret.", $metadata: { httpStatusCode: 400 } }));

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
    await expect(source.get('providerApiKey')).rejects.toThrow(`the secrets file ${path} is not a JSON object of named values`);

    writeFileSync(path, '{"providerApiKey": "whole"}');
    expect(await source.get('providerApiKey')).toBe('whole');
  });
});

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
    const source = createSmsClientSource({ secrets: createFileSecretSource(path), baseUrl: 'http://127.0.0.1:9', timeoutMs: 1_000, create });

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
    const source = createSmsClientSource({ secrets: createFileSecretSource(join(dir, 'absent.json')), baseUrl: 'http://127.0.0.1:9', timeoutMs: 1_000, apiKey: 'fixed', create });

    expect(await source.refresh()).toBe(await source.client());
    expect(keys).toEqual(['fixed']);
  });

  it('closes every client it made on close(), and builds a new one afterwards', async () => {
    const path = join(dir, `${randomUUID()}.json`);
    writeFileSync(path, JSON.stringify({ providerApiKey: 'key-a' }));
    const { create, keys } = counting();
    const source = createSmsClientSource({ secrets: createFileSecretSource(path), baseUrl: 'http://127.0.0.1:9', timeoutMs: 1_000, create });

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
    const source = createSmsClientSource({ secrets: createFileSecretSource(path), baseUrl: 'http://127.0.0.1:9', timeoutMs: 1_000 });

    await expect(source.client()).rejects.toBeInstanceOf(MissingSecretValueError);
    await expect(source.client()).rejects.toThrow('the secret has no value named "providerApiKey"');
  });
});

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
    for (const leak of ['712345678', '754111222', '754 111 222', 'k-1', 'k-2', 'k-3', 't-1', 't-2', 's-1', 'p-1']) expect(text).not.toContain(leak);
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
    expect(JSON.stringify({ to: '255712345678', token: 'x', nested: [{ 'X-Api-Key': 'y' }], phone: 255712345678, count: 3, orderId: 820982911946154 }, maskingReplacer)).toBe(
      '{"to":"2557****678","token":"[REDACTED]","nested":[{"X-Api-Key":"[REDACTED]"}],"phone":"2557****678","count":3,"orderId":820982911946154}',
    );
  });
});

describe('the metrics', () => {
  let out: Captured;
  beforeEach(() => {
    out = captureStdout();
  });
  afterEach(() => {
    out.restore();
  });

  it('publishes every datapoint in the service-only series, and per route in its own EMF line', () => {
    const metrics = createMetrics();
    const port = relayMetrics(metrics);

    port.add('Sent', 1, 'alerts');
    port.add('Sent', 1, 'orders');
    port.add('CreditsSpent', 2.5, 'alerts');
    port.add('RemainingBalance', 97.5);
    flushMetrics(metrics);

    const lines = out.emf();
    const series = lines.map((line) => {
      const [directive] = (line['_aws'] as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] }).CloudWatchMetrics;
      return { namespace: directive!.Namespace, dimensions: directive!.Dimensions, metrics: directive!.Metrics, service: line['service'], route: line['route'] };
    });
    expect(series).toEqual([
      { namespace: 'SmsRelay', dimensions: [['service', 'route']], metrics: [{ Name: 'Sent', Unit: 'Count' }], service: 'sms-relay', route: 'alerts' },
      { namespace: 'SmsRelay', dimensions: [['service', 'route']], metrics: [{ Name: 'Sent', Unit: 'Count' }], service: 'sms-relay', route: 'orders' },
      { namespace: 'SmsRelay', dimensions: [['service', 'route']], metrics: [{ Name: 'CreditsSpent', Unit: 'None' }], service: 'sms-relay', route: 'alerts' },
      {
        namespace: 'SmsRelay',
        dimensions: [['service']],
        metrics: [
          { Name: 'Sent', Unit: 'Count' },
          { Name: 'CreditsSpent', Unit: 'None' },
          { Name: 'RemainingBalance', Unit: 'None' },
        ],
        service: 'sms-relay',
        route: undefined,
      },
    ]);
    // The service-only series adds up every route.
    expect(lines.at(-1)).toMatchObject({ Sent: [1, 1], CreditsSpent: 2.5, RemainingBalance: 97.5 });
  });

  it('writes nothing, and warns about nothing, when nothing was measured', () => {
    flushMetrics(createMetrics());
    expect(out.lines()).toEqual([]);
  });
});
