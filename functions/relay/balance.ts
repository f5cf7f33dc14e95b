import type { RelayConfigView } from '../core/config/view';
import { AcceptOutcome } from '../store';
import { noticeMessage } from './notice';
import { NOTICE_KEY_PREFIX, NOTICE_ROUTE, RelayMetric, type RelayContext } from './ports';

export interface BalanceCheck {
  readonly balance: number;
  readonly currency?: string;
  readonly threshold: number | undefined;
  /** This observation crossed below the threshold and a low-balance SMS was recorded. */
  readonly alerted: boolean;
  readonly daysLeft?: number;
}

/**
 * The balance watch: reads the balance from the SMS service, publishes it, and applies the
 * threshold (see `observeBalance`).
 *
 * @example
 * ```ts
 * const { balance, alerted } = await checkBalance(context);
 * ```
 */
export async function checkBalance(context: RelayContext<RelayConfigView>): Promise<BalanceCheck> {
  const balance = await (await context.sms.client()).getBalance();
  context.metrics.add(RelayMetric.RemainingBalance, balance.balance);
  const check = await observeBalance(context, balance.balance, balance.currency);
  context.logger.info('balance', { balance: balance.balance, currency: balance.currency, threshold: check.threshold, alerted: check.alerted });
  return { ...check, currency: balance.currency };
}

/**
 * Applies `balance.threshold` to a balance seen by the watch or in a send result: below it, one SMS
 * goes to `balance.notify` per crossing (the store decides the one caller that sends it; it re-arms
 * when the balance rises again), saying the balance and how many days it lasts at the last seven
 * days' spend. The SMS is recorded like any other message, so it is durable and logged.
 */
export async function observeBalance(context: RelayContext<RelayConfigView>, balance: number, currency?: string): Promise<BalanceCheck> {
  const threshold = context.config.config.balance?.threshold;
  if (threshold === undefined) return { balance, threshold, alerted: false };
  const now = context.clock();
  const update = await context.store.updateBalanceState({ balance, threshold, now });
  if (!update.alert) return { balance, threshold, alerted: false };

  const spentPerDay = (await context.store.spendLastDays(7, now)) / 7;
  const daysLeft = spentPerDay > 0 ? Math.floor(balance / spentPerDay) : undefined;
  const notify = context.config.balanceNotify;
  context.logger.warn('balance below threshold', { balance, threshold, daysLeft, notify: notify.length });
  if (notify.length === 0) return { balance, threshold, alerted: true, ...(daysLeft === undefined ? {} : { daysLeft }) };

  const amount = currency === undefined ? formatNumber(balance) : `${currency} ${formatNumber(balance)}`;
  const lasting = daysLeft === undefined ? 'No spend in the last 7 days.' : `At the last 7 days' spend it lasts about ${daysLeft} day${daysLeft === 1 ? '' : 's'}.`;
  const text = `sms-relay: SMS balance is ${amount}, below the threshold of ${formatNumber(threshold)}. ${lasting} Top up soon.`;
  const result = await context.store.acceptWebhook({
    route: NOTICE_ROUTE,
    dedupeKey: `${NOTICE_KEY_PREFIX}low-balance:${now.toISOString()}`,
    windowSeconds: 3600,
    now,
    messages: [noticeMessage(text, notify, context.config.config.provider.defaultSenderId)],
  });
  if (result.outcome === AcceptOutcome.Accepted) context.logger.info('low-balance notice recorded', { ids: result.ids });
  return { balance, threshold, alerted: true, ...(daysLeft === undefined ? {} : { daysLeft }) };
}

function formatNumber(value: number): string {
  return new Intl.NumberFormat('en', { maximumFractionDigits: 2 }).format(value);
}
