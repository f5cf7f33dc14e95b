import { SMS_SERVICE_PREFIX } from '../defaults';
import { DEFAULT_FAILOVER_ON, ProviderType, type FailoverReason } from '../provider/outcome';

/** What the routing reads of a config (the validated `providers`, `routing` and `failover`). */
export interface RoutingSettings {
  readonly providers: Readonly<Record<string, { readonly type: ProviderType }>>;
  readonly routing?:
    | ReadonlyArray<{ readonly numbers: readonly string[]; readonly use: readonly string[] }>
    | undefined;
  readonly failover?: { readonly on: readonly FailoverReason[] } | undefined;
}

/**
 * The providers of a config, compiled once: which providers a number goes to, in failover order.
 *
 * @example
 * ```ts
 * const routing = compileProviderRouting(settings);
 * routing.providersFor('+254712345678'); // ['at', 'gateway']
 * ```
 */
export interface ProviderRouting {
  /** Every provider, in the order the config writes them (the first is `main` of a `provider:` config). */
  readonly names: readonly string[];
  /** `failover.on`: the not-sent reasons that move a send to the next provider. */
  readonly failoverOn: readonly FailoverReason[];
  /**
   * The providers an E.164 number goes to, in failover order: the `use` of the routing entry with
   * the longest prefix the number starts with (without `routing:`, every provider in the order
   * written), less those that cannot text it (`sms-service`: `+255` only). Empty: no provider covers it.
   */
  providersFor(e164: string): readonly string[];
}

/**
 * Whether a provider type can text numbers starting with `prefix` at all (`+2` may hold `+255`
 * numbers; `+254` never does for `sms-service`).
 *
 * @example
 * ```ts
 * typeCanCover('sms-service', '+254'); // false
 * ```
 */
export function typeCanCover(type: ProviderType, prefix: string): boolean {
  if (type !== ProviderType.SmsService) return true;
  return prefix.startsWith(SMS_SERVICE_PREFIX) || SMS_SERVICE_PREFIX.startsWith(prefix);
}

function typeCovers(type: ProviderType, e164: string): boolean {
  return type !== ProviderType.SmsService || e164.startsWith(SMS_SERVICE_PREFIX);
}

/**
 * Compiles `providers`, `routing` and `failover` (already validated: every name in `use` is a provider).
 *
 * @example
 * ```ts
 * compileProviderRouting({ providers: { main: { type: 'sms-service' } } }).providersFor('+255712345678'); // ['main']
 * ```
 */
export function compileProviderRouting(settings: RoutingSettings): ProviderRouting {
  const names = Object.keys(settings.providers);
  // Longest prefix first, so the first match is the most specific.
  const entries = (settings.routing ?? [])
    .flatMap(({ numbers, use }) => numbers.map((prefix) => ({ prefix, use })))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  const covering = (candidates: readonly string[], e164: string): string[] =>
    candidates.filter((name) => {
      const provider = settings.providers[name];
      return provider !== undefined && typeCovers(provider.type, e164);
    });
  return {
    names,
    failoverOn: settings.failover?.on ?? DEFAULT_FAILOVER_ON,
    providersFor(e164) {
      if (!/^\+\d{1,15}$/.test(e164)) return [];
      if (settings.routing === undefined) return covering(names, e164);
      const entry = entries.find(({ prefix }) => e164.startsWith(prefix));
      return entry === undefined ? [] : covering(entry.use, e164);
    },
  };
}
