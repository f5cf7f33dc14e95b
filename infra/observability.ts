import { Duration, Validations } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { RelayConfig } from '../functions/core/config/schema';
import { ProviderType } from '../functions/core/provider/outcome';
import { BALANCE_SCHEDULE } from '../functions/core/defaults';
import { HANDLER_NAMES, type HandlerName } from './bundle';
import { relayStackName } from './names';
import { METRICS, RelayMetric } from '../functions/core/metrics';
import { functionMetrics, relayAlarms } from './alarms/build';
import type { AlarmContext, ProviderAlarmTarget } from './alarms/table';
import { ALARM_THRESHOLDS } from './alarms/thresholds';
import {
  type AlarmEndpoint,
  AlarmEndpointKind,
  AlarmSeverity,
  DEFAULT_DELIVERY_LATENCY_P99_SECONDS,
} from '../functions/core/config/alarms-schema';

export interface RelayObservabilityProps {
  readonly environmentName: string;
  /** The environment's metrics namespace (`metricsNamespace(env)`), which its functions publish to. */
  readonly namespace: string;
  readonly functions: Readonly<Record<HandlerName, lambda.IFunction>>;
  readonly table: dynamodb.ITable;
  /** The table's global secondary indexes: their throttles count with the table's. */
  readonly indexNames: readonly string[];
  /** The environment's two secrets, named in the alarm texts. */
  readonly secretNames: { readonly routes: string; readonly provider: string };
  /** The sender's stream failures. */
  readonly failureQueue: sqs.IQueue;
  /** Failed asynchronous deliveries: schedules, scheduled functions, the e-mail subscription. */
  readonly deadLetterQueue: sqs.IQueue;
  readonly stage: apigwv2.IHttpStage;
  /** The stage's access logs: the API's 429 answers are counted from them. */
  readonly accessLogs: logs.ILogGroup;
  /** The route ids: each gets an alarm on refused webhooks and one on dropped messages. */
  readonly routes: readonly string[];
  /**
   * The config's providers, in its order: with more than one, each gets its own alarms (circuit
   * open, balance unreadable where its API has one, low balance where it has a threshold).
   * @default [] (one provider: the service-wide alarms are its own)
   */
  readonly providers?: readonly ProviderAlarmTarget[];
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
   * Subscribe this address to both alarm topics, paging and ticket (`balance.email`).
   * @default - no subscription
   */
  readonly alarmEmail?: string;
  /**
   * Who each kind of alarm reaches (`alarms.page`, `alarms.ticket`): e-mail, SNS's own SMS, HTTPS.
   * @default - nobody beyond `alarmEmail`
   */
  readonly subscribers?: Readonly<Partial<Record<AlarmSeverity, readonly AlarmEndpoint[]>>>;
  /**
   * The `priority: critical` routes: a new UNKNOWN or FAILED record on one pages, and its delivery
   * latency has an alarm.
   * @default []
   */
  readonly criticalRoutes?: readonly string[];
  /**
   * The p99 accept-to-SENT latency, in seconds, above which a critical route's `DeliveryLatency-<route>` fires (`alarms.deliveryLatencyP99`).
   * @default 60
   */
  readonly deliveryLatencyP99Seconds?: number;
}

const FIVE_MINUTES = Duration.minutes(5);
const ONE_DAY_SECONDS = 86_400;

/**
 * What the stack does with each metric the relay publishes: every {@link RelayMetric} has a tile on
 * the dashboard, and either the alarms that read it (their ids; `<route>` stands for each route) or
 * the reason it has none. Typed over every name, so a new metric does not compile until it is
 * decided here; test/infra/alarms.test.ts checks the template keeps these promises.
 */
