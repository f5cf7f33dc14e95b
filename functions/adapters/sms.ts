import { createSmsClient, type SmsClient } from '../core/provider';
import type { SecretSource, SmsClientSource } from '../relay/ports';
import { MissingSecretValueError } from './errors';
import { PROVIDER_API_KEY } from './secrets';

export interface SmsClientSourceOptions {
  readonly secrets: SecretSource;
  /** The service's `{base_url}` (`PROVIDER_BASE_URL`, else the config's `provider.baseUrl`). */
  readonly baseUrl: string;
  /** The config's `provider.timeoutMs`. */
  readonly timeoutMs: number;
  /**
   * A fixed API key (`PROVIDER_API_KEY`) used instead of the secret's `providerApiKey`.
   * @default - the secret's value
   */
  readonly apiKey?: string;
  /**
   * Builds a client; tests pass one that counts.
   * @default createSmsClient
   */
  readonly create?: typeof createSmsClient;
}

/** An {@link SmsClientSource} that can close the clients it made. */
export interface ClosableSmsClientSource extends SmsClientSource {
  /** Closes every client this source made, sockets included. Call it once no send is in flight. */
  close(): void;
}

/**
 * SMS clients keyed by the API key they were built with. `refresh()` re-reads the secret (after a
 * 401) and switches to a new client only when the key changed, so a caller can tell that retrying
 * is pointless when it gets the same client back.
 *
 * @throws {MissingSecretValueError} from `client()`/`refresh()` when the secret has no `providerApiKey`
 *
 * @example
 * ```ts
 * const sms = createSmsClientSource({ secrets, baseUrl: config.provider.baseUrl, timeoutMs: config.provider.timeoutMs });
 * const { balance } = await (await sms.client()).getBalance();
 * sms.close();
 * ```
 */
export function createSmsClientSource({
  secrets,
  baseUrl,
  timeoutMs,
  apiKey,
  create = createSmsClient,
}: SmsClientSourceOptions): ClosableSmsClientSource {
  let current: { readonly key: string; readonly client: SmsClient } | undefined;
  const made: SmsClient[] = [];
  const client = async (): Promise<SmsClient> => {
    const key = apiKey ?? (await secrets.get(PROVIDER_API_KEY));
    if (key === undefined) throw new MissingSecretValueError(PROVIDER_API_KEY);
    // Checked after the await: of concurrent callers with a new key, the first builds, the rest reuse.
    if (current?.key === key) return current.client;
    // The old client stays open until `close()`: a send still in flight on it would be cut, and a
    // cut send is `maybe-sent`.
    current = { key, client: create({ baseUrl, apiKey: key, timeoutMs }) };
    made.push(current.client);
    return current.client;
  };
  return {
    client,
    refresh: async () => {
      // A fixed key cannot change by re-reading anything.
      if (apiKey === undefined) await secrets.refresh();
      return await client();
    },
    close: () => {
      for (const old of made.splice(0)) old.close();
      current = undefined;
    },
  };
}
