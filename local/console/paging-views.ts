import type { LoadedConfig } from '../../functions/core/config/load';
import { clockTime } from '../../functions/core/local-time';
import { onCallAt, type OnCallOverride } from '../../functions/core/oncall/resolve';
import type { CompiledSchedule, Person } from '../../functions/core/oncall/schedule';
import type { Incident } from '../../functions/core/paging/incident';
import { maskMsisdn, maskNumbersInText } from '../../functions/core/recipients';
import type { MessageRecord, MessageStore } from '../../functions/store';
import type { IncidentView, OnCallAnswer, OnCallPerson, ScheduleView, State } from './contract';

/** Handoffs the On call view lists ahead, per schedule. */
const HANDOFFS_AHEAD = 3;
/** The dedupe key of an escalation's or renotify's records (see `recordEscalations`). */
const ESCALATION_KEY = /^incident:([^:]+):(\d+)$/;
/** An acknowledge link at the end of an SMS: its token. */
const LINK_TOKEN = /\/a\/([A-Za-z0-9_-]+)$/;

const personView = (person: Person): OnCallPerson => ({ name: person.name, number: maskMsisdn(person.number) });

/**
 * The On call view: each schedule's person now (an override in force wins) and until when, the
 * overrides in force now or later, and the next handoffs, times on the schedule's clock.
 *
 * @example
 * ```ts
 * const { schedules } = await onCallView(source.loaded, store, new Date());
 * ```
 */
export async function onCallView(
  loaded: Pick<LoadedConfig, 'onCall'>,
  store: Pick<MessageStore, 'activeOverrides'>,
  now: Date,
): Promise<OnCallAnswer> {
  const { schedules, people } = loaded.onCall;
  if (schedules.size === 0) return { schedules: [] };
  const overrides = await store.activeOverrides({ schedules: [...schedules.keys()], now });
  return { schedules: [...schedules.values()].map((schedule) => scheduleView(schedule, overrides, people, now)) };
}

function scheduleView(
  schedule: CompiledSchedule,
  overrides: readonly OnCallOverride[],
  people: ReadonlyMap<string, Person>,
  now: Date,
): ScheduleView {
  const local = (at: Date): string => clockTime(at, schedule.timeZone, now);
  const base = {
    name: schedule.name,
    timeZone: schedule.timeZone,
    rotation: schedule.rotation.people.map((person) => person.name),
    every: schedule.rotation.everyMs / 1000,
    notifyHandoff: schedule.notifyHandoff,
  };
  const own = overrides.filter((override) => override.schedule === schedule.name && people.has(override.person));
  const overrideViews = own.map((override) => ({
    person: personView(people.get(override.person)!),
    from: override.from,
    until: override.until,
    fromLocal: local(new Date(override.from)),
    untilLocal: local(new Date(override.until)),
    reason: override.reason,
  }));
  if (schedule.rotation.people.length === 0) return { ...base, now: null, overrides: overrideViews, handoffs: [] };
  const current = onCallAt(schedule, own, people, now);
  const handoffs: ScheduleView['handoffs'][number][] = [];
  let cursor = current;
  while (cursor.until !== undefined && handoffs.length < HANDOFFS_AHEAD) {
    const next = onCallAt(schedule, own, people, cursor.until);
    handoffs.push({ at: cursor.until.toISOString(), atLocal: local(cursor.until), person: personView(next.person) });
    cursor = next;
  }
  return {
    ...base,
    now: {
      person: personView(current.person),
      until: current.until?.toISOString() ?? null,
      untilLocal: current.until === undefined ? null : local(current.until),
      override:
        current.override === undefined ? null : { reason: current.override.reason, until: current.override.until },
    },
    overrides: overrideViews,
    handoffs,
  };
}

/** Records of an incident's route read to find its SMS: one page, from just before it opened. */
const INCIDENT_SMS_PAGE = 100;
/** The webhook that opened an incident was recorded within this of its opening. */
const OPENING_SLACK_MS = 5_000;