export const METRIC_ALARMS = {
  Accepted: { none: "traffic, not a fault; a route that goes quiet is what its heartbeat (dead-man's switch) is for" },
  Duplicates: { none: 'a sender retrying is normal; the duplicate is answered and never sent again' },
  Filtered: { none: "the route's own filter chose not to send (resolved alerts, ignored events)" },
  Dropped: { alarms: ['Dropped-<route>'] },
  Muted: { none: 'a planned mute (sms-relay mute) drops on purpose; the mute names its end and reason' },
  Sent: { none: 'success' },
  DeliveryLatency: { alarms: ['DeliveryLatency-<critical route>'], when: 'a route has priority: critical' },
  Unknown: {
    alarms: ['UnknownOrFailed-<critical route>'],
    when: 'a route has priority: critical (a page); UnknownNow (MessagesUnknown) alarms while any record is UNKNOWN',
  },
  Failed: {
    alarms: ['UnknownOrFailed-<critical route>'],
    when: 'a route has priority: critical (a page); FailedNow (MessagesFailed) alarms while any record is FAILED',
  },
  Parked: { none: 'an event; ParkedNow (MessagesParked) alarms while any record is PARKED' },
  HeldBack: {
    none: 'the same event as HeldNow (MessagesHeld), which stays in alarm until the HELD records are sent or dismissed; one alarm per event',
  },
  Deferred: {
    none: 'quiet hours or a digest window: the message goes out in the digest; DeferredOverdue alarms when a digest is late',
  },
  Digests: { none: 'digest SMS recorded; each is then sent or alarmed like any message' },
  CreditsSpent: { none: 'spend; the balance alarms (BalanceLow) watch what is left' },
  Segments: { none: 'spend; the balance alarms (BalanceLow) watch what is left' },
  RemainingBalance: {
    alarms: ['BalanceLow', 'ProviderBalanceLow-<provider>'],
    when: 'balance.threshold is set: BalanceLow with one provider, ProviderBalanceLow-<provider> for each of several with a threshold',
  },
  RouteMisconfigured: { alarms: ['RouteMisconfigured'] },
  Rejected: { alarms: ['Rejected-<route>'] },
  PendingDue: {
    none: "the backlog's size; PendingBacklog alarms on its age, SweeperNotRunning on the Sweeps heartbeat",
  },
  Sweeps: { alarms: ['SweeperNotRunning'] },
  OldestPendingAgeSeconds: { alarms: ['PendingBacklog'] },
  SweepErrors: { alarms: ['SweepErrors'] },
  BalanceReadFailed: {
    alarms: ['BalanceUnreadable', 'BalanceWatchNotRunning', 'ProviderBalanceUnreadable-<provider>'],
    when: 'ProviderBalanceUnreadable-<provider> with several providers, for each whose API has a balance',
  },
  UndecodableRecords: { alarms: ['UndecodableRecords'] },
  SmsServiceUnreachable: {
    alarms: ['SmsServiceUnreachable', 'ProviderCircuitOpen-<provider>'],
    when: 'ProviderCircuitOpen-<provider> with several providers',
  },
  UnknownNow: { alarms: ['MessagesUnknown'] },
  ParkedNow: { alarms: ['MessagesParked'] },
  FailedNow: { alarms: ['MessagesFailed'] },
  HeldNow: { alarms: ['MessagesHeld'] },
  DeferredOverdue: { alarms: ['DigestsOverdue'] },
  EscalationsSent: {
    none: 'paging working as configured: nobody acknowledged yet; IncidentsUnacknowledged alarms when the last step passed',
  },
  IncidentsUnacknowledged: { alarms: ['IncidentsUnacknowledged'] },
  EscalationErrors: { alarms: ['EscalationErrors'] },
  IncidentsOverdue: { alarms: ['IncidentsOverdue'] },
} as const satisfies Record<RelayMetric, MetricAlarmDecision>;

/** One metric's alarms (ids after `SmsRelay-<env>-`), or why it has none. */
export type MetricAlarmDecision =
  | { readonly alarms: readonly string[]; readonly when?: string }
  | { readonly none: string };

