import { RoutePriority } from './config/policies';

/**
 * The two send lanes. A record's lane is fixed when it is recorded (see {@link laneOf}): `critical`
 * SMS (alerts, pages, the relay's own notices) never queue behind `bulk` ones (orders, CI, a
 * redrive of parked orders). On AWS each lane has its own stream mapping on the sender; locally
 * the send queue serves the critical lane first; both share `provider.maxPerSecond`, of which the
 * bulk lane may take only {@link LANES}`.bulkShare` each second.
 */
export const Lane = { Critical: 'critical', Bulk: 'bulk' } as const;
export type Lane = (typeof Lane)[keyof typeof Lane];

/** The lanes' settings, each with one name. */
export const LANES = {
  /**
   * The part of each second's `provider.maxPerSecond` sends the bulk lane may take: the rest is
   * kept for the critical lane, so an alert finds a slot within the second however large the bulk
   * backlog. The critical lane may take every slot.
   */
  bulkShare: 0.75,
  /** The lane of a record written before lanes existed, which carries none. */
  unmarked: 'bulk',
} as const;

/** What decides a record's lane: its route's priority and what the SMS is. */
export interface LaneInput {
  /** The route's `priority` (absent: `normal`). */
  readonly priority?: RoutePriority | undefined;
  /** Set on the relay's own SMS (low balance, summaries, heartbeats, handoffs). */
  readonly notice?: string | undefined;
  /** Set on an SMS that pages for an incident (its first SMS, an escalation, a renotify). */
  readonly incident?: string | undefined;
  /** Set on an SMS of an alert its source calls critical (Opsgenie's P1, P2) on a normal route. */
  readonly critical?: boolean | undefined;
}

/**
 * A record's lane: `critical` for a `priority: critical` route, an alert its source calls critical,
 * a page (escalations and renotifies included) and the relay's own notices; `bulk` otherwise.
 *
 * @example
 * ```ts
 * laneOf({ priority: 'critical' }); // 'critical'
 * laneOf({ notice: 'low-balance' }); // 'critical'
 * laneOf({}); // 'bulk'
 * ```
 */
export function laneOf({ priority, notice, incident, critical }: LaneInput): Lane {
  return priority === RoutePriority.Critical || critical === true || notice !== undefined || incident !== undefined
    ? Lane.Critical
    : Lane.Bulk;
}

/**
 * The sends of one second's `provider.maxPerSecond` a lane may take: all of them for the critical
 * lane; for the bulk lane its share, at least one (a rate of 1 or 2 a second has no room to keep).
 *
 * @example
 * ```ts
 * laneRate(Lane.Bulk, 20); // 15
 * laneRate(Lane.Critical, 20); // 20
 * ```
 */
export function laneRate(lane: Lane, maxPerSecond: number): number {
  return lane === Lane.Critical ? maxPerSecond : Math.max(1, Math.floor(maxPerSecond * LANES.bulkShare));
}
