import { MAX_BODY_BYTES, SWEEP_PENDING_GRACE_MS } from '../../core/defaults';
import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../relay/ports';
import { EnvironmentError } from './errors';

/**
 * The handlers' environment variables: a public contract shared by the CDK stack (which sets them
 * on every function) and the local runtime (which sets the same ones in its own process). An empty
 * value counts as unset.
 *
 * | Variable | Required | Meaning |
 * |---|---|---|
 * | `RELAY_CONFIG` | yes | Path of the config: a YAML file (`config/<env>.yaml`, validated and compiled at start), or the JSON the stack stages (already validated). A relative path resolves against `LAMBDA_TASK_ROOT` when set (on AWS: `relay-config.json` next to `index.mjs`), else the working directory. |
 * | `TABLE_NAME` | yes | The DynamoDB table. |
 * | `DYNAMODB_ENDPOINT` | no | A local DynamoDB (dynalite) URL; then region `local` and dummy credentials are used. Absent on AWS. |
 * | `SECRET_ID` | one of the two | Secrets Manager id or ARN of the JSON secret `{ "providerApiKey": "…", "<route secret name>": "…" }`. |
 * | `RELAY_SECRETS_FILE` | one of the two | A local JSON file of the same shape; wins over `SECRET_ID`. Relative to the working directory. |
 * | `PROVIDER_BASE_URL` | no | Replaces `provider.baseUrl` of the config. |
 * | `PROVIDER_API_KEY` | no | Replaces the secret's `providerApiKey` (then a 401 cannot be cured by re-reading the secret). |
 * | `MAX_BODY_BYTES` | no | Largest webhook body ingest accepts; default {@link MAX_BODY_BYTES}. |
 * | `RETRY_MAX_ATTEMPTS` | no | Attempts per message; default {@link DEFAULT_RETRY_POLICY}`.maxAttempts` (5). |
 * | `RETRY_BASE_DELAY_MS` | no | Delay before the second attempt, doubling after; default {@link DEFAULT_RETRY_POLICY}`.baseDelayMs`. |
 * | `STALE_SENDING_MS` | no | A record in SENDING longer than this belongs to a dead sender; default {@link DEFAULT_RETRY_POLICY}`.staleSendingMs`. |
 * | `SWEEP_PENDING_GRACE_MS` | no | The sweeper leaves PENDING records younger than this to the stream-fed sender; default {@link SWEEP_PENDING_GRACE_MS} (the local runtime, which has no stream, sets 0). |
 * | `BALANCE_THRESHOLD` | no | Replaces `balance.threshold` of the config (the stack sets it from the same config). |
 * | `POWERTOOLS_SERVICE_NAME`, `POWERTOOLS_METRICS_NAMESPACE`, `POWERTOOLS_LOG_LEVEL`, … | no | Read by Powertools itself; the service and namespace default to `sms-relay` and `SmsRelay` (the stack sets `SmsRelay/<env>`, see `metricsNamespace`). |
 *
 * @example
 * ```sh
 * RELAY_CONFIG=config/local.yaml TABLE_NAME=sms-relay DYNAMODB_ENDPOINT=http://127.0.0.1:8000 \
 *   RELAY_SECRETS_FILE=.relay/secrets.json SWEEP_PENDING_GRACE_MS=0 node local-runtime.mjs
 * ```
 */
export const ENV = {
  relayConfig: 'RELAY_CONFIG',
  taskRoot: 'LAMBDA_TASK_ROOT',
  tableName: 'TABLE_NAME',
  dynamodbEndpoint: 'DYNAMODB_ENDPOINT',
  secretId: 'SECRET_ID',
  secretsFile: 'RELAY_SECRETS_FILE',
  providerBaseUrl: 'PROVIDER_BASE_URL',
  providerApiKey: 'PROVIDER_API_KEY',
  maxBodyBytes: 'MAX_BODY_BYTES',
  retryMaxAttempts: 'RETRY_MAX_ATTEMPTS',
  retryBaseDelayMs: 'RETRY_BASE_DELAY_MS',
  staleSendingMs: 'STALE_SENDING_MS',
  sweepPendingGraceMs: 'SWEEP_PENDING_GRACE_MS',
  balanceThreshold: 'BALANCE_THRESHOLD',
} as const;

/** Defaults of the optional numeric variables. */
export const ENV_DEFAULTS = {
  maxBodyBytes: MAX_BODY_BYTES,
  sweepPendingGraceMs: SWEEP_PENDING_GRACE_MS,
} as const;

/** Where the secret values come from. */
export type SecretLocation =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'secrets-manager'; readonly secretId: string };

