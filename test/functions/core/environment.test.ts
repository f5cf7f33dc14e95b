import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, RETRY, SWEEP_PENDING_GRACE_MS } from '../../../functions/core/defaults';
import { NUMERIC_ENV, readNumericEnv } from '../../../functions/core/environment';
import { EnvironmentError } from '../../../functions/handlers/wiring/errors';
import { readEnvironment } from '../../../functions/handlers/wiring/env';
import { resolveRuntimeSettings } from '../../../local/shared/settings';

const lambda = { RELAY_CONFIG: 'config/local.yaml', TABLE_NAME: 't', RELAY_SECRETS_FILE: 's.json' };

describe('readNumericEnv', () => {
  it('gives each unset or empty variable its default from defaults.ts', () => {
    const { values, problems } = readNumericEnv({ MAX_BODY_BYTES: ' ' }, [
      'maxBodyBytes',
      'retryMaxAttempts',
      'retryBaseDelayMs',
      'staleSendingMs',
      'sweepPendingGraceMs',
      'balanceThreshold',
    ]);
    expect(problems).toEqual([]);
    expect(values).toEqual({
      maxBodyBytes: MAX_BODY_BYTES,
      retryMaxAttempts: RETRY.maxAttempts,
      retryBaseDelayMs: RETRY.baseDelayMs,
      staleSendingMs: RETRY.staleSendingMs,
      sweepPendingGraceMs: SWEEP_PENDING_GRACE_MS,
      balanceThreshold: undefined,
    });
  });

  it('reads whole numbers as digits only, and decimals where the table allows them', () => {
    const { values, problems } = readNumericEnv(
      {
        MAX_BODY_BYTES: ' 1024 ',
        RETRY_BASE_DELAY_MS: '0',
        BALANCE_THRESHOLD: '12.5',
        RETRY_MAX_ATTEMPTS: '1e3',
        STALE_SENDING_MS: '-5',
      },
      ['maxBodyBytes', 'retryBaseDelayMs', 'balanceThreshold', 'retryMaxAttempts', 'staleSendingMs'],
    );
    expect(values).toMatchObject({
      maxBodyBytes: 1024,
      retryBaseDelayMs: 0,
      balanceThreshold: 12.5,
      retryMaxAttempts: RETRY.maxAttempts,
    });
    expect(problems).toEqual([
      { name: 'RETRY_MAX_ATTEMPTS', raw: '1e3', min: 1, integer: true },
      { name: 'STALE_SENDING_MS', raw: '-5', min: 1, integer: true },
    ]);
  });

  it('names every variable the two readers share once', () => {
    const names = Object.values(NUMERIC_ENV).map(({ name }) => name);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('the Lambda wiring and the local runtime read the same variables the same way', () => {
  it.each(['1e3', '0x10', '5.0', '10kb'])('both refuse MAX_BODY_BYTES=%s', (raw) => {
    expect(() => resolveRuntimeSettings({}, { MAX_BODY_BYTES: raw })).toThrow(
      `MAX_BODY_BYTES: expected a whole number above 0, got "${raw}"`,
    );
    expect(() => readEnvironment({ ...lambda, MAX_BODY_BYTES: raw })).toThrow(EnvironmentError);
  });

  it('both take the same values and defaults', () => {
    const env = { MAX_BODY_BYTES: '2048', RETRY_MAX_ATTEMPTS: '3', RETRY_BASE_DELAY_MS: '0' };
    const local = resolveRuntimeSettings({}, env);
    const deployed = readEnvironment({ ...lambda, ...env });
    expect(local.maxBodyBytes).toBe(deployed.maxBodyBytes);
    expect(local.policy).toEqual(deployed.policy);
    expect(deployed.policy.staleSendingMs).toBe(RETRY.staleSendingMs);
    expect(resolveRuntimeSettings({}, {}).maxBodyBytes).toBe(readEnvironment(lambda).maxBodyBytes);
  });
});
