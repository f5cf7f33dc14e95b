import type { Incident, TimelineEntry } from '../core/paging/incident';
import type { MessageStore } from '../store';
// The table's constants only: `sms-relay incidents` loads this without the store (and the AWS SDK).
import { MessageState } from '../store/table';

/** The state of one SMS a step of an incident's story recorded. */
export interface StepSms {
  readonly id: string;
  /** `SENT`, `PARKED`, `DROPPED`…; `MISSING` when the record is gone (expired). */
  readonly state: MessageState | 'MISSING';
  /** Why it is not sent (parked, held, dropped…), as the record says. */
  readonly reason?: string;
}

/** A line of an incident's story with what its SMS became. */
export interface DeliveredEntry extends TimelineEntry {
  /** The step's SMS and their states: on `escalated` and `renotified` lines recorded with their ids. */
  readonly sms?: readonly StepSms[];
}

/** An incident whose story says what was delivered. */
export interface DeliveredIncident extends Incident {
  readonly timeline: readonly DeliveredEntry[];
}

/**
 * An incident with the state of each step's SMS beside its story line, so "escalated to baraka"
 * shows PARKED when it was never delivered: `sms-relay incidents` and the console read the same.
 * Reads each step's records (a timeline holds at most `PAGING.maxTimelineEntries` lines).
 *
 * @example
 * ```ts
 * const incidents = await Promise.all((await store.listOpenIncidents()).map((each) => withDelivery(store, each)));
 * ```
 */
export async function withDelivery(
  store: Pick<MessageStore, 'getMessage'>,
  incident: Incident,
): Promise<DeliveredIncident> {
  const timeline = await Promise.all(
    incident.timeline.map(async (entry): Promise<DeliveredEntry> => {
      if (entry.ids === undefined || entry.ids.length === 0) return entry;
      const sms = await Promise.all(
        entry.ids.map(async (id): Promise<StepSms> => {
          const record = await store.getMessage(id);
          if (record === undefined) return { id, state: 'MISSING' };
          return { id, state: record.state, ...(record.reason === undefined ? {} : { reason: record.reason }) };
        }),
      );
      return { ...entry, sms };
    }),
  );
  return { ...incident, timeline };
}

/** States in which an SMS still waits, for something or someone. */
const WAITING: ReadonlySet<string> = new Set([
  MessageState.Pending,
  MessageState.Sending,
  MessageState.Parked,
  MessageState.Held,
  MessageState.Deferred,
  MessageState.Unknown,
]);

/**
 * What an open incident waits for, in words: the step SMS not delivered yet, then the next step
 * (`next step due 14:20 (in 12 min)`), or that none is left and only an acknowledgement or a resolve
 * closes it. `when` formats a time for the reader.
 *
 * @example
 * ```ts
 * pendingOf(incident, (iso) => formatTime(iso)); // '1 SMS PARKED (escalated to 2557****111): insufficient balance: …; then no step left: …'
 * ```
 */
export function pendingOf(incident: DeliveredIncident, when: (iso: string) => string): string {
  const waiting = incident.timeline.flatMap((entry) =>
    (entry.sms ?? [])
      .filter((sms) => WAITING.has(sms.state))
      .map((sms) => `${sms.state} (${entry.detail})${sms.reason === undefined ? '' : `: ${sms.reason}`}`),
  );
  const next =
    incident.nextDueAt === undefined
      ? 'no escalation step left: it stays open until acknowledged ("sms-relay ack") or resolved'
      : `next step due ${when(incident.nextDueAt)}`;
  return waiting.length === 0 ? next : `${waiting.length} SMS not delivered: ${waiting.join('; ')}; ${next}`;
}
