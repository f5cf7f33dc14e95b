import { clockTime } from '../core/local-time';
import type { RouteView } from '../core/config/view';
import type { Mute } from '../store';

/**
 * Why a muted route's message is `DROPPED`: `muted until 14:30: db upgrade`, the time in the
 * route's time zone (with the date when the mute ends on another day).
 *
 * @example
 * ```ts
 * mutedReason(route, mute, now); // 'muted until 14:30: db upgrade'
 * ```
 */
export function mutedReason(route: Pick<RouteView, 'config'>, mute: Mute, now: Date): string {
  const until = clockTime(new Date(mute.until), route.config.timeZone, now);
  return `muted until ${until}${mute.reason === '' ? '' : `: ${mute.reason}`}`;
}
