import { readFile } from 'node:fs/promises';
import { TransformParameterError } from '@aws-lambda-powertools/parameters/errors';
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretSource } from '../relay/ports';
import { SecretUnavailableError } from './errors';

/** The name of the provider's API key inside the secret. */
export const PROVIDER_API_KEY = 'providerApiKey';

/** How long a Secrets Manager read is reused, in seconds. */
export const SECRET_MAX_AGE_SECONDS = 300;

export interface SecretsManagerSourceOptions {
  /**
   * Seconds a read is cached (Powertools' `maxAge`): one Secrets Manager call per container per
   * five minutes, and a rotated route secret is picked up within that time.
   * @default 300
   */
  readonly maxAgeSeconds?: number;
}

/**
 * A {@link SecretSource} over one JSON secret in Secrets Manager, read through Powertools'
 * `getSecret` (cached for `maxAgeSeconds`). `refresh()` forces a read; concurrent refreshes (every
 * sender of a batch hitting the same 401) share one call.
 *
 * @example
 * ```ts
 * const secrets = createSecretsManagerSource(process.env.SECRET_ID!);
 * const apiKey = await secrets.get('providerApiKey');
 * ```
 */
export function createSecretsManagerSource(
  secretId: string,
  { maxAgeSeconds = SECRET_MAX_AGE_SECONDS }: SecretsManagerSourceOptions = {},
): SecretSource {
  const read = async (forceFetch: boolean): Promise<ReadonlyMap<string, string>> => {
    let value: unknown;
    try {
      value = await getSecret(secretId, { transform: 'json', maxAge: maxAgeSeconds, forceFetch });
    } catch (error) {
      throw secretsManagerError(secretId, error);
    }
    return secretValues(value, `secret ${secretId}`);
  };
  let refreshing: Promise<void> | undefined;
  return {
    get: async (name) => (await read(false)).get(name),
    refresh: () => {
      refreshing ??= read(true).then(
        () => {
          refreshing = undefined;
        },
        (error: unknown) => {
          refreshing = undefined;
          throw error;
        },
      );
      return refreshing;
    },
  };
}

/**
 * A {@link SecretSource} over a local JSON file of the same shape as the secret (the local
 * runtime's `RELAY_SECRETS_FILE`). Read once; `refresh()` reads it again, so editing the file
 * rotates a key like `put-secret-value` does on AWS.
 *
 * @example
 * ```ts
 * const secrets = createFileSecretSource('.relay/secrets.json');
 * ```
 */
export function createFileSecretSource(path: string): SecretSource {
  const read = async (): Promise<ReadonlyMap<string, string>> => {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new SecretUnavailableError(
        `cannot read the secrets file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // JSON.parse's message quotes the text around the error: the cause is left out on purpose.
      throw new SecretUnavailableError(`the secrets file ${path} is not valid JSON`);
    }
    return secretValues(value, `the secrets file ${path}`);
  };
  let current: Promise<ReadonlyMap<string, string>> | undefined;
  const load = (): Promise<ReadonlyMap<string, string>> => {
    const loading = read();
    current = loading;
    // A failed read is not remembered: the next call tries again.
    loading.catch(() => {
      if (current === loading) current = undefined;
    });
    return loading;
  };
  return {
    get: async (name) => (await (current ?? load())).get(name),
    refresh: async () => {
      await load();
    },
  };
}

/** The string values of a secret that must be a JSON object; other values are ignored. */
function secretValues(value: unknown, what: string): ReadonlyMap<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SecretUnavailableError(`${what} is not a JSON object of named values`);
  }
  const values = new Map<string, string>();
  for (const [name, entry] of Object.entries(value))
    if (typeof entry === 'string' && entry !== '') values.set(name, entry);
  return values;
}

/**
 * Describes a failed read without anything that could hold the secret: a transform error quotes
 * the value, and an SDK deserialisation error can carry the raw response. An AWS service error's
 * own text (access denied, not found) is kept: it is what an operator needs.
 */
function secretsManagerError(secretId: string, error: unknown): SecretUnavailableError {
  if (error instanceof TransformParameterError)
    return new SecretUnavailableError(`secret ${secretId} is not valid JSON`);
  const source = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const service = source as {
    name?: unknown;
    message?: unknown;
    $fault?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  const name = typeof service.name === 'string' ? service.name : 'Error';
  const status =
    typeof service.$metadata?.httpStatusCode === 'number' ? ` (HTTP ${service.$metadata.httpStatusCode})` : '';
  const text = service.$fault !== undefined && typeof service.message === 'string' ? `: ${service.message}` : '';
  return new SecretUnavailableError(`cannot read secret ${secretId}: ${name}${status}${text}`);
}