/**
 * Alarms into two SNS topics, one per {@link AlarmSeverity} (`page`: someone must act now;
 * `ticket`: the rest), each reaching its people by e-mail, SNS's own SMS or HTTPS, and a dashboard
 * of the relay's metrics: an alarm
 * for every way a message can end unsent or wait (records UNKNOWN, PARKED, FAILED, HELD now, late
 * digests, dropped messages, the queues), a webhook can be refused (API 5xx, a misconfigured
 * route, a route refusing its sender), or the relay can stall (the SMS service unreachable, stream
 * lag, the PENDING backlog, throttles, an unreadable balance, records this version cannot decode,
 * function errors), and on the watchers themselves (the sweeper or the balance watch not running).
 *
 * The alarms are the rows of `infra/alarms/` (`ALARM_SECTIONS`), the same rows docs/deploying.md's
 * alarm tables are written from. Every alarm also notifies on return to OK, so a mailbox shows when a problem ended. Counts of
 * events treat missing data as fine (the relay is quiet most of the time); the gauges each sweep
 * publishes keep their state while data is missing (the `SweeperNotRunning` alarm speaks for
 * that); the watchers' alarms treat missing data as breaching. The texts name the environment and
 * the command that helps. The relay's own metrics are read from the environment's namespace only,
 * so another environment's figures never reach these alarms.
 *
 * @example
 * ```ts
 * new RelayObservability(this, 'Observability', { environmentName: 'prod', namespace: 'SmsRelay/prod', functions, table, indexNames: ['byStateSummary', 'byRoute'], secretNames: { routes: 'sms-relay/prod', provider: 'sms-relay/prod/provider' }, failureQueue, deadLetterQueue, stage, accessLogs, routes: ['oncall'] });
 * ```
 */
export class RelayObservability extends Construct {
  /** One topic per kind of alarm: each alarm notifies the topic of its severity. */
  public readonly topics: Readonly<Record<AlarmSeverity, sns.Topic>>;
  public readonly alarms: readonly cloudwatch.Alarm[];
  public readonly dashboard: cloudwatch.Dashboard;

  public constructor(scope: Construct, id: string, props: RelayObservabilityProps) {
    super(scope, id);
    const env = props.environmentName;
    const prefix = relayStackName(env);
    const relay = (
      name: RelayMetric,
      statistic: string,
      period: Duration = FIVE_MINUTES,
      route?: string,
    ): cloudwatch.Metric => relayMetric(props.namespace, name, statistic, period, route);

    this.topics = alarmTopics(this, env, props);

    const apiThrottled = new logs.MetricFilter(this, 'ApiThrottledFilter', {
      logGroup: props.accessLogs,
      // The webhooks' 429s, an opsgenie route's API below its URL included (`ANY /hooks/{route}/{proxy+}`,
      // where Opsgenie's creates arrive): the acknowledge link has limits of its own (ACK_THROTTLE).
      filterPattern: logs.FilterPattern.all(
        logs.FilterPattern.stringValue('$.status', '=', '429'),
        logs.FilterPattern.any(
          logs.FilterPattern.stringValue('$.routeKey', '=', 'POST /hooks/{route}'),
          logs.FilterPattern.stringValue('$.routeKey', '=', 'ANY /hooks/{route}/{proxy+}'),
        ),
      ),
      metricNamespace: props.namespace,
      metricName: API_THROTTLED,
      metricValue: '1',
    });
    const page = AlarmSeverity.Page;
    const balanceSchedule = props.balanceSchedule ?? BALANCE_SCHEDULE;
    const providers = props.providers ?? [];
    const context: AlarmContext = {
      relay,
      providerMetric: (name, statistic, period, provider) =>
        new cloudwatch.Metric({
          namespace: props.namespace,
          metricName: name,
          dimensionsMap: { ...METRICS.dimensions, [METRICS.providerDimension]: provider },
          statistic,
          period,
        }),
      providers,
      functionMetrics: functionMetrics(props.functions),
      failureQueueVisible: props.failureQueue.metricApproximateNumberOfMessagesVisible({
        statistic: 'Maximum',
        period: FIVE_MINUTES,
      }),
      deadLetterQueueVisible: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        statistic: 'Maximum',
        period: FIVE_MINUTES,
      }),
      pagesUndelivered: this.topics[page].metricNumberOfNotificationsFailed({ statistic: 'Sum', period: FIVE_MINUTES }),
      serverErrors: props.stage.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
      apiThrottled: apiThrottled.metric({ statistic: 'Sum', period: FIVE_MINUTES }),
      tableThrottles: tableThrottles(props.table, props.indexNames),
      senderIteratorAge: props.functions.sender.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES }),
      balanceWindow: balanceReadWindow(balanceSchedule),
      ...(props.balanceThreshold === undefined ? {} : { balanceThreshold: props.balanceThreshold }),
      latencyP99Seconds: props.deliveryLatencyP99Seconds ?? DEFAULT_DELIVERY_LATENCY_P99_SECONDS,
    };
    const alarms = relayAlarms(
      this,
      {
        environmentName: env,
        routes: props.routes,
        criticalRoutes: props.criticalRoutes ?? [],
        secretNames: props.secretNames,
        balanceSchedule,
        providers: providers.map((provider) => provider.name),
      },
      context,
      this.topics,
    );
    this.alarms = alarms;

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: prefix,
      defaultInterval: Duration.days(1),
      widgets: dashboardRows(
        props,
        relay,
        apiThrottled.metric({ label: 'API 429', statistic: 'Sum', period: FIVE_MINUTES }),
        this.topics[page].metricNumberOfNotificationsFailed({
          label: 'pages SNS could not deliver',
          statistic: 'Sum',
          period: FIVE_MINUTES,
        }),
        alarms,
      ),
    });
  }
}

