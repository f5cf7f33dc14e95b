import { AlarmSeverity } from '../../functions/core/config/alarms-schema';
import { RelayMetric } from '../../functions/core/metrics';
import { HANDLER_NAMES, type HandlerName } from '../bundle';
import { AlarmEach, type AlarmSection, MissingData } from './table';
import { ALARM_THRESHOLDS, AT_LEAST_ONE, THROTTLED_PERIODS } from './thresholds';

const throttledWords = `in ${ALARM_THRESHOLDS.throttleDatapoints} of the last ${ALARM_THRESHOLDS.throttlePeriods} 5-minute periods`;

/** Stalls: the relay is slow, throttled or failing, and messages wait. */
export const STALLS: AlarmSection = {
  heading: 'Stalls',
  rows: [
    {
      name: 'SenderIteratorAge',
      severity: AlarmSeverity.Page,
      metricDoc: 'Lambda `IteratorAge` of the sender (Maximum, 5 min)',
      metric: ({ senderIteratorAge }) => senderIteratorAge,
      threshold: { comparison: '>', value: ALARM_THRESHOLDS.iteratorAgeMs, unit: 'ms' },
      missingData: MissingData.Ok,
      means: () =>
        `new records waited over ${ALARM_THRESHOLDS.iteratorAgeMs / 1000} s on the table stream: the sender is failing, throttled or slow`,
      firstResponse: () =>
        "the sender's errors, throttles and duration on the dashboard, its log group; the sweeper sends what waits, so nothing is lost meanwhile",
    },
    {
      name: 'PendingBacklog',
      severity: AlarmSeverity.Page,
      metricDoc: '`OldestPendingAgeSeconds` (Maximum, 5 min), published by each sweep with `PendingDue`',
      metric: ({ relay }) => relay(RelayMetric.OldestPendingAgeSeconds, 'Maximum'),
      threshold: { comparison: '>', value: ALARM_THRESHOLDS.pendingAgeSeconds, unit: 's' },
      missingData: MissingData.Ok,
      means: () =>
        `a due PENDING record has waited over ${ALARM_THRESHOLDS.pendingAgeSeconds / 60} minutes: the sweeper is not draining (failing, throttled), or the SMS service is down`,
      firstResponse: ({ env }) =>
        `\`sms-relay logs --env ${env} --state PENDING\`; the sweeper's log group; \`SmsServiceUnreachable\`; \`PendingDue\` on the dashboard shows how many`,
    },
    {
      name: 'SweepErrors',
      severity: AlarmSeverity.Ticket,
      metricDoc: '`SweepErrors` (Sum, 5 min)',
      metric: ({ relay }) => relay(RelayMetric.SweepErrors, 'Sum'),
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        'the sweeper could not send due records (the store failing), or one of its steps failed (each step runs on its own: the others still ran); what failed stays due',
      firstResponse: () =>
        'the sweeper log (`sweep could not send a record`, or `sweep step "<name>" failed` naming the step); the table\'s throttles',
    },
    {
      name: 'TableThrottles',
      severity: AlarmSeverity.Ticket,
      metricDoc:
        'DynamoDB `ReadThrottleEvents` + `WriteThrottleEvents` of the table and of each index (`GlobalSecondaryIndexName`) (Sum, 5 min)',
      metric: ({ tableThrottles }) => tableThrottles,
      threshold: { ...AT_LEAST_ONE, periods: THROTTLED_PERIODS },
      missingData: MissingData.Ok,
      means: () =>
        `the table or an index throttled ${throttledWords}: an on-demand table past twice its previous peak (a throttled index write throttles the table write behind it)`,
      firstResponse: () =>
        'usually passes on its own (everything is retried); if it lasts, pre-warm the table (warm throughput)',
    },
    {
      name: '<Function>Throttles',
      each: AlarmEach.Function,
      nameNote: `${HANDLER_NAMES.length}`,
      severity: AlarmSeverity.Ticket,
      metricDoc: 'Lambda `Throttles` per function (Sum, 5 min)',
      metric: ({ functionMetrics }, name) => functionMetrics(name as HandlerName).throttles,
      threshold: { ...AT_LEAST_ONE, periods: THROTTLED_PERIODS },
      missingData: MissingData.Ok,
      means: ({ fn }) =>
        `Lambda refused to run the ${fn} function ${throttledWords}: its reserved concurrency (the sweeper's 1 when a sweep overran a minute; the sender's \`deploy.senderConcurrency\`) or the account's concurrency is used up`,
      firstResponse: () =>
        "a sweeper throttle now and then is harmless (the next sweep runs); the sender's: raise `deploy.senderConcurrency`; otherwise the account's concurrent executions",
    },
    {
      name: '<Function>Errors',
      each: AlarmEach.Function,
      nameNote: `${HANDLER_NAMES.length}`,
      severity: AlarmSeverity.Ticket,
      metricDoc: 'Lambda `Errors` per function (Sum, 5 min)',
      metric: ({ functionMetrics }, name) => functionMetrics(name as HandlerName).errors,
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: ({ fn }) => `the ${fn} function threw or timed out`,
      firstResponse: ({ env, fnId }) =>
        `its log group (\`SmsRelay-${env}-Relay${fnId}Logs…\`, the function's logging configuration names it)`,
    },
  ],
};
