import { Duration } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { BALANCE_SCHEDULE } from '../functions/core/defaults';
import { HANDLER_NAMES, type HandlerName } from './bundle';
import { pascalCase } from './names';
import { METRICS, RelayMetric } from '../functions/core/metrics';

export interface RelayObservabilityProps {
  readonly environmentName: string;
  /** The environment's metrics namespace (`metricsNamespace(env)`), which its functions publish to. */
  readonly namespace: string;
  readonly functions: Readonly<Record<HandlerName, lambda.IFunction>>;
  readonly table: dynamodb.ITable;
  /** The sender's stream failures. */
  readonly failureQueue: sqs.IQueue;
  /** Failed asynchronous deliveries: schedules, scheduled functions, the e-mail subscription. */
  readonly deadLetterQueue: sqs.IQueue;
  readonly stage: apigwv2.IHttpStage;
  /** The stage's access logs: the API's 429 answers are counted from them. */
  readonly accessLogs: logs.ILogGroup;
  /** The route ids: each gets an alarm on a sustained run of refused webhooks. */
  readonly routes: readonly string[];
  /**
   * Alarm when the provider balance falls below this.
   * @default - no balance alarm
   */
  readonly balanceThreshold?: number;
  /**
   * How often the balance watch runs (`balance.schedule`): the unreadable-balance alarm spans two runs.
   * @default 'rate(1 hour)'
   */
  readonly balanceSchedule?: string;
  /**
   * Subscribe this address to the alarm topic.
   * @default - no subscription
   */
  readonly alarmEmail?: string;
}

const FIVE_MINUTES = Duration.minutes(5);
const ONE_DAY_SECONDS = 86_400;

/** The alarm thresholds the README's runbook documents. */
export const ALARM_THRESHOLDS = {
  /** Stream records waiting longer than this (ms) at the sender: the stream is stalling. */
  iteratorAgeMs: 60_000,
  /** The oldest due PENDING record waiting longer than this (seconds): the sweeper is not draining. */
  pendingAgeSeconds: 300,
  /** Refused webhooks on one route in each of this many consecutive 5-minute periods. */
  rejectedPeriods: 3,
} as const;

/**
 * Alarms into one SNS topic (optionally e-mailed) and a dashboard of the relay's metrics: an alarm
 * for every way a message can end unsent or wait (UNKNOWN, PARKED, FAILED, the queues), a webhook
 * can be refused (API 5xx, a misconfigured route, a route refusing its sender), or the relay can
 * stall (stream lag, the PENDING backlog, throttles, an unreadable balance, function errors).
 *
 * Every alarm also notifies on return to OK, so a mailbox shows when a problem ended, and treats
 * missing data as fine: the relay is quiet most of the time. The relay's own metrics are read from
 * the environment's namespace only, so another environment's figures never reach these alarms.
 *
 * @example
 * ```ts
 * new RelayObservability(this, 'Observability', { environmentName: 'prod', namespace: 'SmsRelay/prod', functions, table, failureQueue, deadLetterQueue, stage, accessLogs, routes: ['oncall'] });
 * ```
 */
export class RelayObservability extends Construct {
  public readonly topic: sns.Topic;
  public readonly alarms: readonly cloudwatch.Alarm[];
  public readonly dashboard: cloudwatch.Dashboard;

