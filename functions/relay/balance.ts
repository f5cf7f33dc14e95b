import { ALERT_STATE_KNOWN_MS } from '../core/defaults';
import type { RelayConfigView } from '../core/config/view';
import type { SmsClient } from '../core/provider';
import { AcceptOutcome, type MessageStore, NoticeKind } from '../store';
import { noticeMessage } from './notice';
import { NOTICE_ROUTE, RelayMetric, type RelayContext } from './ports';

/** What the balance watch (`checkBalance`, `observeBalance`) uses of the store. */
export type BalanceWatchStore = Pick<
  MessageStore,
  | 'getBalanceState'
  | 'updateBalanceState'
  | 'rebaseCredit'
  | 'recordBalanceReading'
  | 'recordNotice'
  | 'recentSpend'
  | 'startSpendCount'
>;

export interface BalanceCheck {
  readonly balance: number;
  readonly currency?: string;
  readonly threshold: number | undefined;
  /** This observation crossed below the threshold and a low-balance SMS was recorded. */
  readonly alerted: boolean;
  readonly daysLeft?: number;
}

/**
 * The balance watch: reads the balance from the SMS service, publishes it, keeps it as a reading
 * for the console's chart, and applies the threshold (see `observeBalance`).
 *
 * @example
 * ```ts
 * const { balance, alerted } = await checkBalance(context);
 * ```
 */
export async function checkBalance(context: RelayContext<RelayConfigView, BalanceWatchStore>): Promise<BalanceCheck> {
  const basis = await creditBasis(context);
  let balance: Awaited<ReturnType<SmsClient['getBalance']>>;
  try {
    balance = await (await context.sms.client()).getBalance();
  } catch (error) {
    // Counted per run: one blip is normal, the alarm waits for two runs in a row.
    context.metrics.add(RelayMetric.BalanceReadFailed, 1);
    throw new BalanceUnreadableError(error);
  }
  // 0 on every readable run too: the BalanceWatchNotRunning alarm counts the runs by this metric.
  context.metrics.add(RelayMetric.BalanceReadFailed, 0);
  context.metrics.add(RelayMetric.RemainingBalance, balance.balance);
  // The readings (the console's chart) and the spend forecast are the first provider's: the relay's spend is counted once.
  const first =
    context.provider === undefined || context.provider === Object.keys(context.config.settings.providers)[0];
  if (first) await recordReading(context, balance);
  const forecast = first ? await watchForecast(context, balance.balance) : undefined;
  const check = await observeBalance(
    context,
    { ...balance, ...(basis === undefined ? {} : { basis }) },
    { forecast: forecast ?? null },
  );
  context.logger.info('balance', {
    ...(context.provider === undefined ? {} : { provider: context.provider }),
    balance: balance.balance,
    currency: balance.currency,
    threshold: check.threshold,
    alerted: check.alerted,
  });
  return { ...check, currency: balance.currency };
}

/**
 * The balance could not be read from the SMS service (unreachable, 5xx, a refused key, the secret
 * unreadable). The balance watch handles it apart from other failures: it is reported by the
 * `BalanceReadFailed` metric and the next run tries again, instead of a retried, dead-lettered run.
 */
export class BalanceUnreadableError extends Error {
  public override readonly name = 'BalanceUnreadableError';

