import { Duration } from 'aws-cdk-lib';
import { AlarmSeverity } from '../../functions/core/config/alarms-schema';
import { RelayMetric } from '../../functions/core/metrics';
import { AlarmEach, type AlarmSection, MissingData } from './table';
import { ALARM_THRESHOLDS, AT_LEAST_ONE, THROTTLED_PERIODS } from './thresholds';

const FIVE_MINUTES = Duration.minutes(5);

/** Messages that will not be sent, or wait; webhooks refused. */
export const UNSENT: AlarmSection = {
  heading: 'Messages that will not be sent, webhooks refused',
  rows: [
    {
      name: 'Dropped-<route>',
      each: AlarmEach.Route,
      severity: AlarmSeverity.Ticket,
      metricDoc: '`Dropped` with `route` (Sum, 5 min)',
      metric: ({ relay }, route) => relay(RelayMetric.Dropped, 'Sum', FIVE_MINUTES, route),
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        "the route dropped a webhook or message: a template that no longer fits the payload (a sender changed its JSON), recipients that resolve to nothing, or an incident's SMS waited through an outage until its incident was acknowledged or resolved (expected: the reason says `incident acknowledged by … before this SMS went out`). Nothing was sent for it. A planned mute (`sms-relay mute`) does not count here: it counts `Muted`, on the dashboard, with no alarm",
      firstResponse: ({ env, route }) =>
        `\`sms-relay logs --env ${env} --route ${route}\` shows the reason; fix the template or recipients in \`config/${env}.yaml\` and deploy`,
    },
    {
      name: 'UndecodableRecords',
      severity: AlarmSeverity.Ticket,
      metricDoc: '`UndecodableRecords` (Sum, 5 min)',
      metric: ({ relay }) => relay(RelayMetric.UndecodableRecords, 'Sum'),
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        'records this version cannot read (written by a newer version before a rollback): skipped and logged by id, everything else goes on',
      firstResponse: () => 'deploy the newer version again; or leave them (the log names each id)',
    },
    {
      name: 'RouteMisconfigured',
      severity: AlarmSeverity.Ticket,
      metricDoc: '`RouteMisconfigured` (Sum, 5 min)',
      metric: ({ relay }) => relay(RelayMetric.RouteMisconfigured, 'Sum'),
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        "a route's secret is missing from the route secrets, or can never authenticate (a fresh deploy before `put-secret-value`, a route added without its secret); its webhooks get 500",
      firstResponse: ({ env, routesSecret }) =>
        `the ingest log names the route and the secret name; put the complete \`routes.json\`: \`aws secretsmanager put-secret-value --secret-id ${routesSecret} --secret-string file://routes.json\`; check first with \`sms-relay validate --config config/${env}.yaml --secrets <file>\`, the file holding both (\`providerApiKey\` and the route secrets, as locally)`,
    },
    {
      name: 'Rejected-<route>',
      each: AlarmEach.Route,
      severity: AlarmSeverity.Ticket,
      metricDoc: '`Rejected` with `route` (Sum, 1 h)',
      metric: ({ relay }, route) => relay(RelayMetric.Rejected, 'Sum', Duration.hours(1), route),
      threshold: { comparison: '≥', value: ALARM_THRESHOLDS.rejectedPerHour },
      missingData: MissingData.Ok,
      means: () =>
        `the route refused webhooks (401/400/413) at least ${ALARM_THRESHOLDS.rejectedPerHour} times in an hour: a sender with a wrong secret or signature (even one called rarely, or one that never retries, like GitHub), or someone probing the URL`,
      firstResponse: () =>
        'the ingest log (`webhook refused`, with the reason); fix the secret at the sender or in the route secrets',
    },
    {
      name: 'WebhooksRefused5xx',
      severity: AlarmSeverity.Page,
      metricDoc: 'API Gateway `5xx` (Sum, 5 min)',
      metric: ({ serverErrors }) => serverErrors,
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        'a webhook was answered 5xx and nothing was recorded (a store failure → 503, a misconfigured route → 500, ingest failing); the sender must retry, and some never do',
      firstResponse: () =>
        'the ingest log group (`webhook not recorded`, `route secret …`); see also `RouteMisconfigured`',
    },
    {
      name: 'ApiThrottled',
      severity: AlarmSeverity.Ticket,
      metricDoc:
        "`ApiThrottled` (Sum, 5 min), counted from the access logs' `status: 429` on `routeKey: POST /hooks/{route}` and `ANY /hooks/{route}/{proxy+}` (an opsgenie route's API; the acknowledge link's own limit is not counted)",
      metric: ({ apiThrottled }) => apiThrottled,
      threshold: { ...AT_LEAST_ONE, periods: THROTTLED_PERIODS },
      missingData: MissingData.Ok,
      means: () => 'webhooks beyond `deploy.throttle` were refused 429',
      firstResponse: ({ env }) =>
        `a sender flooding (the access log's \`ip\`, \`userAgent\`), or raise \`deploy.throttle\` in \`config/${env}.yaml\` and deploy`,
    },
    {
      name: 'FailureQueueNotEmpty',
      severity: AlarmSeverity.Ticket,
      metricDoc: 'SQS `ApproximateNumberOfMessagesVisible` of the failure queue (Maximum, 5 min)',
      metric: ({ failureQueueVisible }) => failureQueueVisible,
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        'the sender gave up on a batch of stream records after its retries; their records stay PENDING or SENDING in the table and the sweeper settles them',
      firstResponse: ({ env }) =>
        `the sender log around the queued batch's arrival time; check \`sms-relay logs --env ${env} --state PENDING\` drains, then purge the queue ("The failure and dead-letter queues" in docs/deploying.md)`,
    },
    {
      name: 'DeadLetterQueueNotEmpty',
      severity: AlarmSeverity.Ticket,
      metricDoc: 'the same, of the dead-letter queue',
      metric: ({ deadLetterQueueVisible }) => deadLetterQueueVisible,
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        'a scheduled run (sweeper, balance watch) failed after its retries, or an alarm e-mail or HTTPS notification could not be delivered',
      firstResponse: () =>
        'read the dead-letter queue, fix the cause, purge it ("The failure and dead-letter queues" in docs/deploying.md)',
    },
    {
      name: 'PagesUndelivered',
      // A page that reached nobody must reach someone: the ticket topic (e-mail) says so.
      severity: AlarmSeverity.Ticket,
      metricDoc: 'SNS `NumberOfNotificationsFailed` of the page topic (Sum, 5 min)',
      metric: ({ pagesUndelivered }) => pagesUndelivered,
      threshold: AT_LEAST_ONE,
      missingData: MissingData.Ok,
      means: () =>
        'SNS could not deliver a page to one of `alarms.page`: an SMS refused (the account in the SNS SMS sandbox, the monthly SMS spend limit reached, a number that cannot take SMS), an HTTPS endpoint down. A ticket, so it reaches the ticket e-mail when the pager is what failed',
      firstResponse: ({ env }) =>
        `the SNS text-messaging delivery logs and \`aws sns list-subscriptions-by-topic --topic-arn <PageTopicArn>\`; fix \`alarms.page\` in \`config/${env}.yaml\` or the account's SMS settings (see "Who the alarms reach")`,
    },
  ],
};
