import { MAX_BODY_BYTES, RETRY, SWEEP_PENDING_GRACE_MS } from './defaults';

/**
 * The environment variables both the Lambda wiring (`functions/handlers/wiring/env.ts`) and the
 * local runtime (`local/shared/settings.ts`) read: their names, in one place. An empty value
 * counts as unset everywhere.
 */
export const ENV = {
  relayConfig: 'RELAY_CONFIG',
  taskRoot: 'LAMBDA_TASK_ROOT',
  tableName: 'TABLE_NAME',
  dynamodbEndpoint: 'DYNAMODB_ENDPOINT',
  secretId: 'SECRET_ID',
  providerSecretId: 'PROVIDER_SECRET_ID',
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

/** What is wrong with a URL variable; each reader words it (see {@link httpUrlProblem}). */
export type UrlProblem = 'not-a-url' | 'not-http' | 'credentials';

/**
 * The one check of a URL variable (`PROVIDER_BASE_URL`, `DYNAMODB_ENDPOINT`): an absolute http(s)
 * URL without a user or password (a key in the URL would reach the banner and the logs; the SMS
 * client refuses it too). The problem never holds the value, which may carry credentials.
 *
 * @example
 * ```ts
 * httpUrlProblem('https://user:pw@sms.example'); // 'credentials'
 * httpUrlProblem('http://127.0.0.1:4010');      // undefined
 * ```
 */
export function httpUrlProblem(value: string): UrlProblem | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not-a-url';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'not-http';
  return url.username !== '' || url.password !== '' ? 'credentials' : undefined;
}

/** How a numeric variable's text is read: a whole number (digits only), or any finite number. */
export interface NumericVariable {
  readonly name: string;
  /** The smallest value accepted. */
  readonly min: number;
  /** `false`: a decimal is accepted too. @default true */
  readonly integer?: boolean;
  /** The value when the variable is unset; `undefined`: none. */
  readonly fallback: number | undefined;
}

/** The numeric environment variables, with their parsers' bounds and their defaults. */
export const NUMERIC_ENV = {
  maxBodyBytes: { name: ENV.maxBodyBytes, min: 1, fallback: MAX_BODY_BYTES },
  retryMaxAttempts: { name: ENV.retryMaxAttempts, min: 1, fallback: RETRY.maxAttempts },
  retryBaseDelayMs: { name: ENV.retryBaseDelayMs, min: 0, fallback: RETRY.baseDelayMs },
  staleSendingMs: { name: ENV.staleSendingMs, min: 1, fallback: RETRY.staleSendingMs },
  sweepPendingGraceMs: { name: ENV.sweepPendingGraceMs, min: 0, fallback: SWEEP_PENDING_GRACE_MS },
  balanceThreshold: { name: ENV.balanceThreshold, min: 0, integer: false, fallback: undefined },
} as const satisfies Record<string, NumericVariable>;

/** A value that cannot be used: each reader words it its own way (the texts are pinned by tests). */
export interface NumericProblem {
  readonly name: string;
  readonly raw: string;
  readonly min: number;
  readonly integer: boolean;
}

type Source = Readonly<Record<string, string | undefined>>;

/**
 * A variable's text, trimmed; `undefined` when unset or empty.
 *
 * @example
 * ```ts
 * envText({ PORT: ' ' }, 'PORT'); // undefined
 * ```
 */
export function envText(source: Source, name: string): string | undefined {
  const value = source[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Reads the numeric variables named by `keys` from `source`: the default of each unset one, and a
 * problem for each value that is not a number of the right kind at or above its minimum.
 *
 * @example
 * ```ts
 * const { values, problems } = readNumericEnv(process.env, ['maxBodyBytes']);
 * values.maxBodyBytes; // 262144 unless MAX_BODY_BYTES says otherwise
 * ```
 */
export function readNumericEnv<K extends keyof typeof NUMERIC_ENV>(
  source: Source,
  keys: readonly K[],
): {
  readonly values: { [P in K]: (typeof NUMERIC_ENV)[P]['fallback'] extends number ? number : number | undefined };
  readonly problems: readonly NumericProblem[];
} {
  const values: Record<string, number | undefined> = {};
  const problems: NumericProblem[] = [];
  for (const key of keys) {
    const variable: NumericVariable = NUMERIC_ENV[key];
    const { name, min, integer = true, fallback } = variable;
    const raw = envText(source, name);
    const value = raw === undefined ? fallback : parseNumber(raw, integer);
    if (raw !== undefined && (value === undefined || value < min)) {
      problems.push({ name, raw, min, integer });
      values[key] = fallback;
    } else {
      values[key] = value;
    }
  }
  return { values: values as never, problems };
}

function parseNumber(raw: string, integer: boolean): number | undefined {
  if (integer) return /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : undefined;
}
