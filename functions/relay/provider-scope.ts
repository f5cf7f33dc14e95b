import type { RelayConfigView } from '../core/config/view';
import { ProviderType, type SmsProvider } from '../core/provider/outcome';
import { SendCertainty, SmsErrorCode, SmsOperation, SmsServiceError, type SmsClient } from '../core/provider';
import { MAIN_PROVIDER, type MessageStore } from '../store';
import { PER_PROVIDER_METRICS } from '../core/metrics';
import type { RelayContext, RelayMetrics, SmsClientSource } from './ports';

export type { ProviderSource } from './ports';

/**
 * Whether a config sends through the provider chain: a second provider, or a first that is not
 * the SMS service. A config of one `sms-service` provider keeps the one-request send of
 * `sendMessage` exactly as before providers existed.
 *
 * @example
 * ```ts
 * sendsThroughChain({ providers: { main: { type: 'sms-service', … } } }); // false
 * ```
 */
export function sendsThroughChain(settings: Pick<RelayConfigView['settings'], 'providers'>): boolean {
  const entries = Object.values(settings.providers);
  return entries.length > 1 || entries[0]?.type !== ProviderType.SmsService;
}

/** The provider-keyed operations of the store: what a scope binds to one provider. */
type ProviderKeyed = Pick<
  MessageStore,
  | 'getCircuit'
  | 'circuit'
  | 'getBalanceState'
  | 'updateBalanceState'
  | 'recordPrice'
  | 'reserveCredit'
  | 'settleCredit'
  | 'rebaseCredit'
  | 'keepStaleCredit'
  | 'observeSentCredit'
  | 'takeRateSlot'
  | 'raiseRateSlot'
>;

/** One scoped store per store and provider: the circuit keeps what it knows per store object. */
const scopedStores = new WeakMap<object, Map<string, object>>();

function scopedStore<Store extends object>(store: Store, provider: string): Store {
  if (provider === MAIN_PROVIDER) return store;
  let byProvider = scopedStores.get(store);
  if (byProvider === undefined) scopedStores.set(store, (byProvider = new Map()));
  const known = byProvider.get(provider);
  if (known !== undefined) return known as Store;
  const keyed = store as unknown as ProviderKeyed;
  const withProvider = <I extends object | undefined>(input: I) => ({ ...input, provider });
  const bound: ProviderKeyed = {
    getCircuit: async () => await keyed.getCircuit(provider),
    circuit: {
      failed: async (input) => await keyed.circuit.failed(withProvider(input)),
      succeeded: async (input) => await keyed.circuit.succeeded(withProvider(input)),
      claimProbe: async (input) => await keyed.circuit.claimProbe(withProvider(input)),
      probeFailed: async (input) => await keyed.circuit.probeFailed(withProvider(input)),
      releaseProbe: async (input) => await keyed.circuit.releaseProbe(withProvider(input)),
      claimTrial: async (input) => await keyed.circuit.claimTrial(withProvider(input)),
      releaseTrial: async (input) => await keyed.circuit.releaseTrial(withProvider(input)),
      open: async (input) => await keyed.circuit.open(withProvider(input)),
      close: async () => await keyed.circuit.close(provider),
    },
    getBalanceState: async () => await keyed.getBalanceState(provider),
    updateBalanceState: async (input) => await keyed.updateBalanceState(withProvider(input)),
    recordPrice: async (input) => await keyed.recordPrice(withProvider(input)),
    reserveCredit: async (input) => await keyed.reserveCredit(withProvider(input)),
    settleCredit: async (input) => await keyed.settleCredit(withProvider(input)),
    rebaseCredit: async (input) => await keyed.rebaseCredit(withProvider(input)),
    keepStaleCredit: async (input) => await keyed.keepStaleCredit(withProvider(input)),
    observeSentCredit: async (input) => await keyed.observeSentCredit(withProvider(input)),
    takeRateSlot: async (input) => await keyed.takeRateSlot(withProvider(input)),
    raiseRateSlot: async (input) => await keyed.raiseRateSlot(withProvider(input)),
  };
  // Everything else (records, limits, notices…) is the store's own; only the provider's items are bound.
  const scoped = new Proxy(store, {
    get: (target, property, receiver) =>
      property in bound ? bound[property as keyof ProviderKeyed] : Reflect.get(target, property, receiver),
  });
  byProvider.set(provider, scoped);
  return scoped;
}

/** A balance read of a provider, as the SMS client's: what the circuit's probe and the balance watch call. */
function providerClientSource(provider: SmsProvider): SmsClientSource {
  const client = {
    async getBalance(options?: { readonly timeoutMs?: number }) {
      // A provider whose API has no balance (`http`) answers the probe as up: its trial send decides.
      if (provider.balance === undefined) return { balance: Number.NaN, currency: '', smsRate: Number.NaN };
      const read = await provider.balance(options);
      if (!read.ok)
        throw new SmsServiceError(`${provider.name}: balance not read (${read.detail})`, {
          operation: SmsOperation.BALANCE,
          code: SmsErrorCode.NETWORK,
          delivery: SendCertainty.NOT_SENT,
        });
      return { balance: read.balance, currency: read.currency, smsRate: read.pricePerSms ?? Number.NaN };
    },
    send: () => {
      throw new Error(`${provider.name} sends through the provider interface`);
    },
    close: () => provider.close(),
  } as unknown as SmsClient;
  return { client: async () => client, refresh: async () => client };
}

/** The per-send metrics of a provider carry its name (`METRICS.providerDimension`). */
function providerMetrics(metrics: RelayMetrics, provider: string): RelayMetrics {
  return {
    add: (name, value, route, named) =>
      metrics.add(name, value, route, named ?? (PER_PROVIDER_METRICS.has(name) ? provider : undefined)),
  };
}

/**
 * The context of one provider: the store's circuit, balance, credit and rate items bound to it
 * (`main` keeps the store as it is), `settings.provider` and `settings.balance` its own (the
 * top-level `balance:` is the first provider's), `sms` its balance read, and its per-send metrics
 * published with its name as well. The circuit, the
 * credit gate, the rate slot and the balance watch run on it unchanged.
 */
export function providerScope<Config extends RelayConfigView, Store extends object>(
  context: RelayContext<Config, Store>,
  provider: SmsProvider,
): RelayContext<Config, Store> {
  const { settings } = context.config;
  const entry = settings.providers[provider.name];
  if (entry === undefined) throw new Error(`provider ${provider.name} is not in the config`);
  const first = Object.keys(settings.providers)[0] === provider.name;
  const balance = entry.balance ?? (first ? settings.balance : undefined);
  const view = {
    baseUrl: entry.type === ProviderType.Http ? entry.url : entry.baseUrl,
    timeoutMs: entry.timeoutMs,
    ...(entry.type === ProviderType.SmsService
      ? {
          ...(entry.defaultSenderId === undefined ? {} : { defaultSenderId: entry.defaultSenderId }),
          ...(entry.maxPerSecond === undefined ? {} : { maxPerSecond: entry.maxPerSecond }),
        }
      : {}),
  };
  const config = {
    ...context.config,
    settings: { ...settings, provider: view, balance },
  } as Config;
  return {
    ...context,
    config,
    store: scopedStore(context.store, provider.name),
    sms: providerClientSource(provider),
    metrics: providerMetrics(context.metrics, provider.name),
    provider: provider.name,
  };
}
