import type { RelayConfigView } from '../core/config/view';
import { type BalanceCheck, BalanceUnreadableError, type BalanceWatchStore, checkBalance } from './balance';
import { errorName } from './error-name';
import type { RelayContext } from './ports';
import { providerScope, sendsThroughChain } from './provider-scope';

/**
 * The balance watch of every provider whose API has a balance (the `http` type has none): each
 * read, published and held to its own threshold (its `balance:` block; the top-level one is the
 * first provider's), its low-balance notice naming it. One provider's unreadable balance does not
 * stop the others'. A config of one `sms-service` provider is watched as before.
 *
 * @returns the first provider's check (the one the console's chart and the forecast follow)
 * @throws {BalanceUnreadableError} the first provider's balance could not be read
 *
 * @example
 * ```ts
 * const { balance } = await checkProviderBalances(context);
 * ```
 */
export async function checkProviderBalances(
  context: RelayContext<RelayConfigView, BalanceWatchStore>,
): Promise<BalanceCheck> {
  const { providers } = context;
  if (providers === undefined || !sendsThroughChain(context.config.settings)) return await checkBalance(context);
  let first: BalanceCheck | BalanceUnreadableError | undefined;
  for (const name of providers.routing.names) {
    let check: BalanceCheck | BalanceUnreadableError;
    try {
      const provider = await providers.get(name);
      if (provider.balance === undefined) continue;
      check = await checkBalance(providerScope(context, provider));
    } catch (error) {
      if (!(error instanceof BalanceUnreadableError)) {
        context.logger.error('provider balance not watched', { provider: name, error: errorName(error) });
        continue;
      }
      context.logger.error('balance not read; the next run tries again', { provider: name, error: error.cause });
      check = error;
    }
    first ??= check;
  }
  if (first instanceof BalanceUnreadableError) throw first;
  return first ?? { balance: Number.NaN, threshold: undefined, alerted: false };
}
