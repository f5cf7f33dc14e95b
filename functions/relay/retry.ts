import { DeliveryPolicy } from '../core/config/policies';
import type { RelayConfigView } from '../core/config/view';
import { DEFAULT_RETRY_FOR_SECONDS } from '../core/defaults';
import type { MessageRecord } from '../store';
import type { RelayContext } from './ports';

/**
 * When an at-least-once message stops being retried: its route's `retry.for` (default
 * `DEFAULT_RETRY_FOR_SECONDS`) after it was accepted. A route no longer in the config, and the
 * relay's own notices, take the default.
 */
export function retryDeadline(
  context: RelayContext<RelayConfigView, unknown>,
  record: Pick<MessageRecord, 'route' | 'createdAt'>,
): Date {
  const seconds = context.config.routes.get(record.route)?.config.retry?.for ?? DEFAULT_RETRY_FOR_SECONDS;
  return new Date(Date.parse(record.createdAt) + seconds * 1_000);
}

/**
 * Whether a failed attempt gets another: on an at-least-once route while its `retry.for` has not
 * passed (however many attempts that takes), elsewhere while `policy.maxAttempts` are not used up.
 *
 * @example
 * ```ts
 * if (mayRetry(context, record, now)) await store.settle(id, token, { state: 'PENDING', nextAttemptAt, lastError });
 * ```
 */
export function mayRetry(
  context: RelayContext<RelayConfigView, unknown>,
  record: Pick<MessageRecord, 'route' | 'createdAt' | 'delivery' | 'attempts'>,
  now: Date,
): boolean {
  if (record.delivery === DeliveryPolicy.AtLeastOnce) return now.getTime() < retryDeadline(context, record).getTime();
  return record.attempts < context.policy.maxAttempts;
}
