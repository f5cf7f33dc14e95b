import type { CompiledPaging } from './compile';

/** Where an incident stands: open until a resolved webhook of its key or an acknowledgement closes it. */
export const IncidentState = {
  Open: 'OPEN',
  Acknowledged: 'ACKNOWLEDGED',
  Resolved: 'RESOLVED',
} as const;
export type IncidentState = (typeof IncidentState)[keyof typeof IncidentState];

/** How an incident was acknowledged: the link's POST, or `sms-relay ack`. */
export const AckVia = { Link: 'link', Cli: 'cli' } as const;
export type AckVia = (typeof AckVia)[keyof typeof AckVia];

/** One line of an incident's story: `sent to 2557****678`, `escalated to …`, `acknowledged by …`. */
export interface TimelineEntry {
  readonly at: string;
  readonly event:
    | 'opened'
    | 'repeated'
    | 'escalated'
    | 'renotified'
    | 'acknowledged'
    | 'resolved'
    | 'exhausted'
    /** An SMS of the incident that waited (an outage) and was not sent, as the incident closed first. */
    | 'not-sent';
  /** Masked numbers and names only: the timeline is shown on a public page. */
  readonly detail: string;
  /** A `repeated` entry: how many times the alert fired again (repeats are counted on one entry, not appended). */
  readonly count?: number;
  /** A `repeated` entry: when it last fired again. */
  readonly lastAt?: string;
  /** An `escalated` or `renotified` entry: the records of the step's SMS, to tell what was delivered. */
  readonly ids?: readonly string[];
}

/** An incident as the store keeps it. */
export interface Incident {
  readonly id: string;
  readonly route: string;
  /** The rendered incident key (`groupKey`, an incident id). */
  readonly key: string;
  readonly state: IncidentState;
  readonly openedAt: string;
  /** The text of the incident's first SMS, as sent (without its link). */
  readonly text: string;
  /**
   * The numbers the first SMS went to: a renotify before any escalation step tells them again
   * (a route's templated recipients cannot be rendered again without the webhook). Absent on
   * incidents opened before it was kept. Never shown: pages and views show the masked timeline.
   */
  readonly recipients?: readonly string[];
  /**
   * The acknowledge link's origin, fixed when the incident opened (the route's `ack.baseUrl`, else
   * the URL the webhook came in on): every later SMS of the incident links there, though the sweeper
   * that sends them never sees a request. Absent on a route without `ack`.
   */
  readonly linkOrigin?: string;
  /**
   * Opened by an alert its source calls critical on a normal route (Opsgenie's P1, P2): its
   * escalations and renotifies may spend `balance.reserve`, as its first SMS could.
   */
  readonly critical?: true;
  /** Escalation and renotify SMS recorded so far: the index of the next {@link PagingAction}. */
  readonly actions: number;
  /** When the sweeper next acts; absent when closed or when no step is left. */
  readonly nextDueAt?: string;
  /** The level reached: 0 the route's recipients, n the n-th escalation step. */
  readonly level: number;
  readonly closedAt?: string;
  /** Who acknowledged (a masked number or `cli`), when acknowledged. */
  readonly closedBy?: string;
  readonly timeline: readonly TimelineEntry[];
}

/** What the sweeper does next for an incident. */
export interface PagingAction {
  readonly kind: 'escalate' | 'renotify';
  /** Index of the escalation step whose recipients are told (renotify: the last reached), -1: the route's own recipients. */
  readonly step: number;
  readonly dueAt: Date;
}

/**
 * The `index`-th action of an incident opened at `openedAt`: the escalation steps in order, each
 * `after` the first SMS, then `renotify.max` repeats to the last level reached, `every` apart from
 * the last step (or from the first SMS when there are no steps). `undefined`: nothing is left.
 * Pure, so the sweeper, `incidents` and the tests agree on every due time.
 *
 * @example
 * ```ts
 * pagingAction(route.paging, openedAt, incident.actions); // { kind: 'escalate', step: 0, dueAt: … }
 * ```
 */
export function pagingAction(
  paging: Pick<CompiledPaging, 'steps' | 'renotify'>,
  openedAt: Date,
  index: number,
): PagingAction | undefined {
  const { steps, renotify } = paging;
  const opened = openedAt.getTime();
  if (index < steps.length)
    return { kind: 'escalate', step: index, dueAt: new Date(opened + steps[index]!.afterSeconds * 1000) };
  const repeat = index - steps.length + 1;
  if (renotify === undefined || repeat > renotify.max) return undefined;
  const base = opened + (steps.at(-1)?.afterSeconds ?? 0) * 1000;
  return { kind: 'renotify', step: steps.length - 1, dueAt: new Date(base + repeat * renotify.everySeconds * 1000) };
}

/** The step to take now for an incident that has taken `from` actions: see {@link actionDueNow}. */
export interface DueAction {
  /** The index of the action taken (the dedupe key's step). */
  readonly index: number;
  readonly action: PagingAction;
  /** The actions passed over, oldest first: missed while the relay was not running. */
  readonly skipped: readonly PagingAction[];
}

/**
 * The action to take now, or `undefined` when none is due. Normally the next one; but a step more
 * than `missedAfterMs` past due while the step after it is due too was missed (the relay was not
 * running): such steps are passed over, so a restart sends one SMS, the latest step due, rather
 * than every missed step back to back.
 *
 * @example
 * ```ts
 * actionDueNow(paging, openedAt, incident.actions, now, PAGING.missedAfterMs); // { index: 2, action, skipped: [first, second] }
 * ```
 */
export function actionDueNow(
  paging: Pick<CompiledPaging, 'steps' | 'renotify'>,
  openedAt: Date,
  from: number,
  now: Date,
  missedAfterMs: number,
): DueAction | undefined {
  const first = pagingAction(paging, openedAt, from);
  if (first === undefined || first.dueAt.getTime() > now.getTime()) return undefined;
  const skipped: PagingAction[] = [];
  let index = from;
  let action = first;
  for (;;) {
    const next = pagingAction(paging, openedAt, index + 1);
    const missed = now.getTime() - action.dueAt.getTime() > missedAfterMs;
    if (next === undefined || next.dueAt.getTime() > now.getTime() || !missed) break;
    skipped.push(action);
    index += 1;
    action = next;
  }
  return { index, action, skipped };
}

/** The level an incident reached after `actions` actions: the escalation steps taken (renotify does not climb). */
export function levelAfter(paging: Pick<CompiledPaging, 'steps'>, actions: number): number {
  return Math.min(actions, paging.steps.length);
}