  public constructor(scope: Construct, id: string, props: RelayObservabilityProps) {
    super(scope, id);
    const prefix = `SmsRelay-${props.environmentName}`;
    const relay = (name: RelayMetric, statistic: string, period: Duration = FIVE_MINUTES, route?: string): cloudwatch.Metric =>
      relayMetric(props.namespace, name, statistic, period, route);
    const sum = (name: RelayMetric): cloudwatch.Metric => relay(name, 'Sum');

    // No KMS key: the topic carries alarm state changes only, and CloudWatch cannot publish to a
    // topic encrypted with the AWS-managed SNS key.
    this.topic = new sns.Topic(this, 'AlarmTopic', { displayName: `sms-relay ${props.environmentName} alarms`, enforceSSL: true });
    if (props.alarmEmail !== undefined) {
      this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail, { deadLetterQueue: props.deadLetterQueue }));
    }

    const alarms: cloudwatch.Alarm[] = [];
    const alarm = (alarmId: string, alarmProps: Omit<cloudwatch.AlarmProps, 'alarmName' | 'comparisonOperator' | 'evaluationPeriods'> & Partial<cloudwatch.AlarmProps>): cloudwatch.Alarm => {
      const created = new cloudwatch.Alarm(this, alarmId, {
        alarmName: `${prefix}-${alarmId}`,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        ...alarmProps,
      });
      created.addAlarmAction(new actions.SnsAction(this.topic));
      created.addOkAction(new actions.SnsAction(this.topic));
      alarms.push(created);
      return created;
    };
    const runbook = (what: string, todo: string): string => `${what} First response: ${todo} (README, "Operating it").`;

    // Balance.
    if (props.balanceThreshold !== undefined) {
      alarm('BalanceLow', {
        alarmDescription: runbook(`The SMS provider balance is below ${props.balanceThreshold}.`, 'top up, then `sms-relay redrive --env <env> --state PARKED`'),
        metric: relay(RelayMetric.RemainingBalance, 'Minimum', Duration.hours(1)),
        threshold: props.balanceThreshold,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        // The balance arrives once per watch run; between runs the last reading stands.
        treatMissingData: cloudwatch.TreatMissingData.IGNORE,
      });
    }
    const unreadable = balanceReadWindow(props.balanceSchedule ?? BALANCE_SCHEDULE);
    alarm('BalanceUnreadable', {
      alarmDescription: runbook(
        `The balance watch could not read the balance ${unreadable.threshold === 1 ? 'on its last run' : 'on two runs'} (provider unreachable, or the API key refused).`,
        'see the balance-watch log; check the provider and `providerApiKey` in the secret',
      ),
      metric: relay(RelayMetric.BalanceReadFailed, 'Sum', unreadable.period),
      threshold: unreadable.threshold,
    });

    // Messages that ended unsent, or may have.
    alarm('SendFailures', {
      alarmDescription: runbook('The SMS provider refused at least one message (FAILED) in 5 minutes.', '`sms-relay logs --env <env> --state FAILED`, fix the cause, then `redrive`'),
      metric: sum(RelayMetric.Failed),
      threshold: 1,
    });
    alarm('MessagesUnknown', {
      alarmDescription: runbook(
        'At least one message is UNKNOWN: the provider failed or timed out mid-send on an at-most-once route, so it may or may not have gone out.',
        '`sms-relay logs --env <env> --state UNKNOWN`; ask the provider, or `redrive` what you accept may arrive twice',
      ),
      metric: sum(RelayMetric.Unknown),
      threshold: 1,
    });
    alarm('MessagesParked', {
      alarmDescription: runbook('At least one message is PARKED: the balance could not pay for it.', 'top up, then `sms-relay redrive --env <env> --state PARKED`'),
      metric: sum(RelayMetric.Parked),
      threshold: 1,
    });
    alarm('FailureQueueNotEmpty', {
      alarmDescription: runbook('Stream records exhausted the sender\'s retries; their messages may be unsent.', 'inspect the failure queue, then `redrive` the records it names'),
      metric: props.failureQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: 1,
    });
    alarm('DeadLetterQueueNotEmpty', {
      alarmDescription: runbook('A scheduled run or an alarm e-mail could not be delivered.', 'inspect the dead-letter queue'),
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: 1,
    });

    // Webhooks refused.
    alarm('WebhooksRefused5xx', {
      alarmDescription: runbook('The webhook endpoint answered 5xx: nothing was recorded and the sender must retry (a store failure, a misconfigured route, ingest failing).', 'see the ingest log and the RouteMisconfigured alarm'),
      metric: props.stage.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
      threshold: 1,
    });
    alarm('RouteMisconfigured', {
      alarmDescription: runbook('A route\'s secret is missing from the environment secret (or can never authenticate): its webhooks are refused with 500.', 'put the route secret with `aws secretsmanager put-secret-value`'),
      metric: sum(RelayMetric.RouteMisconfigured),
      threshold: 1,
    });
    for (const route of props.routes) {
      alarm(`Rejected-${route}`, {
        alarmDescription: runbook(
          `Route ${route} refused webhooks (401/400/413) in each of ${ALARM_THRESHOLDS.rejectedPeriods} consecutive 5-minute periods: a sender with a wrong secret, or someone probing the route.`,
          'see the ingest log for the reason; fix the sender\'s secret',
        ),
        metric: relay(RelayMetric.Rejected, 'Sum', FIVE_MINUTES, route),
        threshold: 1,
        evaluationPeriods: ALARM_THRESHOLDS.rejectedPeriods,
      });
    }

    // Stalls.
    alarm('SenderIteratorAge', {
      alarmDescription: runbook('New records waited more than a minute on the table stream before the sender took them.', 'see the sender\'s errors, throttles and duration'),
      metric: props.functions.sender.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: ALARM_THRESHOLDS.iteratorAgeMs,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    alarm('PendingBacklog', {
      alarmDescription: runbook(
        `The oldest due PENDING record has waited more than ${ALARM_THRESHOLDS.pendingAgeSeconds / 60} minutes: the sweeper is not draining the backlog (PendingDue on the dashboard counts it).`,
        '`sms-relay logs --env <env> --state PENDING`; see the sweeper log',
      ),
      metric: relay(RelayMetric.OldestPendingAgeSeconds, 'Maximum'),
      threshold: ALARM_THRESHOLDS.pendingAgeSeconds,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    alarm('SweepErrors', {
      alarmDescription: runbook('The sweeper could not send due records (the store failing); they stay due.', 'see the sweeper log'),
      metric: sum(RelayMetric.SweepErrors),
      threshold: 1,
    });
    alarm('TableThrottles', {
      alarmDescription: runbook('DynamoDB throttled reads or writes of the message table.', 'see the table\'s metrics; on-demand tables throttle on sudden bursts past twice the previous peak'),
      metric: tableThrottles(props.table),
      threshold: 1,
    });
    const apiThrottled = new logs.MetricFilter(this, 'ApiThrottledFilter', {
      logGroup: props.accessLogs,
      filterPattern: logs.FilterPattern.stringValue('$.status', '=', '429'),
      metricNamespace: props.namespace,
      metricName: API_THROTTLED,
      metricValue: '1',
    });
    alarm('ApiThrottled', {
      alarmDescription: runbook('The webhook endpoint answered 429: requests beyond deploy.throttle were refused.', 'raise deploy.throttle, or find the sender that floods'),
      metric: apiThrottled.metric({ statistic: 'Sum', period: FIVE_MINUTES }),
      threshold: 1,
    });
    for (const name of HANDLER_NAMES) {
      alarm(`${pascalCase(name)}Errors`, {
        alarmDescription: runbook(`The ${name} function failed at least once in 5 minutes.`, 'see its log group'),
        metric: props.functions[name].metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
        threshold: 1,
      });
      alarm(`${pascalCase(name)}Throttles`, {
        alarmDescription: runbook(`Lambda throttled the ${name} function at least once in 5 minutes.`, 'check the account\'s concurrency limit and other functions using it'),
        metric: props.functions[name].metricThrottles({ statistic: 'Sum', period: FIVE_MINUTES }),
        threshold: 1,
      });
    }
    this.alarms = alarms;

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: prefix,
      defaultInterval: Duration.days(1),
      widgets: dashboardRows(props, relay, apiThrottled.metric({ label: 'API 429', statistic: 'Sum', period: FIVE_MINUTES }), alarms),
    });
  }
}