/**
 * The two alarm topics, each with its subscriptions: `alarms.page` and `alarms.ticket` by their
 * kind, and `alarmEmail` (`balance.email`) on both. Undeliverable notifications are dead-lettered.
 */
function alarmTopics(
  scope: Construct,
  env: string,
  props: Pick<RelayObservabilityProps, 'subscribers' | 'alarmEmail' | 'deadLetterQueue'>,
): Record<AlarmSeverity, sns.Topic> {
  // No KMS key: the topics carry alarm state changes only, and CloudWatch cannot publish to a
  // topic encrypted with the AWS-managed SNS key.
  const topic = (id: string, what: string): sns.Topic =>
    new sns.Topic(scope, id, { displayName: `sms-relay ${env} ${what}`, enforceSSL: true });
  const topics = {
    [AlarmSeverity.Page]: topic('PageTopic', 'pages'),
    // The construct id of the one topic before pages were split off: an upgrade keeps that topic
    // (as the ticket topic) and the e-mail subscription confirmed on it.
    [AlarmSeverity.Ticket]: topic('AlarmTopic', 'tickets'),
  };
  const email = props.alarmEmail === undefined ? [] : [{ kind: AlarmEndpointKind.Email, endpoint: props.alarmEmail }];
  for (const severity of Object.values(AlarmSeverity)) {
    const endpoints = new Map(
      [...(props.subscribers?.[severity] ?? []), ...email].map((each) => [each.endpoint, each]),
    );
    for (const { kind, endpoint } of endpoints.values()) {
      const added = topics[severity].addSubscription(subscription(kind, endpoint, props.deadLetterQueue));
      if (kind === AlarmEndpointKind.Sms)
        Validations.of(added).acknowledge({
          id: 'Serverless-SNSRedrivePolicy',
          reason:
            "CDK's SMS subscription takes no dead-letter queue; an SMS page SNS cannot deliver counts NumberOfNotificationsFailed on the page topic, which the PagesUndelivered alarm e-mails as a ticket.",
        });
    }
  }
  return topics;
}

function subscription(kind: AlarmEndpointKind, endpoint: string, deadLetterQueue: sqs.IQueue): sns.ITopicSubscription {
  switch (kind) {
    case AlarmEndpointKind.Email:
      return new subscriptions.EmailSubscription(endpoint, { deadLetterQueue });
    // SNS's own SMS: a page must not depend on the SMS service (or the credit) the relay sends through.
    case AlarmEndpointKind.Sms:
      return new subscriptions.SmsSubscription(endpoint, { deadLetterQueue });
    case AlarmEndpointKind.Https:
      return new subscriptions.UrlSubscription(endpoint, { protocol: sns.SubscriptionProtocol.HTTPS, deadLetterQueue });
  }
}

/**
 * What each provider's alarms need: its name, whether its API has a balance (`http` has none), and
 * its `balance.threshold` (its own `balance:` block; the first provider's is the top-level one).
 *
 * @example
 * ```ts
 * providerAlarmTargets(config); // [{ name: 'main', readsBalance: true, balanceThreshold: 5000 }, { name: 'gateway', readsBalance: false }]
 * ```
 */
export function providerAlarmTargets(config: RelayConfig): ProviderAlarmTarget[] {
  return Object.entries(config.providers).map(([name, entry], index) => {
    const threshold = (entry.balance ?? (index === 0 ? config.balance : undefined))?.threshold;
    return {
      name,
      readsBalance: entry.type !== ProviderType.Http,
      ...(threshold === undefined ? {} : { balanceThreshold: threshold }),
    };
  });
}

