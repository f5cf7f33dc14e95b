import type { LoadedConfig } from '../core/config/compile';
import type { SchedulesConfig } from '../core/config/oncall-schema';
import type { RelayConfigView } from '../core/config/view';
import { ONCALL } from '../core/defaults';
import { clockTime } from '../core/local-time';
import { onCallAt } from '../core/oncall/resolve';
import { shiftAt } from '../core/oncall/rotation';
import { parseLocalDateTime, type CompiledSchedule, type OnCallDirectory } from '../core/oncall/schedule';
import { maskMsisdn } from '../core/recipients/mask';
import { DeliveryPolicy } from '../core/config/policies';
import { AcceptOutcome, type MessageStore, NoticeKind } from '../store';
import { noticeMessage } from './notice';
import { NOTICE_ROUTE, type RelayContext } from './ports';

/** What the handoff SMS use of the store. */
export type HandoffStore = Pick<MessageStore, 'activeOverrides' | 'recordNotice'>;

/** Options of {@link recordHandoffs}. */
export interface HandoffOptions {
  /** The compiled config (the people's numbers), where the context's is a view (the Lambda sweeper's): called only when a handoff is due. */
  readonly compile?: () => Promise<LoadedConfig>;
}

/** What one run did: the handoff SMS recorded (PENDING), for the sender. */
export interface HandoffReport {
  readonly ids: readonly string[];
}

/**
 * The text of a handoff SMS: `You are on call for ops until 2026-12-07 09:00 (Africa/Dar_es_Salaam)`,
 * the time on the schedule's clock; `until further notice` when nobody else is ever on call.
 */
export function handoffText(
  schedule: Pick<CompiledSchedule, 'name' | 'timeZone'>,
  until: Date | undefined,
  now: Date,
): string {
  if (until === undefined) return `You are on call for ${schedule.name} until further notice`;
  return `You are on call for ${schedule.name} until ${clockTime(until, schedule.timeZone, now)} (${schedule.timeZone})`;
}

/**
 * The shift starts of the `notifyHandoff` schedules that began at most `ONCALL.handoffGraceSeconds`
 * before `now`, read from the config's text alone (no numbers, so no phone library): the Lambda
 * sweeper compiles the config only when one is due.
 */
function dueShifts(
  schedules: SchedulesConfig | undefined,
  now: Date,
): { readonly schedule: string; readonly from: Date }[] {
  return Object.entries(schedules ?? {}).flatMap(([name, schedule]) => {
    if (!schedule.notifyHandoff || schedule.rotation.people.length === 0) return [];
    const startWall = parseLocalDateTime(schedule.rotation.start);
    if (startWall === undefined) return [];
    const bare: CompiledSchedule = {
      name,
      timeZone: schedule.timezone,
      notifyHandoff: true,
      rotation: {
        people: schedule.rotation.people.map((person) => ({ name: person, number: '' })),
        everyMs: schedule.rotation.every * 1000,
        startWall,
      },
    };
    const { from } = shiftAt(bare, now);
    if (from === undefined || now.getTime() - from.getTime() > ONCALL.handoffGraceSeconds * 1000) return [];
    return [{ schedule: name, from }];
  });
}

/**
 * The sweeper's handoff step (`notifyHandoff: true`): when a schedule's shift begins, the person
 * on call then (an override in force wins over the rotation) is told `You are on call for <schedule>
 * until <local time>`. The SMS is a notice recorded under the key of the schedule and the shift's
 * start, so however many sweeps see the shift (the grace lets a late sweeper catch up), and a sweep
 * that crashed after recording, it is recorded once; at-least-once delivery, so a send that
 * failed is retried. Like every notice it takes credit whatever the reserve (as a critical SMS).
 *
 * @example
 * ```ts
 * const { ids } = await recordHandoffs(context, now, { compile });
 * dispatch?.(ids);
 * ```
 */
export async function recordHandoffs(
  context: RelayContext<RelayConfigView, HandoffStore>,
  now: Date,
  { compile }: HandoffOptions = {},
): Promise<HandoffReport> {
  const due = dueShifts(context.config.settings.schedules, now);
  if (due.length === 0) return { ids: [] };
  const onCall: OnCallDirectory | undefined =
    'onCall' in context.config ? (context.config as LoadedConfig).onCall : (await compile?.())?.onCall;
  if (onCall === undefined)
    throw new Error("handoff SMS need the compiled config (the people's numbers): pass the compiler to the sweep");
  const overrides = await context.store.activeOverrides({ schedules: due.map((shift) => shift.schedule), now });
  const ids: string[] = [];
  for (const { schedule: name, from } of due) {
    const schedule = onCall.schedules.get(name);
    if (schedule === undefined) continue;
    const current = onCallAt(schedule, overrides, onCall.people, now);
    if (current.person.number === '') continue;
    const message = {
      ...noticeMessage(
        handoffText(schedule, current.until, now),
        [current.person.number],
        context.config.settings.provider.defaultSenderId,
      ),
      delivery: DeliveryPolicy.AtLeastOnce,
    };
    const result = await context.store.recordNotice({
      kind: NoticeKind.Handoff,
      route: NOTICE_ROUTE,
      key: `${name}:${from.toISOString()}`,
      message,
      now,
      retentionDays: context.config.settings.retentionDays,
    });
    // A repeat records nothing; its ids go to the sender again only when a record was missing and recovered.
    if (result.outcome === AcceptOutcome.Duplicate && result.recovered === 0) continue;
    context.logger.info('handoff SMS recorded', {
      schedule: name,
      shift: from.toISOString(),
      to: maskMsisdn(current.person.number),
      ids: result.ids,
    });
    ids.push(...result.ids);
  }
  return { ids };
}
