import type { CompiledRoute } from '../core/config/compile';
import type { OnCallOverride } from '../core/oncall/resolve';
import { RecipientEntryKind } from '../core/recipients/types';
import type { MessageStore } from '../store';

/** The schedules a route's `oncall:` recipients name, in config order. */
export function onCallSchedules(route: Pick<CompiledRoute, 'recipients'>): string[] {
  return [
    ...new Set(
      route.recipients.entries.flatMap((entry) => (entry.kind === RecipientEntryKind.OnCall ? [entry.schedule] : [])),
    ),
  ];
}

/**
 * The overrides a route's `oncall:` recipients resolve with at `at`: none (and no read) for a route
 * without such recipients, else one Query per schedule named.
 *
 * @example
 * ```ts
 * const overrides = await overridesFor(context.store, route, request.receivedAt);
 * ```
 */
export async function overridesFor(
  store: Pick<MessageStore, 'activeOverrides'>,
  route: Pick<CompiledRoute, 'recipients'>,
  at: Date,
): Promise<OnCallOverride[]> {
  const schedules = onCallSchedules(route);
  return schedules.length === 0 ? [] : await store.activeOverrides({ schedules, now: at });
}
