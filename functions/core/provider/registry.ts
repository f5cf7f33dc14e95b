import { ProviderType, type SmsProvider } from './outcome';
import { createAfricasTalkingProvider, type AfricasTalkingProviderConfig } from './kinds/africastalking';
import { type ProviderContext, providerKeyName } from './kinds/common';
import { createHttpProvider, type HttpProviderConfig, secretNames } from './kinds/http';
import { createSmsServiceProvider, type SmsServiceProviderConfig } from './kinds/sms-service';

/** A provider's config, as `providers.<name>` holds it after validation. */
export type ProviderConfig = SmsServiceProviderConfig | AfricasTalkingProviderConfig | HttpProviderConfig;

type Factory<T extends ProviderType> = (
  name: string,
  config: Extract<ProviderConfig, { type: T }>,
  context: ProviderContext,
) => SmsProvider;

/** Every provider type: one line each (docs/providers.md, "Adding a type"). */
export const PROVIDER_FACTORIES: { readonly [T in ProviderType]: Factory<T> } = {
  'sms-service': createSmsServiceProvider,
  africastalking: createAfricasTalkingProvider,
  http: createHttpProvider,
};

/**
 * Creates the client of one configured provider.
 *
 * @example
 * ```ts
 * const at = createProvider('at', settings.providers.at, { secret: (name) => providerSecret[name] });
 * ```
 * @throws ProviderConfigError when its key is missing from the provider secret or its URL is unusable
 */
export function createProvider(name: string, config: ProviderConfig, context: ProviderContext): SmsProvider {
  const factory = PROVIDER_FACTORIES[config.type] as Factory<ProviderType>;
  return factory(name, config as never, context);
}

/**
 * The names in the provider secret a provider reads: its key (`providerApiKey` for `main`, else
 * `<name>-key`), or an http type's templates' `secret.<name>`.
 *
 * @example
 * ```ts
 * providerSecretNames('at', settings.providers.at); // ['at-key']
 * ```
 */
export function providerSecretNames(name: string, config: ProviderConfig): string[] {
  if (config.type !== ProviderType.Http) return [providerKeyName(name)];
  const templates = [config.body, ...Object.values(config.headers ?? {})].map((text) =>
    typeof text === 'string' ? text : '',
  );
  return [...new Set(templates.flatMap((text) => secretNames(text)))];
}
