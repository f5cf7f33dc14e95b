import { Duration } from 'aws-cdk-lib';
import { AlarmSeverity } from '../../functions/core/config/alarms-schema';
import { RelayMetric } from '../../functions/core/metrics';
import { type AlarmContext, type AlarmRow, type AlarmSection, MissingData } from './table';
import { AT_LEAST_ONE } from './thresholds';

/** A gauge each sweep publishes: while the sweeper is silent the alarm keeps its state. */
const gauge =
  (name: RelayMetric) =>
  (context: AlarmContext): ReturnType<AlarmContext['relay']> =>
    context.relay(name, 'Maximum', Duration.minutes(5));

const stuckNow = (
  row: Pick<AlarmRow, 'name' | 'means' | 'firstResponse'> & { readonly gauge: RelayMetric },
): AlarmRow => ({
  name: row.name,
  severity: AlarmSeverity.Ticket,
  metricDoc: `\`${row.gauge}\` (Maximum, 5 min)`,
  metric: gauge(row.gauge),
  threshold: AT_LEAST_ONE,
  missingData: MissingData.KeepState,
  means: row.means,
  firstResponse: row.firstResponse,
});

/** Records stuck now: the sweeper counts them each minute, so these stay in alarm until handled. */
export const STUCK_NOW: AlarmSection = {
  heading: 'What is stuck now',
  about:
    'the sweeper counts the records each minute, so these stay in alarm until the records are handled, and recover by themselves when they are',
  rows: [
    stuckNow({
      name: 'MessagesUnknown',
      gauge: RelayMetric.UnknownNow,
      means: () =>
        'a message may or may not have arrived: the SMS service failed or timed out mid-send (an at-most-once route at once; an at-least-once one after `retry.for`)',
      firstResponse: ({ env }) =>
        `\`sms-relay logs --env ${env} --state UNKNOWN\`; ask the recipients or the service's dashboard whether it arrived; resend the rest knowingly: \`sms-relay redrive --env ${env} --state UNKNOWN --accept-duplicates\` (they may arrive twice). Many at once: the service had an outage`,
    }),
    stuckNow({
      name: 'MessagesParked',
      gauge: RelayMetric.ParkedNow,
      means: () => 'the balance could not pay (402, or the reserve kept for critical routes)',
      firstResponse: ({ env }) => `top up, then \`sms-relay redrive --env ${env} --state PARKED\``,
    }),
    stuckNow({
      name: 'MessagesFailed',
      gauge: RelayMetric.FailedNow,
      means: () =>
        'certainly not sent: refused for good (400: an unapproved sender ID, a bad number) or attempts ran out before reaching the service',
      firstResponse: ({ env }) =>
        `\`sms-relay logs --env ${env} --state FAILED\` shows why; fix the cause (the route's \`senderId\`, the recipients, the provider key), then \`sms-relay redrive --env ${env} --state FAILED\``,
    }),
    stuckNow({
      name: 'MessagesHeld',
      gauge: RelayMetric.HeldNow,
      means: () => 'a route was over its `limits`; its messages are HELD (the summary SMS said how many)',
      firstResponse: ({ env }) =>
        `\`sms-relay logs --env ${env} --state HELD\`; what must still go: \`sms-relay redrive --env ${env} --state HELD\`; raise the limits in \`config/${env}.yaml\` if they were too low`,
    }),
    stuckNow({
      name: 'DigestsOverdue',
      gauge: RelayMetric.DeferredOverdue,
      means: () =>
        "a DEFERRED message's window ended more than a sweep ago and its digest has not gone out (the sweeper sends digests)",
      firstResponse: ({ env }) =>
        `\`sms-relay logs --env ${env} --state DEFERRED\`; the sweeper's log; see \`SweeperNotRunning\``,
    }),
    stuckNow({
      name: 'IncidentsUnacknowledged',
      gauge: RelayMetric.IncidentsUnacknowledged,
      means: () =>
        'an incident went through every escalation and renotify step and nobody acknowledged it, nor did it resolve: everyone it paged stayed silent',
      firstResponse: ({ env }) =>
        `\`sms-relay incidents --env ${env}\`; reach the people another way, then \`sms-relay ack <incident> --env ${env}\`; review the route's \`escalate\` (see docs/paging.md)`,
    }),
    {
      name: 'SmsServiceUnreachable',
      severity: AlarmSeverity.Page,
      metricDoc:
        '`SmsServiceUnreachable` (Maximum, 5 min; 1 while sends are paused, published by each sweep and on each change)',
      metric: gauge(RelayMetric.SmsServiceUnreachable),
      threshold: AT_LEAST_ONE,
      missingData: MissingData.KeepState,
      means: () =>
        '"SMS service unreachable": sends failed in a row, so the relay stopped starting sends; messages wait PENDING without spending attempts while it probes the service; the alarm\'s state-change time says since when',
      firstResponse: ({ env }) =>
        `nothing to resend: they go out, oldest first, when the service answers. Check the service's status page and \`sms-relay balance --env ${env}\`; \`sms-relay logs --env ${env} --state PENDING\` shows what waits`,
    },
  ],
};
