import type { RelayConfigView, RouteView } from '../core/config/view';
import { MONTH_BUDGET_WARNING_SHARE } from '../core/defaults';
import { type MessageStore, type MonthUse, NoticeKind } from '../store';
import { noticeMessage } from './notice';
import type { RelayContext } from './ports';

/** What the monthly budget warning uses of the store. */
export type BudgetStore = Pick<MessageStore, 'recordNotice' | 'markBudgetWarned'>;

/**
 * The 80 % warning of a route's `creditsPerMonth`, once per route and month: recorded as a notice to
 * `balance.notify` keyed by route and month (a second recording records nothing), then marked on
 * the month's counter with one conditional write, so the senders after it skip it with no extra
 * request (the reservation returns the mark). Of two senders that pass 80 % at once both record,
 * one notice is kept, one SMS goes out.
 *
 * @example
 * ```ts
 * if (reservation.allowed && reservation.month !== undefined) await warnMonthBudget(context, route, reservation.month);
 * ```
 */
export async function warnMonthBudget(
  context: RelayContext<RelayConfigView, BudgetStore>,
  route: RouteView,
  use: MonthUse,
): Promise<boolean> {
  if (use.warned || use.reserved < use.max * MONTH_BUDGET_WARNING_SHARE) return false;
  const to = context.config.balanceNotify;
  if (to.length > 0) {
    const percent = Math.floor((use.reserved / use.max) * 100);
    const text = `sms-relay: route '${route.id}' has used ${formatCredits(use.reserved)} of its ${formatCredits(use.max)} credits for ${use.month} (${percent} %); past ${formatCredits(use.max)} its messages are held until the month ends.`;
    await context.store.recordNotice({
      kind: NoticeKind.BudgetWarning,
      route: route.id,
      key: `${route.id}:${use.month}`,
      now: context.clock(),
      message: noticeMessage(text, to, context.config.settings.provider.defaultSenderId),
    });
  } else {
    context.logger.warn('route passed 80 % of its monthly credits; no balance.notify to tell', {
      route: route.id,
      month: use.month,
      reserved: use.reserved,
      max: use.max,
    });
  }
  return await context.store.markBudgetWarned({ route: route.id, window: use.window, now: context.clock() });
}

function formatCredits(value: number): string {
  return String(Math.round(value * 100) / 100);
}