/**
 * The state of each step's SMS, entry by entry of the incident's timeline (empty for an entry that
 * sent nothing): the opening webhook's SMS for `opened`, and the escalation or renotify SMS (dedupe
 * key `incident:<id>:<action>`) for each `escalated` or `renotified`, in order. One bounded read:
 * a page of the route's records from just before the incident opened.
 */
export async function storySmsStates(
  store: Pick<MessageStore, 'listByRoute'>,
  incident: Pick<Incident, 'id' | 'route' | 'openedAt' | 'timeline'>,
): Promise<(readonly State[])[]> {
  const opened = Date.parse(incident.openedAt);
  const { items } = await store.listByRoute(incident.route, {
    since: new Date(opened - OPENING_SLACK_MS),
    limit: INCIDENT_SMS_PAGE,
  });
  const opening: State[] = [];
  const actions = new Map<number, State[]>();
  for (const record of items) {
    const escalation = ESCALATION_KEY.exec(record.dedupeKey);
    if (escalation !== null && escalation[1] === incident.id) {
      const index = Number(escalation[2]);
      actions.set(index, [...(actions.get(index) ?? []), record.state]);
    } else if (escalation === null && Math.abs(Date.parse(record.createdAt) - opened) <= OPENING_SLACK_MS) {
      opening.push(record.state);
    }
  }
  const steps = [...actions.entries()].sort(([a], [b]) => a - b).map(([, states]) => states);
  let step = 0;
  return incident.timeline.map((entry) => {
    if (entry.event === 'opened') return opening;
    if (entry.event === 'escalated' || entry.event === 'renotified') return steps[step++] ?? [];
    return [];
  });
}

/**
 * The incident a record's SMS belongs to: an escalation's or renotify's by its dedupe key, any SMS
 * with an acknowledge link by the link's token (read as of the record's creation, so the story
 * stays readable after the link itself expired). `undefined` for any other SMS.
 */
export async function incidentOfRecord(
  store: Pick<MessageStore, 'getIncident' | 'findAckToken'>,
  record: Pick<MessageRecord, 'dedupeKey' | 'text' | 'createdAt'>,
): Promise<Incident | undefined> {
  const escalation = ESCALATION_KEY.exec(record.dedupeKey);
  if (escalation !== null) return await store.getIncident(escalation[1]!);
  const token = LINK_TOKEN.exec(record.text)?.[1];
  if (token === undefined) return undefined;
  return (await store.findAckToken(token, new Date(record.createdAt)))?.incident;
}

/**
 * An incident as its story: each timeline line with the people's names beside their masked
 * numbers (`sent to asha (2557****678)`), times on the route's clock.
 */
export function incidentView(
  incident: Incident,
  loaded: Pick<LoadedConfig, 'onCall' | 'routes'>,
  now: Date,
  smsStates: readonly (readonly State[])[] = [],
): IncidentView {
  const timeZone = loaded.routes.get(incident.route)?.config.timeZone ?? 'UTC';
  const names = new Map(
    [...loaded.onCall.people.values()]
      .filter((person) => person.number !== '')
      .map((person) => [maskMsisdn(person.number), person.name]),
  );
  const named = (detail: string): string =>
    maskNumbersInText(detail).replace(/\d{4}\*{4}\d{3}/g, (masked) =>
      names.has(masked) ? `${names.get(masked)} (${masked})` : masked,
    );
  return {
    id: incident.id,
    route: incident.route,
    state: incident.state,
    openedAt: incident.openedAt,
    level: incident.level,
    nextDueAt: incident.nextDueAt ?? null,
    closedAt: incident.closedAt ?? null,
    text: maskNumbersInText(incident.text),
    story: incident.timeline.map((entry, index) => ({
      at: entry.at,
      atLocal: clockTime(new Date(entry.at), timeZone, now),
      event: entry.event,
      line: named(entry.detail),
      states: smsStates[index] ?? [],
    })),
    timeZone,
  };
}
