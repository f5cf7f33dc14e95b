import type { RouteView } from '../core/config/view';
import { machineZone, reasonTime } from '../core/time-format';
import type { Mute } from '../store';

/**
 * Why a muted route's message is `DROPPED`: `muted until 14:30: db upgrade`, the time on the
 * route's clock (with the date when the mute ends on another day), and the route's zone named when
 * its clock is not the relay's (`muted until 21:06 Africa/Dar_es_Salaam: db upgrade` from a relay
 * on UTC, as on AWS): the reason is stored once and read beside the relay's own times (the
 * terminal line, `logs`). No "(in 12 min)": a stored reason would keep it long after.
 *
 * @param relayZone the zone the relay's times are shown in; @default the machine's
 * @example
 * ```ts
 * mutedReason(route, mute, now); // 'muted until 14:30: db upgrade'
 * ```
 */
export function mutedReason(
  route: { readonly config: Pick<RouteView['config'], 'timeZone'> },
  mute: Mute,
  now: Date,
  relayZone: string = machineZone(),
): string {
  const until = reasonTime(mute.until, route.config.timeZone, now, relayZone);
  return `muted until ${until}${mute.reason === '' ? '' : `: ${mute.reason}`}`;
}