/** The environment, read and checked. */
export interface RelayEnvironment {
  /** Absolute path of the config (YAML, or the staged JSON). */
  readonly configPath: string;
  readonly tableName: string;
  readonly dynamodbEndpoint?: string;
  readonly secrets: SecretLocation;
  readonly providerBaseUrl?: string;
  readonly providerApiKey?: string;
  /** @default {@link MAX_BODY_BYTES} */
  readonly maxBodyBytes: number;
  /** {@link DEFAULT_RETRY_POLICY} with the `RETRY_*` and `STALE_SENDING_MS` overrides applied. */
  readonly policy: RetryPolicy;
  /** @default {@link SWEEP_PENDING_GRACE_MS} */
  readonly sweepPendingGraceMs: number;
  readonly balanceThreshold?: number;
}

/**
 * Reads and validates the handlers' environment (see {@link ENV} for the contract). Every problem
 * is reported at once.
 *
 * @throws {EnvironmentError} a required variable is missing or a value is invalid
 *
 * @example
 * ```ts
 * const env = readEnvironment(process.env);
 * env.policy.maxAttempts; // 5 unless RETRY_MAX_ATTEMPTS says otherwise
 * ```
 */
export function readEnvironment(source: Readonly<Record<string, string | undefined>> = process.env): RelayEnvironment {
  const problems: string[] = [];
  const text = (name: string): string | undefined => {
    const value = source[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const required = (name: string, meaning: string): string => {
    const value = text(name);
    if (value === undefined) problems.push(`${name} is required (${meaning})`);
    return value ?? '';
  };
  const number = (name: string, fallback: number, { min, integer = true }: { readonly min: number; readonly integer?: boolean }): number => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min) {
      problems.push(`${name} must be ${integer ? 'a whole number' : 'a number'} ≥ ${min}, got "${raw}"`);
      return fallback;
    }
    return value;
  };

  const config = required(ENV.relayConfig, 'path of the config YAML');
  const taskRoot = text(ENV.taskRoot);
  const configPath = isAbsolute(config) ? config : resolve(taskRoot ?? process.cwd(), config);
  const tableName = required(ENV.tableName, 'the DynamoDB table');
  const dynamodbEndpoint = text(ENV.dynamodbEndpoint);
  if (dynamodbEndpoint !== undefined && !isHttpUrl(dynamodbEndpoint)) {
    problems.push(`${ENV.dynamodbEndpoint} must be an http(s) URL, got "${dynamodbEndpoint}"`);
  }

  const secretsFile = text(ENV.secretsFile);
  const secretId = text(ENV.secretId);
  let secrets: SecretLocation = { kind: 'file', path: '' };
  if (secretsFile !== undefined) secrets = { kind: 'file', path: resolve(secretsFile) };
  else if (secretId !== undefined) secrets = { kind: 'secrets-manager', secretId };
  else problems.push(`${ENV.secretId} or ${ENV.secretsFile} is required (where the provider API key and route secrets are)`);

  const providerBaseUrl = text(ENV.providerBaseUrl);
  if (providerBaseUrl !== undefined && !isHttpUrl(providerBaseUrl)) {
    // Not echoed: a URL can carry credentials.
    problems.push(`${ENV.providerBaseUrl} must be an http(s) URL`);
  }
  // Never echoed back: it is a credential.
  const providerApiKey = text(ENV.providerApiKey);

  const maxBodyBytes = number(ENV.maxBodyBytes, ENV_DEFAULTS.maxBodyBytes, { min: 1 });
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    maxAttempts: number(ENV.retryMaxAttempts, DEFAULT_RETRY_POLICY.maxAttempts, { min: 1 }),
    baseDelayMs: number(ENV.retryBaseDelayMs, DEFAULT_RETRY_POLICY.baseDelayMs, { min: 0 }),
    staleSendingMs: number(ENV.staleSendingMs, DEFAULT_RETRY_POLICY.staleSendingMs, { min: 1 }),
  };
  const sweepPendingGraceMs = number(ENV.sweepPendingGraceMs, ENV_DEFAULTS.sweepPendingGraceMs, { min: 0 });
  const hasThreshold = text(ENV.balanceThreshold) !== undefined;
  const balanceThreshold = number(ENV.balanceThreshold, 0, { min: 0, integer: false });

  if (problems.length > 0) throw new EnvironmentError(problems);
  return {
    configPath,
    tableName,
    ...(dynamodbEndpoint === undefined ? {} : { dynamodbEndpoint }),
    secrets,
    ...(providerBaseUrl === undefined ? {} : { providerBaseUrl }),
    ...(providerApiKey === undefined ? {} : { providerApiKey }),
    maxBodyBytes,
    policy,
    sweepPendingGraceMs,
    ...(hasThreshold ? { balanceThreshold } : {}),
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