/** The metric the access-log filter counts the API's 429 answers into. */
export const API_THROTTLED = 'ApiThrottled';

function relayMetric(namespace: string, name: RelayMetric, statistic: string, period: Duration, route?: string): cloudwatch.Metric {
  const dimensionsMap: Record<string, string> = { ...METRICS.dimensions, ...(route === undefined ? {} : { [METRICS.routeDimension]: route }) };
  return new cloudwatch.Metric({ namespace, metricName: name, dimensionsMap, statistic, period });
}

function tableThrottles(table: dynamodb.ITable): cloudwatch.MathExpression {
  const events = (metricName: string): cloudwatch.IMetric => table.metric(metricName, { statistic: 'Sum', period: FIVE_MINUTES });
  return new cloudwatch.MathExpression({
    expression: 'FILL(reads, 0) + FILL(writes, 0)',
    usingMetrics: { reads: events('ReadThrottleEvents'), writes: events('WriteThrottleEvents') },
    label: 'DynamoDB throttle events',
    period: FIVE_MINUTES,
  });
}

/**
 * The unreadable-balance alarm's window: two watch runs. A `rate()` schedule gives the interval;
 * the window is capped at a day (a CloudWatch period's longest), where a daily or rarer watch
 * alarms on its one failed run. A cron schedule's interval is not known here: a day's window, two
 * failed runs.
 */
export function balanceReadWindow(schedule: string): { readonly period: Duration; readonly threshold: number } {
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(schedule);
  if (rate === null) return { period: Duration.days(1), threshold: 2 };
  const unitSeconds = { minute: 60, hour: 3_600, day: ONE_DAY_SECONDS }[rate[2] as 'minute' | 'hour' | 'day'];
  const intervalSeconds = Number(rate[1]) * unitSeconds;
  if (2 * intervalSeconds <= ONE_DAY_SECONDS) return { period: Duration.seconds(2 * intervalSeconds), threshold: 2 };
  return { period: Duration.days(1), threshold: 1 };
}

