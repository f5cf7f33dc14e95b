import type { Context, ScheduledEvent } from 'aws-lambda';
import { BalanceUnreadableError, type BalanceCheck } from '../relay/balance';
import { checkProviderBalances } from '../relay/provider-balances';
import { prepareOnLambda } from './wiring/context';
import { invoke } from './wiring/invoke';
import { withInvocationSmsClients } from './wiring/invoke';

await prepareOnLambda();

/** A run that could not read the balance; the next run tries again. */
export interface BalanceUnread {
  readonly unread: true;
  /** The error's name (its message may quote the provider). */
  readonly reason: string;
}

/**
 * The balance watch, on `balance.schedule`: reads the balance, publishes `RemainingBalance`, and
 * records one low-balance SMS per drop below the threshold (re-armed when the balance recovers).
 *
 * A balance that cannot be read is logged and counted (`BalanceReadFailed`) and the run ends
 * normally: the `BalanceUnreadable` alarm fires after two such runs, where a thrown error would be
 * retried twice by Lambda and dead-lettered on the first provider blip. Anything else (the store
 * failing) still throws.
 *
 * @example
 * ```ts
 * const { balance, alerted } = await handler(scheduledEvent, lambdaContext);
 * ```
 */
export async function handler(_event: ScheduledEvent, lambdaContext?: Context): Promise<BalanceCheck | BalanceUnread> {
  return await invoke(lambdaContext, async (relay) => {
    try {
      return await withInvocationSmsClients(relay, checkProviderBalances);
    } catch (error) {
      if (!(error instanceof BalanceUnreadableError)) throw error;
      relay.logger.error('balance not read; the next run tries again', { error: error.cause });
      return { unread: true, reason: error.cause instanceof Error ? error.cause.name : 'unknown' } as const;
    }
  });
}
