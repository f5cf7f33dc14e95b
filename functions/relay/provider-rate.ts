import { setTimeout as sleep } from 'node:timers/promises';
import { SendCertainty, SmsErrorCode, SmsOperation, SmsServiceError } from '../core/provider';
import type { RelayConfigView } from '../core/config/view';
import type { MessageStore } from '../store';
import type { RelayContext } from './ports';
import { Lane, laneRate } from '../core/lanes';

/** What the provider's rate uses of the store. */
export type ProviderRateStore = Pick<MessageStore, 'takeRateSlot' | 'raiseRateSlot'>;

/**
 * Seconds a send waits for a slot of `provider.maxPerSecond` before it gives up as a 429 would
 * (retried after `Retry-After`'s default): a backlog waits PENDING in the table, not in memory.
 */
export const RATE_SLOT_TRIES = 5;

/**
 * Waits for one of this second's `provider.maxPerSecond` sends, shared by every sender (a counter
 * per second in the table, see `takeRateSlot`); nothing when the config sets no rate.
 *
 * The lanes share the counter: a bulk send takes a slot only while the second's count is under the
 * bulk lane's share (`laneRate`), a critical one while it is under `maxPerSecond`, so the slots
 * above the share are kept for alerts however large the bulk backlog. A bulk slot `n` starts
 * `(n - 1) / maxPerSecond` s into its second, so a backlog is spread over the second rather than
 * sent in a burst at its start, and is used only within its share of the second (later, it would
 * crowd the next second at the service). A bulk send whose slot fell behind the clock (fewer sends
 * than slots so far this second: a trickle, or senders woken late on a busy host) moves the count
 * up to the slot of the present moment and goes at once, rather than waiting for a second whose
 * start it would again miss; past the bulk share of the second it waits for the next one. A
 * critical send uses its slot at once: the counter already keeps the second within the rate.
 *
 * @throws {SmsServiceError} `rate-limited`, not sent, when no slot came in {@link RATE_SLOT_TRIES} seconds
 */
export async function takeSendSlot(
  context: RelayContext<RelayConfigView, ProviderRateStore>,
  lane: Lane = Lane.Bulk,
): Promise<void> {
  const maxPerSecond = context.config.settings.provider.maxPerSecond;
  if (maxPerSecond === undefined) return;
  const shareMs = 1_000 / maxPerSecond;
  const laneMax = laneRate(lane, maxPerSecond);
  let tries = 0;
  while (tries < RATE_SLOT_TRIES) {
    const now = context.clock().getTime();
    const epochSecond = Math.floor(now / 1_000);
    // The slot whose share of the second the present moment is in: the lowest a bulk send may use now.
    const present = Math.floor((now - epochSecond * 1_000) / shareMs) + 1;
    if (lane === Lane.Critical || present <= laneMax) {
      const slot = await context.store.takeRateSlot({ epochSecond, maxPerSecond: laneMax });
      if (slot !== undefined) {
        if (lane === Lane.Critical) return;
        if (slot >= present) {
          const startAt = epochSecond * 1_000 + (slot - 1) * shareMs;
          if (startAt > now) await sleep(startAt - now);
          return;
        }
        // Behind the clock: the slots up to the present one went unused, so the present one is free
        // unless another send moved the count meanwhile (then take the next slot at once).
        if (await context.store.raiseRateSlot({ epochSecond, slot: present })) return;
        continue;
      }
    }
    // Into the next second, spread over its first share so the waiters do not all write at once.
    await sleep((epochSecond + 1) * 1_000 - now + Math.floor(Math.random() * shareMs));
    tries += 1;
  }
  throw new SmsServiceError(`no send slot of provider.maxPerSecond (${maxPerSecond}) in ${RATE_SLOT_TRIES} s`, {
    operation: SmsOperation.SEND,
    code: SmsErrorCode.RATE_LIMITED,
    delivery: SendCertainty.NOT_SENT,
  });
}
