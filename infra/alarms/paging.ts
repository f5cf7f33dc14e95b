import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { AlarmSeverity, DEFAULT_DELIVERY_LATENCY_P99_SECONDS } from '../../functions/core/config/alarms-schema';
import { RelayMetric } from '../../functions/core/metrics';
import { AlarmEach, type AlarmSection, MissingData } from './table';
import { AT_LEAST_ONE } from './thresholds';

const ONE_MINUTE = Duration.minutes(1);

/** Paging itself: an escalation that did not go out, or went out late, pages at once (1-minute periods). */
export const PAGING: AlarmSection = {
  heading: 'Paging itself',
  about:
    'an incident whose next person is not paged, a critical message not going out; 1-minute periods, so they page within a minute or two',
  rows: [
    {
      name: 'IncidentsOverdue',
      severity: AlarmSeverity.Page,
      metricDoc: '`IncidentsOverdue` (Maximum, 1 min; every sweep publishes it, zeros included)',
      metric: ({ relay }) => relay(RelayMetric.IncidentsOverdue, 'Maximum', ONE_MINUTE),
      threshold: AT_LEAST_ONE,
      missingData: MissingData.KeepState,
      means: () =>
        "an open incident's next escalation or renotify step is more than 2 minutes overdue: the next person is not being paged on time",
      firstResponse: ({ env }) =>
        `\`sms-relay incidents --env ${env}\`; page the next person by hand; the sweeper's log, \`SweeperNotRunning\`, \`EscalationErrors\``,
    },
    {
      name: 'EscalationErrors',
      severity: AlarmSeverity.Page,
      metricDoc: '`EscalationErrors` (Sum, 1 min)',
      metric: ({ relay }) => relay(RelayMetric.EscalationErrors, 'Sum', ONE_MINUTE),
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        'an escalation or renotify step could not be recorded (the store refusing), or its SMS can never go (no valid recipient, a text that cannot fit): someone who should have been paged was not',
      firstResponse: ({ env }) =>
        `the sweeper's log names the incident and the step (\`escalation not recorded\`); \`sms-relay incidents --env ${env}\`; page the next person by hand, then \`sms-relay ack <incident> --env ${env}\``,
    },
    {
      name: 'UnknownOrFailed-<route>',
      each: AlarmEach.CriticalRoute,
      nameNote: 'each `priority: critical` route',
      severity: AlarmSeverity.Page,
      metricDoc: '`Unknown` + `Failed` with `route` (Sum, 1 min, a gap as 0)',
      metric: ({ relay }, route) =>
        new cloudwatch.MathExpression({
          expression: 'FILL(unknown, 0) + FILL(failed, 0)',
          usingMetrics: {
            unknown: relay(RelayMetric.Unknown, 'Sum', ONE_MINUTE, route),
            failed: relay(RelayMetric.Failed, 'Sum', ONE_MINUTE, route),
          },
          label: `UNKNOWN or FAILED on ${route}`,
          period: ONE_MINUTE,
        }),
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        'a new message of a critical route ended UNKNOWN (may not have arrived) or FAILED (not sent): an alert that must wake someone may not have. It fires on new ones, so one old FAILED record does not keep it in alarm (`MessagesFailed` and `MessagesUnknown` count those)',
      firstResponse: ({ env, route }) =>
        `\`sms-relay logs --env ${env} --route ${route} --state FAILED\` (and \`UNKNOWN\`); tell the recipients another way; fix the cause, then redrive`,
    },
    {
      name: 'DeliveryLatency-<route>',
      each: AlarmEach.CriticalRoute,
      nameNote: 'each `priority: critical` route',
      severity: AlarmSeverity.Ticket,
      metricDoc:
        "`DeliveryLatency` with `route` (p99, 5 min): milliseconds from the webhook's acceptance to SENT, one datapoint per message sent",
      metric: ({ relay }, route) => relay(RelayMetric.DeliveryLatency, 'p99', Duration.minutes(5), route),
      threshold: {
        comparison: '>',
        value: ({ latencyP99Seconds }) => latencyP99Seconds * 1000,
        doc: `\`alarms.deliveryLatencyP99\` (default ${DEFAULT_DELIVERY_LATENCY_P99_SECONDS} s)`,
      },
      missingData: MissingData.Ok,
      means: ({ latencyP99 }) =>
        `the slowest 1% of the route's SMS took longer than ${latencyP99} from the webhook to SENT: retries, a backlog, a slow or paused SMS service, a throttled sender. A redriven message is left out (it waited for a person, not for the relay)`,
      firstResponse: ({ env, route }) =>
        `\`SmsServiceUnreachable\`, \`PendingBacklog\` and \`SenderIteratorAge\`; the sender's duration and throttles on the dashboard; \`sms-relay logs --env ${env} --route ${route}\``,
    },
  ],
};
