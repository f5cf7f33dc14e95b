import type { MAX_BODY_BYTES, SWEEP_PENDING_GRACE_MS } from '../../core/defaults';
import { ENV, envText, httpUrlProblem, NUMERIC_ENV, readNumericEnv } from '../../core/environment';
import { isAbsolute, resolve } from 'node:path';
import { retryPolicyOf, type RetryPolicy } from '../../relay/ports';
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
 * | `SECRET_ID` | one of the three | Secrets Manager id or ARN of the route secrets, JSON `{ "<route secret name>": "…" }` (the stack gives it to ingest only); without `PROVIDER_SECRET_ID` its `providerApiKey` is the provider key too. |
 * | `PROVIDER_SECRET_ID` | one of the three | Secrets Manager id or ARN of the provider key, JSON `{ "providerApiKey": "…" }` (the stack gives it to the sender, the sweeper and the balance watch only). |
 * | `RELAY_SECRETS_FILE` | one of the three | A local JSON file holding both, `{ "providerApiKey": "…", "<route secret name>": "…" }`; wins over the two above. Relative to the working directory. |
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
export { ENV };

/** Defaults of the optional numeric variables (from {@link NUMERIC_ENV}). */
export const ENV_DEFAULTS = {
  maxBodyBytes: NUMERIC_ENV.maxBodyBytes.fallback,
  sweepPendingGraceMs: NUMERIC_ENV.sweepPendingGraceMs.fallback,
} as const;

/** Where the secret values come from. */
export type SecretLocation =
  | { readonly kind: 'file'; readonly path: string }
  /** Secrets Manager: the route secrets and the provider key, each absent when the function is not given it. */
  | { readonly kind: 'secrets-manager'; readonly routes?: string; readonly provider?: string };

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
  const text = (name: string): string | undefined => envText(source, name);
  const required = (name: string, meaning: string): string => {
    const value = text(name);
    if (value === undefined) problems.push(`${name} is required (${meaning})`);
    return value ?? '';
  };

  const config = required(ENV.relayConfig, 'path of the config YAML');
  const taskRoot = text(ENV.taskRoot);
  const configPath = isAbsolute(config) ? config : resolve(taskRoot ?? process.cwd(), config);
  const tableName = required(ENV.tableName, 'the DynamoDB table');
  const dynamodbEndpoint = text(ENV.dynamodbEndpoint);
  const endpointProblem = dynamodbEndpoint === undefined ? undefined : httpUrlProblem(dynamodbEndpoint);
  // dynalite's endpoint is local and may name a user; only its scheme is checked.
  if (endpointProblem === 'not-a-url' || endpointProblem === 'not-http') {
    problems.push(`${ENV.dynamodbEndpoint} must be an http(s) URL, got "${dynamodbEndpoint}"`);
  }

  const secretsFile = text(ENV.secretsFile);
  const secretId = text(ENV.secretId);
  const providerSecretId = text(ENV.providerSecretId) ?? secretId;
  let secrets: SecretLocation = { kind: 'file', path: '' };
  if (secretsFile !== undefined) secrets = { kind: 'file', path: resolve(secretsFile) };
  else if (secretId !== undefined || providerSecretId !== undefined) {
    secrets = {
      kind: 'secrets-manager',
      ...(secretId === undefined ? {} : { routes: secretId }),
      ...(providerSecretId === undefined ? {} : { provider: providerSecretId }),
    };
  } else
    problems.push(
      `${ENV.secretId}, ${ENV.providerSecretId} or ${ENV.secretsFile} is required (where the route secrets and the provider API key are)`,
    );

  const providerBaseUrl = text(ENV.providerBaseUrl);
  const urlProblem = providerBaseUrl === undefined ? undefined : httpUrlProblem(providerBaseUrl);
  // Not echoed: a URL can carry credentials.
  if (urlProblem === 'credentials')
    problems.push(`${ENV.providerBaseUrl} must not contain credentials; use ${ENV.providerApiKey}`);
  else if (urlProblem !== undefined) problems.push(`${ENV.providerBaseUrl} must be an http(s) URL`);
  // Never echoed back: it is a credential.
  const providerApiKey = text(ENV.providerApiKey);

  const { values, problems: numeric } = readNumericEnv(source, [
    'maxBodyBytes',
    'retryMaxAttempts',
    'retryBaseDelayMs',
    'staleSendingMs',
    'sweepPendingGraceMs',
    'balanceThreshold',
  ]);
  for (const { name, raw, min, integer } of numeric)
    problems.push(`${name} must be ${integer ? 'a whole number' : 'a number'} ≥ ${min}, got "${raw}"`);
  const { maxBodyBytes, sweepPendingGraceMs, balanceThreshold } = values;
  const policy = retryPolicyOf(values);

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
    ...(balanceThreshold === undefined ? {} : { balanceThreshold }),
  };
}
