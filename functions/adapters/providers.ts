import type { RelayConfig } from '../core/config/schema';
import { compileProviderRouting } from '../core/config/routing';
import { createProvider, type ProviderConfig, providerSecretNames } from '../core/provider/registry';
import { providerKeyName, type ProviderContext } from '../core/provider/kinds/common';
import { ProviderType, type SmsProvider } from '../core/provider/outcome';
import type { ProviderSource } from '../relay/provider-scope';
import type { SecretSource } from '../relay/ports';

export interface ProviderSourceOptions {
  /** The provider secret: `<name>-key` per provider, `providerApiKey` for `main`, and an http type's `secret.<name>`. */
  readonly secrets: SecretSource;
  readonly settings: Pick<RelayConfig, 'providers' | 'routing' | 'failover'>;
  /** `PROVIDER_API_KEY`: the first provider's key instead of the secret's. */
  readonly apiKey?: string;
  /** `PROVIDER_BASE_URL` (`--provider-url`): the first provider's URL instead of its configured one. */
  readonly firstBaseUrl?: string;
  /** DNS, CA and user agent for the providers' clients (tests). */
  readonly client?: Omit<ProviderContext, 'secret'>;
}

/** A {@link ProviderSource} that can close the providers it made. */
export interface ClosableProviderSource extends ProviderSource {
  close(): void;
}

/**
 * The configured providers, each created from the registry on first use with the values it reads
 * from the provider secret; `refresh` re-reads the secret and builds the provider again only when
 * one of its values changed (a rotated key), so a caller can tell that retrying is pointless.
 *
 * @example
 * ```ts
 * const providers = createProviderSource({ secrets, settings: config.settings });
 * const at = await providers.get('at');
 * ```
 */
export function createProviderSource({
  secrets,
  settings,
  apiKey,
  firstBaseUrl,
  client = {},
}: ProviderSourceOptions): ClosableProviderSource {
  const names = Object.keys(settings.providers);
  const first = names[0];
  const built = new Map<string, { readonly values: string; readonly provider: SmsProvider }>();
  const made: SmsProvider[] = [];

  const configOf = (name: string): ProviderConfig => {
    const entry = settings.providers[name];
    if (entry === undefined) throw new Error(`provider ${name} is not in the config`);
    if (name !== first || firstBaseUrl === undefined) return entry as ProviderConfig;
    return (
      entry.type === ProviderType.Http ? { ...entry, url: firstBaseUrl } : { ...entry, baseUrl: firstBaseUrl }
    ) as ProviderConfig;
  };

  const get = async (name: string): Promise<SmsProvider> => {
    const config = configOf(name);
    const wanted = providerSecretNames(name, config);
    const values = new Map<string, string | undefined>();
    for (const secret of wanted)
      values.set(
        secret,
        name === first && apiKey !== undefined && secret === providerKeyName(name) ? apiKey : await secrets.get(secret),
      );
    const fingerprint = JSON.stringify([...values]);
    const known = built.get(name);
    if (known?.values === fingerprint) return known.provider;
    const provider = createProvider(name, config, { ...client, secret: (secret) => values.get(secret) });
    built.set(name, { values: fingerprint, provider });
    made.push(provider);
    return provider;
  };

  return {
    routing: compileProviderRouting(settings),
    get,
    refresh: async (name) => {
      await secrets.refresh();
      return await get(name);
    },
    close: () => {
      for (const provider of made.splice(0)) provider.close();
      built.clear();
    },
  };
}
