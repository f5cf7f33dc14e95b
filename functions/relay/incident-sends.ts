import { IncidentState } from '../core/paging/incident';
import { maskMsisdn } from '../core/recipients/mask';
import type { MessageRecord, MessageStore } from '../store';
import { errorName } from './error-name';
import type { RelayContext } from './ports';
import type { RelayConfigView } from '../core/config/view';

/** What the sender reads and notes of an SMS's incident. */
export type IncidentSendStore = Pick<MessageStore, 'getIncident' | 'noteIncident'>;

/** Why an SMS of an incident is not sent: the incident was acknowledged or resolved before it went out. */
export interface ClosedIncident {
  readonly reason: string;
  /** `acknowledged` or `resolved`: what the incident's timeline says happened first. */
  readonly closed: string;
}

/**
 * Whether a claimed SMS pages for an incident that has since been acknowledged or resolved (its
 * escalation recorded before an acknowledgement, then held by an outage of the SMS service): such
 * an SMS would text someone about an alert already owned or over, so it is not sent. `undefined`
 * for an SMS of no incident, of an open one, or of one the store no longer has (sent, not lost).
 *
 * @example
 * ```ts
 * const closed = await closedIncident(context.store, claimed); // { reason: 'incident acknowledged by … before this SMS went out', … }
 * ```
 */
export async function closedIncident(
  store: IncidentSendStore,
  record: Pick<MessageRecord, 'incident'>,
): Promise<ClosedIncident | undefined> {
  if (record.incident === undefined) return undefined;
  const incident = await store.getIncident(record.incident);
  if (incident === undefined || incident.state === IncidentState.Open) return undefined;
  const closed = incident.state === IncidentState.Acknowledged ? 'acknowledged' : 'resolved';
  return {
    closed,
    reason: `incident ${closed} by ${incident.closedBy ?? 'unknown'} at ${incident.closedAt ?? 'unknown'} before this SMS went out`,
  };
}

/** Adds the SMS that was not sent to its incident's story; a failure is logged (the record already says why). */
export async function noteNotSent(
  context: RelayContext<RelayConfigView, IncidentSendStore>,
  record: Pick<MessageRecord, 'id' | 'route' | 'to' | 'incident'>,
  { closed }: ClosedIncident,
): Promise<void> {
  if (record.incident === undefined) return;
  const to = record.to.map(maskMsisdn).join(', ');
  await context.store
    .noteIncident(
      record.incident,
      { event: 'not-sent', detail: `SMS to ${to} not sent: the incident was ${closed} first` },
      context.clock(),
    )
    .catch((error: unknown) =>
      context.logger.error('incident timeline not updated', {
        id: record.id,
        route: record.route,
        error: errorName(error),
      }),
    );
}