function dashboardRows(
  props: RelayObservabilityProps,
  relay: (name: RelayMetric, statistic: string, period?: Duration, route?: string) => cloudwatch.Metric,
  apiThrottled: cloudwatch.IMetric,
  alarms: readonly cloudwatch.Alarm[],
): cloudwatch.IWidget[][] {
  const sum = (name: RelayMetric): cloudwatch.Metric => relay(name, 'Sum');
  const balance = relay(RelayMetric.RemainingBalance, 'Minimum', Duration.hours(1));
  const thresholds = props.balanceThreshold === undefined ? [] : [{ value: props.balanceThreshold, label: 'threshold', color: cloudwatch.Color.RED }];
  const perFunction = (metric: (fn: lambda.IFunction, label: string) => cloudwatch.IMetric): cloudwatch.IMetric[] =>
    HANDLER_NAMES.map((name) => metric(props.functions[name], name));

  return [
    [
      new cloudwatch.SingleValueWidget({ title: 'Provider balance', metrics: [balance], width: 6, height: 6, setPeriodToTimeRange: false }),
      new cloudwatch.GraphWidget({ title: 'Provider balance', left: [balance], leftAnnotations: thresholds, width: 12, height: 6 }),
      new cloudwatch.GraphWidget({ title: 'Balance watch: failed reads', left: [sum(RelayMetric.BalanceReadFailed)], width: 6, height: 6 }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'Lost or stuck messages',
        left: [sum(RelayMetric.Unknown), sum(RelayMetric.Failed), sum(RelayMetric.Parked)],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Messages',
        left: [sum(RelayMetric.Sent), sum(RelayMetric.HeldBack), sum(RelayMetric.Deferred), sum(RelayMetric.Digests)],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Spend',
        left: [sum(RelayMetric.CreditsSpent)],
        right: [sum(RelayMetric.Segments)],
        width: 8,
      }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'Webhooks',
        left: [sum(RelayMetric.Accepted), sum(RelayMetric.Duplicates), sum(RelayMetric.Filtered)],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Webhooks refused',
        left: [sum(RelayMetric.RouteMisconfigured), ...props.routes.map((route) => relay(RelayMetric.Rejected, 'Sum', FIVE_MINUTES, route).with({ label: `Rejected ${route}` }))],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Webhook endpoint',
        left: [props.stage.metricCount({ period: FIVE_MINUTES }), props.stage.metricClientError({ period: FIVE_MINUTES }), props.stage.metricServerError({ period: FIVE_MINUTES }), apiThrottled],
        right: [props.stage.metricLatency({ statistic: 'p95', period: FIVE_MINUTES })],
        width: 8,
      }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'Backlog: due PENDING records',
        left: [relay(RelayMetric.PendingDue, 'Maximum')],
        right: [relay(RelayMetric.OldestPendingAgeSeconds, 'Maximum')],
        rightAnnotations: [{ value: ALARM_THRESHOLDS.pendingAgeSeconds, label: 'oldest due (s) alarm', color: cloudwatch.Color.RED }],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Sender stream lag (ms)',
        left: [props.functions.sender.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES })],
        leftAnnotations: [{ value: ALARM_THRESHOLDS.iteratorAgeMs, label: 'alarm', color: cloudwatch.Color.RED }],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Queues (messages visible)',
        left: [
          props.failureQueue.metricApproximateNumberOfMessagesVisible({ label: 'failure queue', statistic: 'Maximum', period: FIVE_MINUTES }),
          props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ label: 'dead-letter queue', statistic: 'Maximum', period: FIVE_MINUTES }),
        ],
        width: 8,
      }),
    ],
    [
      new cloudwatch.GraphWidget({ title: 'Function errors', left: [...perFunction((fn, label) => fn.metricErrors({ label, statistic: 'Sum', period: FIVE_MINUTES })), sum(RelayMetric.SweepErrors)], width: 6 }),
      new cloudwatch.GraphWidget({ title: 'Function duration p95 (ms)', left: perFunction((fn, label) => fn.metricDuration({ label, statistic: 'p95', period: FIVE_MINUTES })), width: 6 }),
      new cloudwatch.GraphWidget({ title: 'Function throttles', left: perFunction((fn, label) => fn.metricThrottles({ label, statistic: 'Sum', period: FIVE_MINUTES })), width: 6 }),
      new cloudwatch.GraphWidget({ title: 'Table throttles', left: [tableThrottles(props.table)], width: 6 }),
    ],
    [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...alarms], width: 24, height: Math.max(6, 2 + Math.ceil(alarms.length / 4)) })],
  ];
}