  public constructor(cause: unknown) {
    super(`the balance could not be read: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * The watch's forecast, made here and only here (never by a send): `undefined` when the spend
 * cannot be read, which costs the notice its forecast, never the notice itself.
 */
async function watchForecast(
  context: RelayContext<RelayConfigView, BalanceWatchStore>,
  balance: number,
): Promise<BalanceForecast | undefined> {
  if (context.config.settings.balance?.threshold === undefined) return undefined;
  try {
    await context.store.startSpendCount(context.clock());
    const { firstObservedAt } = await context.store.getBalanceState();
    return await forecastBalance(context.store, balance, firstObservedAt, context.clock());
  } catch (error) {
    context.logger.warn('spend not read: no forecast this time', {
      error: error instanceof Error ? error.name : typeof error,
    });
    return undefined;
  }
}

/** Keeps a reading for the console; only a chart is missing a point if it fails, so the watch goes on. */
async function recordReading(
  context: RelayContext<RelayConfigView, BalanceWatchStore>,
  { balance, currency }: { balance: number; currency: string },
): Promise<void> {
  try {
    await context.store.recordBalanceReading({ balance, currency, now: context.clock() });
  } catch (error) {
    context.logger.warn('balance reading not recorded', { error: error instanceof Error ? error.name : typeof error });
  }
}

/** A balance as seen in a send's answer (`remainingBalance`) or read from the service. */
export interface BalanceReading {
  readonly balance: number;
  readonly currency?: string;
  /** The service's price of one SMS, when the reading came from the balance endpoint. */
  readonly smsRate?: number;
  /**
   * For a read of the balance endpoint with `balance.reserve` set: the store's `charged` as read
   * before the request (see {@link creditBasis}); the projected balance is rebased on the reading.
   */
  readonly basis?: number;
}

/**
 * What a balance read about to be made is rebased on (see `rebaseCredit`): read before the request,
 * so sends settled while it is under way are not forgotten. `undefined` without a reserve, which
 * keeps no projected balance.
 *
 * @example
 * ```ts
 * const basis = await creditBasis(context);
 * await observeBalance(context, { ...(await client.getBalance()), basis });
 * ```
 */
export async function creditBasis(
  context: RelayContext<RelayConfigView, BalanceWatchStore>,
): Promise<number | undefined> {
  if (!((context.config.settings.balance?.reserve ?? 0) > 0)) return undefined;
  return (await context.store.getBalanceState()).charged ?? 0;
}

/** Options of {@link observeBalance}. */
export interface ObserveOptions {
  /**
   * The balance watch's forecast (`null`: it could make none), kept on the balance state for the
   * notices sends record. Absent, the observation is a send's: it reads no spend, and writes
   * nothing when this process knows the alert's state is unchanged.
   */
  readonly forecast?: BalanceForecast | null;
}

/** The alert's state (armed or not) each store last wrote or read, and when (see {@link ALERT_STATE_KNOWN_MS}). */
const knownAlertStates = new WeakMap<object, { readonly armed: boolean; readonly at: number }>();

const knownArmed = (store: object): boolean | undefined => {
  const known = knownAlertStates.get(store);
  return known !== undefined && Date.now() - known.at < ALERT_STATE_KNOWN_MS ? known.armed : undefined;
};

const knowArmed = (store: object, armed: boolean): void => {
  knownAlertStates.set(store, { armed, at: Date.now() });
};

/**
 * Applies `balance.threshold` to a balance seen by the watch or in a send result (and, for a read
 * with a `basis`, rebases the projected balance `balance.reserve` is kept against): below it, one SMS
 * goes to `balance.notify` per crossing (keyed by the crossing, so concurrent callers record one;
 * it re-arms when the balance rises again), saying the balance and how many days it lasts at the
 * recent spend, or that the account is empty when it cannot pay for one SMS. The SMS is recorded
 * like any other message, so it is durable and logged, and before the alert is disarmed, so a crash
 * between the two loses nothing; it is checked again before it goes out (see the sender).
 *
 * Only the balance watch forecasts (`options.forecast`); a send's observation takes the rate the
 * watch last kept, and leaves the balance item alone when the alert's state stays as this process
 * last knew it (armed above the threshold, disarmed below): the item is written when something
 * changes, not on every send.
 */
export async function observeBalance(
  context: RelayContext<RelayConfigView, BalanceWatchStore>,
  { balance, currency, smsRate, basis }: BalanceReading,
  { forecast }: ObserveOptions = {},
): Promise<BalanceCheck> {
  const threshold = context.config.settings.balance?.threshold;
  if (threshold === undefined) return { balance, threshold, alerted: false };
  const { store } = context;
  const now = context.clock();
  const rebases = basis !== undefined && (context.config.settings.balance?.reserve ?? 0) > 0;
  if (rebases) await store.rebaseCredit({ balance, basis, now });
  const unchanged = forecast === undefined && !rebases && knownArmed(store) === balance >= threshold;
  if (unchanged) return { balance, threshold, alerted: false };
  const spendPerDay = forecast === undefined ? {} : { spendPerDay: forecast?.perDay ?? null };
  if (balance >= threshold) {
    const { stale } = await store.updateBalanceState({ balance, threshold, now, ...spendPerDay });
    if (!stale) knowArmed(store, true);
    return { balance, threshold, alerted: false };
  }

  // The notice is recorded before the alert is disarmed, under a key the crossing fixes (the count
  // of alerts so far): a crash, or a failed write, between the two leaves the alert armed, and the
  // next observation records the same notice again, which records nothing. Disarming first would
  // lose the SMS for good.
  const state = await store.getBalanceState();
  const crossing = state.alerts ?? 0;
  const current = state.lastCheckedAt === undefined || state.lastCheckedAt <= now.toISOString();
  if (!state.armed || !current) {
    await store.updateBalanceState({ balance, threshold, now, disarm: false, ...spendPerDay });
    if (current) knowArmed(store, false);
    return { balance, threshold, alerted: false };
  }
  const perDay = forecast === undefined ? state.spendPerDay : forecast?.perDay;
  const daysLeft = perDay === undefined || !(perDay > 0) ? undefined : Math.floor(balance / perDay);
  const notify = context.config.balanceNotify;
  if (notify.length > 0) {
    const amount = currency === undefined ? formatNumber(balance) : `${currency} ${formatNumber(balance)}`;
    const price = state.creditsPerUnit ?? smsRate;
    const empty = price !== undefined && price > 0 && balance < price;
    // With several providers the notice names whose balance it is, under a key of its own.
    const of = context.provider === undefined ? '' : ` of ${context.provider}`;
    const text = empty
      ? `sms-relay: SMS balance${of} is ${amount}: not enough for one SMS. The account is empty; top up now.`
      : `sms-relay: SMS balance${of} is ${amount}, below the threshold of ${formatNumber(threshold)}. ${lastingText(daysLeft)} Top up soon.`;
    const result = await store.recordNotice({
      kind: NoticeKind.LowBalance,
      route: NOTICE_ROUTE,
      key: context.provider === undefined ? `alert-${crossing}` : `alert-${context.provider}-${crossing}`,
      now,
      message: noticeMessage(text, notify, context.config.settings.provider.defaultSenderId),
    });
    if (result.outcome === AcceptOutcome.Accepted)
      context.logger.info('low-balance notice recorded', { ids: result.ids });
  }
  const update = await store.updateBalanceState({ balance, threshold, now, disarm: crossing, ...spendPerDay });
  if (!update.stale) knowArmed(store, false);
  if (!update.alert) return { balance, threshold, alerted: false };
  context.logger.warn('balance below threshold', {
    ...(context.provider === undefined ? {} : { provider: context.provider }),
    balance,
    threshold,
    daysLeft,
    notify: notify.length,
  });
  return { balance, threshold, alerted: true, ...(daysLeft === undefined ? {} : { daysLeft }) };
}

/** The spend the forecast looks back on, at most. */
const FORECAST_DAYS = 7;
/** Less history than this is too little to forecast from. */
export const MIN_FORECAST_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** What the days-left forecast rests on. */
export interface BalanceForecast {
  /** Whole days the balance lasts at `perDay`; absent with too little history or no spend. */
  readonly daysLeft?: number;
  /** Credits spent over the days looked back on. */
  readonly spent: number;
  /**
   * Days looked back on, which the spend is divided by: at most seven, fewer (a fraction) when the
   * relay has been observed for less; 0 when it never has.
   */
  readonly days: number;
  readonly perDay?: number;
}

/**
 * Days the balance lasts at the spend of the last seven days, divided by the time actually
 * observed: a relay that started an hour ago has seen an hour of spend, not seven days of it, and
 * a table whose spend is counted only since an upgrade has seen the spend since then. The spend is
 * read from the day counters (`recentSpend`): eight items whatever the volume. Under an hour of
 * history there is no forecast, only the spend and the time observed.
 *
 * @example
 * ```ts
 * const { daysLeft } = await forecastBalance(store, 5_000, state.firstObservedAt, new Date());
 * ```
 */
export async function forecastBalance(
  store: Pick<MessageStore, 'recentSpend'>,
  balance: number,
  firstObservedAt: string | undefined,
  now: Date,
): Promise<BalanceForecast> {
  const { spent, countedSince } = await store.recentSpend(FORECAST_DAYS, now);
  const since = [firstObservedAt, countedSince]
    .filter((at): at is string => at !== undefined)
    .reduce<string | undefined>((latest, at) => (latest === undefined || at > latest ? at : latest), undefined);
  const observedMs = since === undefined ? 0 : Math.max(0, now.getTime() - Date.parse(since) || 0);
  const days = Math.min(FORECAST_DAYS, observedMs / DAY_MS);
  // What was spent is reported even then (the console shows it beside the spend chart); it only
  // is not turned into a daily rate.
  if (observedMs < MIN_FORECAST_MS) return { spent, days };
  const perDay = spent / days;
  return { spent, days, ...(perDay > 0 ? { perDay, daysLeft: Math.floor(balance / perDay) } : {}) };
}

function lastingText(daysLeft: number | undefined): string {
  if (daysLeft === undefined) return 'Too little spend seen to forecast how long it lasts.';
  return `At the recent spend it lasts about ${daysLeft} day${daysLeft === 1 ? '' : 's'}.`;
}

function formatNumber(value: number): string {
  return new Intl.NumberFormat('en', { maximumFractionDigits: 2 }).format(value);
}
