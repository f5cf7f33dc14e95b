import { DEFAULT_CURRENCY } from '../defaults';
import type { RelayConfig, RouteConfig } from './schema';

/**
 * What the relay's operations other than ingest read of a route: its settings, sender ID and the
 * numbers written in its config. No templates: the sender, the sweeper and the balance watch
 * render nothing, so they never load LiquidJS or libphonenumber.
 */
export interface RouteView {
  readonly id: string;
  readonly config: RouteConfig;
  /** The route's `senderId`, else the provider's `defaultSenderId`, else none (the service's own default). */
  readonly senderId: string | undefined;
  /**
   * Per entry of `config.recipients`, in order: the numbers a literal entry holds, normalised to
   * `255` + nine digits; `null` for a templated entry (rendered per webhook).
   */
  readonly recipientNumbers: ReadonlyArray<readonly string[] | null>;
}

/**
 * The numbers written in a route's config, normalised, in config order (repeats kept): where the
 * sweeper sends the route's held-back summary.
 *
 * @example
 * ```ts
 * literalRecipients(route); // ['255712345678', '255754111222']
 * ```
 */
export function literalRecipients(route: Pick<RouteView, 'recipientNumbers'>): string[] {
  return route.recipientNumbers.flatMap((numbers) => numbers ?? []);
}

/**
 * The config as the sender, the sweeper and the balance watch need it. A compiled config
 * (`LoadedConfig`, with templates) is one too, so ingest and the local runtime pass theirs.
 */
export interface RelayConfigView {
  /** The validated config, defaults applied. */
  readonly settings: RelayConfig;
  readonly routes: ReadonlyMap<string, RouteView>;
  /** `balance.notify`, normalised to `255` + nine digits, without repeats. */
  readonly balanceNotify: readonly string[];
}

/**
 * The currency a person is shown the account's balance in, before the service has named one: the
 * first route's `currency` (the SMS service's account has one balance), else the default.
 *
 * @example
 * ```ts
 * balanceCurrency(config); // 'TZS'
 * ```
 */
export function balanceCurrency(config: Pick<RelayConfigView, 'routes'>): string {
  return [...config.routes.values()][0]?.config.currency ?? DEFAULT_CURRENCY;
}
