import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ENV_DEFAULTS, readEnvironment } from '../../../../functions/handlers/wiring/env';
import { EnvironmentError } from '../../../../functions/handlers/wiring/errors';
import { DEFAULT_RETRY_POLICY } from '../../../../functions/relay/ports';
import { stubEnvironment } from '../support';

beforeEach(() => stubEnvironment({}));
afterEach(() => vi.unstubAllEnvs());

describe('readEnvironment', () => {
  const minimal = {
    RELAY_CONFIG: '/opt/relay.yaml',
    TABLE_NAME: 'sms-relay',
    SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:1:secret:sms-relay',
  };

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
    expect(readEnvironment({ ...minimal, PROVIDER_SECRET_ID: provider }).secrets).toEqual({
      kind: 'secrets-manager',
      routes,
      provider,
    });
    expect(readEnvironment({ ...withoutRoutes, PROVIDER_SECRET_ID: provider }).secrets).toEqual({
      kind: 'secrets-manager',
      provider,
    });
  });

  it('resolves a relative RELAY_CONFIG against LAMBDA_TASK_ROOT, as deployed', () => {
    expect(
      readEnvironment({ ...minimal, RELAY_CONFIG: 'relay-config.yaml', LAMBDA_TASK_ROOT: '/var/task' }).configPath,
    ).toBe('/var/task/relay-config.yaml');
    expect(readEnvironment({ ...minimal, RELAY_CONFIG: 'config/local.yaml' }).configPath).toBe(
      join(process.cwd(), 'config/local.yaml'),
    );
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
      readEnvironment({
        TABLE_NAME: '',
        MAX_BODY_BYTES: '10kb',
        RETRY_MAX_ATTEMPTS: '0',
        DYNAMODB_ENDPOINT: 'localhost:8000',
        PROVIDER_BASE_URL: 'ftp://user:pw@x',
      });
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
      readEnvironment({
        RELAY_CONFIG: 'c.yaml',
        TABLE_NAME: 't',
        SECRET_ID: 's',
        PROVIDER_BASE_URL: 'https://user:pw@sms.example',
      });
    } catch (error) {
      caught = error;
    }
    expect((caught as EnvironmentError | undefined)?.problems).toEqual([
      'PROVIDER_BASE_URL must not contain credentials; use PROVIDER_API_KEY',
    ]);
    expect((caught as Error).message).not.toContain('pw@');
  });
});