/** The metric the access-log filter counts the API's 429 answers into. */
export const API_THROTTLED = 'ApiThrottled';

function relayMetric(
  namespace: string,
  name: RelayMetric,
  statistic: string,
  period: Duration,
  route?: string,
): cloudwatch.Metric {
  const dimensionsMap: Record<string, string> = {
    ...METRICS.dimensions,
    ...(route === undefined ? {} : { [METRICS.routeDimension]: route }),
  };
  return new cloudwatch.Metric({ namespace, metricName: name, dimensionsMap, statistic, period });
}

function tableThrottles(table: dynamodb.ITable, indexNames: readonly string[]): cloudwatch.MathExpression {
  const events = (metricName: string, index?: string): cloudwatch.IMetric =>
    new cloudwatch.Metric({
      namespace: 'AWS/DynamoDB',
      metricName,
      dimensionsMap: {
        TableName: table.tableName,
        ...(index === undefined ? {} : { GlobalSecondaryIndexName: index }),
      },
      statistic: 'Sum',
      period: FIVE_MINUTES,
    });
  // An index's throttles are its own series (TableName and GlobalSecondaryIndexName); a throttled
  // index write throttles the table write that caused it.
  const usingMetrics: Record<string, cloudwatch.IMetric> = {
    reads: events('ReadThrottleEvents'),
    writes: events('WriteThrottleEvents'),
  };
  indexNames.forEach((index, i) => {
    usingMetrics[`index${i}reads`] = events('ReadThrottleEvents', index);
    usingMetrics[`index${i}writes`] = events('WriteThrottleEvents', index);
  });
  return new cloudwatch.MathExpression({
    expression: Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics,
    label: 'DynamoDB throttle events (table and indexes)',
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
  pagesUndelivered: cloudwatch.IMetric,
  alarms: readonly cloudwatch.Alarm[],
): cloudwatch.IWidget[][] {
  const sum = (name: RelayMetric): cloudwatch.Metric => relay(name, 'Sum');
  const gauge = (name: RelayMetric): cloudwatch.Metric => relay(name, 'Maximum');
  const balance = relay(RelayMetric.RemainingBalance, 'Minimum', Duration.hours(1));
  const thresholds =
    props.balanceThreshold === undefined
      ? []
      : [{ value: props.balanceThreshold, label: 'threshold', color: cloudwatch.Color.RED }];
  const perFunction = (metric: (fn: lambda.IFunction, label: string) => cloudwatch.IMetric): cloudwatch.IMetric[] =>
    HANDLER_NAMES.map((name) => metric(props.functions[name], name));

  return [
    [
      new cloudwatch.SingleValueWidget({
        title: 'Provider balance',
        metrics: [balance],
        width: 6,
        height: 6,
        setPeriodToTimeRange: false,
      }),
      new cloudwatch.GraphWidget({
        title: 'Provider balance',
        left: [balance],
        leftAnnotations: thresholds,
        width: 12,
        height: 6,
      }),
      new cloudwatch.GraphWidget({
        title: 'Balance watch: failed reads',
        left: [sum(RelayMetric.BalanceReadFailed)],
        width: 6,
        height: 6,
      }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'SMS service unreachable (sends paused)',
        left: [gauge(RelayMetric.SmsServiceUnreachable)],
        leftYAxis: { min: 0, max: 1 },
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Watchers: runs per 5 minutes',
        left: [
          relay(RelayMetric.Sweeps, 'SampleCount').with({ label: 'sweeps' }),
          relay(RelayMetric.BalanceReadFailed, 'SampleCount').with({ label: 'balance-watch runs' }),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Records this version cannot decode',
        left: [sum(RelayMetric.UndecodableRecords)],
        width: 8,
      }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'Records stuck now (each sweep)',
        left: [
          gauge(RelayMetric.UnknownNow),
          gauge(RelayMetric.FailedNow),
          gauge(RelayMetric.ParkedNow),
          gauge(RelayMetric.HeldNow),
          gauge(RelayMetric.DeferredOverdue),
          gauge(RelayMetric.IncidentsUnacknowledged),
          gauge(RelayMetric.IncidentsOverdue),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Messages',
        left: [
          sum(RelayMetric.Sent),
          sum(RelayMetric.HeldBack),
          sum(RelayMetric.Deferred),
          sum(RelayMetric.Digests),
          sum(RelayMetric.EscalationsSent),
        ],
        right: [
          sum(RelayMetric.Unknown),
          sum(RelayMetric.Failed),
          sum(RelayMetric.Parked),
          sum(RelayMetric.EscalationErrors),
        ],
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
        left: [
          sum(RelayMetric.Accepted),
          sum(RelayMetric.Duplicates),
          sum(RelayMetric.Filtered),
          sum(RelayMetric.Muted),
        ],
        right: props.routes.map((route) =>
          relay(RelayMetric.Dropped, 'Sum', FIVE_MINUTES, route).with({ label: `Dropped ${route}` }),
        ),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Webhooks refused',
        left: [
          sum(RelayMetric.RouteMisconfigured),
          ...props.routes.map((route) =>
            relay(RelayMetric.Rejected, 'Sum', FIVE_MINUTES, route).with({ label: `Rejected ${route}` }),
          ),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Webhook endpoint',
        left: [
          props.stage.metricCount({ period: FIVE_MINUTES }),
          props.stage.metricClientError({ period: FIVE_MINUTES }),
          props.stage.metricServerError({ period: FIVE_MINUTES }),
          apiThrottled,
        ],
        right: [props.stage.metricLatency({ statistic: 'p95', period: FIVE_MINUTES })],
        width: 8,
      }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'Backlog: due PENDING records',
        left: [relay(RelayMetric.PendingDue, 'Maximum')],
        right: [relay(RelayMetric.OldestPendingAgeSeconds, 'Maximum')],
        rightAnnotations: [
          { value: ALARM_THRESHOLDS.pendingAgeSeconds, label: 'oldest due (s) alarm', color: cloudwatch.Color.RED },
        ],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: 'Delivery latency, accept to SENT (ms)',
        left: [
          relay(RelayMetric.DeliveryLatency, 'p50').with({ label: 'p50' }),
          relay(RelayMetric.DeliveryLatency, 'p99').with({ label: 'p99' }),
          ...(props.criticalRoutes ?? []).map((route) =>
            relay(RelayMetric.DeliveryLatency, 'p99', FIVE_MINUTES, route).with({ label: `p99 ${route}` }),
          ),
        ],
        leftAnnotations: [
          {
            value: (props.deliveryLatencyP99Seconds ?? DEFAULT_DELIVERY_LATENCY_P99_SECONDS) * 1000,
            label: 'critical routes p99 alarm',
            color: cloudwatch.Color.RED,
          },
        ],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: 'Sender stream lag (ms)',
        left: [props.functions.sender.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES })],
        leftAnnotations: [{ value: ALARM_THRESHOLDS.iteratorAgeMs, label: 'alarm', color: cloudwatch.Color.RED }],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: 'Queues (messages visible); undelivered pages',
        left: [
          props.failureQueue.metricApproximateNumberOfMessagesVisible({
            label: 'failure queue',
            statistic: 'Maximum',
            period: FIVE_MINUTES,
          }),
          props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
            label: 'dead-letter queue',
            statistic: 'Maximum',
            period: FIVE_MINUTES,
          }),
        ],
        right: [pagesUndelivered],
        width: 6,
      }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'Function errors',
        left: [
          ...perFunction((fn, label) => fn.metricErrors({ label, statistic: 'Sum', period: FIVE_MINUTES })),
          sum(RelayMetric.SweepErrors),
          sum(RelayMetric.EscalationErrors),
        ],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: 'Function duration p95 (ms)',
        left: perFunction((fn, label) => fn.metricDuration({ label, statistic: 'p95', period: FIVE_MINUTES })),
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: 'Function throttles',
        left: perFunction((fn, label) => fn.metricThrottles({ label, statistic: 'Sum', period: FIVE_MINUTES })),
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: 'Table throttles',
        left: [tableThrottles(props.table, props.indexNames)],
        width: 6,
      }),
    ],
    [
      new cloudwatch.AlarmStatusWidget({
        title: 'Alarms',
        alarms: [...alarms],
        width: 24,
        height: Math.max(6, 2 + Math.ceil(alarms.length / 4)),
      }),
    ],
  ];
}
