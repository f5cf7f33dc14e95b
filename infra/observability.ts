import { Duration } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { HANDLER_NAMES, type HandlerName } from './bundle';
import { pascalCase } from './names';
import { METRICS, type MetricName } from './metrics';

export interface RelayObservabilityProps {
  readonly environmentName: string;
  readonly functions: Readonly<Record<HandlerName, lambda.IFunction>>;
  /** The sender's stream failures. */
  readonly failureQueue: sqs.IQueue;
  /** Failed asynchronous deliveries: schedules, scheduled functions, the e-mail subscription. */
  readonly deadLetterQueue: sqs.IQueue;
  readonly stage: apigwv2.IHttpStage;
  /**
   * Alarm when the provider balance falls below this.
   * @default - no balance alarm
   */
  readonly balanceThreshold?: number;
  /**
   * Subscribe this address to the alarm topic.
   * @default - no subscription
   */
  readonly alarmEmail?: string;
}

const FIVE_MINUTES = Duration.minutes(5);

/**
 * Alarms into one SNS topic (optionally e-mailed) and a dashboard of the relay's metrics.
 *
 * Every alarm also notifies on return to OK, so a mailbox shows when a problem ended, and treats
 * missing data as fine: the relay is quiet most of the time.
 *
 * @example
 * ```ts
 * new RelayObservability(this, 'Observability', { environmentName: 'prod', functions, failureQueue, deadLetterQueue, stage, balanceThreshold: 5000 });
 * ```
 */
export class RelayObservability extends Construct {
  public readonly topic: sns.Topic;
  public readonly alarms: readonly cloudwatch.Alarm[];
  public readonly dashboard: cloudwatch.Dashboard;

  public constructor(scope: Construct, id: string, props: RelayObservabilityProps) {
    super(scope, id);
    const prefix = `SmsRelay-${props.environmentName}`;

    // No KMS key: the topic carries alarm state changes only, and CloudWatch cannot publish to a
    // topic encrypted with the AWS-managed SNS key.
    this.topic = new sns.Topic(this, 'AlarmTopic', { displayName: `sms-relay ${props.environmentName} alarms`, enforceSSL: true });
    if (props.alarmEmail !== undefined) {
      this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail, { deadLetterQueue: props.deadLetterQueue }));
    }

    const alarms: cloudwatch.Alarm[] = [];
    const alarm = (alarmId: string, alarmProps: cloudwatch.AlarmProps): cloudwatch.Alarm => {
      const created = new cloudwatch.Alarm(this, alarmId, { treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING, ...alarmProps });
      created.addAlarmAction(new actions.SnsAction(this.topic));
      created.addOkAction(new actions.SnsAction(this.topic));
      alarms.push(created);
      return created;
    };

    if (props.balanceThreshold !== undefined) {
      alarm('BalanceLow', {
        alarmName: `${prefix}-BalanceLow`,
        alarmDescription: `The SMS provider balance is below ${props.balanceThreshold}: top up, then redrive parked messages.`,
        metric: relayMetric(METRICS.names.remainingBalance, 'Minimum', Duration.hours(1)),
        threshold: props.balanceThreshold,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: 1,
        // The balance arrives once per watch run; between runs the last reading stands.
        treatMissingData: cloudwatch.TreatMissingData.IGNORE,
      });
    }
    alarm('SendFailures', {
      alarmName: `${prefix}-SendFailures`,
      alarmDescription: 'The SMS provider refused or lost at least one message in 5 minutes; see `sms-relay logs --state FAILED`.',
      metric: relayMetric(METRICS.names.failed, 'Sum', FIVE_MINUTES),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
    alarm('FailureQueueNotEmpty', {
      alarmName: `${prefix}-FailureQueueNotEmpty`,
      alarmDescription: 'Stream records exhausted the sender\'s retries; their messages may be unsent. Inspect the failure queue.',
      metric: props.failureQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
    alarm('DeadLetterQueueNotEmpty', {
      alarmName: `${prefix}-DeadLetterQueueNotEmpty`,
      alarmDescription: 'A scheduled run or an alarm e-mail could not be delivered. Inspect the dead-letter queue.',
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
    for (const name of HANDLER_NAMES) {
      alarm(`${pascalCase(name)}Errors`, {
        alarmName: `${prefix}-${pascalCase(name)}Errors`,
        alarmDescription: `The ${name} function failed at least once in 5 minutes; see its log group.`,
        metric: props.functions[name].metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }
    this.alarms = alarms;

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: prefix,
      defaultInterval: Duration.days(1),
      widgets: dashboardRows(props, alarms),
    });
  }
}

function relayMetric(name: MetricName, statistic: string, period: Duration): cloudwatch.Metric {
  return new cloudwatch.Metric({ namespace: METRICS.namespace, metricName: name, dimensionsMap: { ...METRICS.dimensions }, statistic, period });
}

function dashboardRows(props: RelayObservabilityProps, alarms: readonly cloudwatch.Alarm[]): cloudwatch.IWidget[][] {
  const sum = (name: MetricName): cloudwatch.Metric => relayMetric(name, 'Sum', FIVE_MINUTES);
  const balance = relayMetric(METRICS.names.remainingBalance, 'Minimum', Duration.hours(1));
  const thresholds = props.balanceThreshold === undefined ? [] : [{ value: props.balanceThreshold, label: 'threshold', color: cloudwatch.Color.RED }];
  const perFunction = (metric: (fn: lambda.IFunction, label: string) => cloudwatch.IMetric): cloudwatch.IMetric[] =>
    HANDLER_NAMES.map((name) => metric(props.functions[name], name));

  return [
    [
      new cloudwatch.SingleValueWidget({ title: 'Provider balance', metrics: [balance], width: 6, height: 6, setPeriodToTimeRange: false }),
      new cloudwatch.GraphWidget({ title: 'Provider balance', left: [balance], leftAnnotations: thresholds, width: 18, height: 6 }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'Webhooks',
        left: [sum(METRICS.names.accepted), sum(METRICS.names.duplicates), sum(METRICS.names.filtered)],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Messages',
        left: [sum(METRICS.names.sent), sum(METRICS.names.failed), sum(METRICS.names.parked), sum(METRICS.names.heldBack)],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Spend',
        left: [sum(METRICS.names.creditsSpent)],
        right: [sum(METRICS.names.segments)],
        width: 8,
      }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'Webhook endpoint',
        left: [props.stage.metricCount({ period: FIVE_MINUTES }), props.stage.metricClientError({ period: FIVE_MINUTES }), props.stage.metricServerError({ period: FIVE_MINUTES })],
        right: [props.stage.metricLatency({ statistic: 'p95', period: FIVE_MINUTES })],
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
      new cloudwatch.GraphWidget({
        title: 'Sender stream lag (ms)',
        left: [props.functions.sender.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES })],
        width: 8,
      }),
    ],
    [
      new cloudwatch.GraphWidget({ title: 'Function errors', left: perFunction((fn, label) => fn.metricErrors({ label, statistic: 'Sum', period: FIVE_MINUTES })), width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Function duration p95 (ms)', left: perFunction((fn, label) => fn.metricDuration({ label, statistic: 'p95', period: FIVE_MINUTES })), width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Function throttles', left: perFunction((fn, label) => fn.metricThrottles({ label, statistic: 'Sum', period: FIVE_MINUTES })), width: 8 }),
    ],
    [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...alarms], width: 24 })],
  ];
}
