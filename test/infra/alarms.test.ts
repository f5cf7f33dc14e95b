import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { parseConfig } from '../../functions/core/config/parse';
import { HANDLER_NAMES, type HandlerName } from '../../infra/bundle';
import { METRICS, metricsNamespace, RelayMetric } from '../../functions/core/metrics';
import { pascalCase } from '../../infra/names';
import { API_THROTTLED, balanceReadWindow, METRIC_ALARMS, type MetricAlarmDecision } from '../../infra/observability';
import { SmsRelayStack } from '../../infra/stack';
import {
  bundleForTests,
  configText,
  resourcesOfType,
  synthStack,
  type CfnResourceJson,
  type TestStack,
} from './support';

/**
 * Every alarm the runbook lists, each found by the metric it watches (never by its name), with its
 * threshold; and two environments in one account and region reading no metric series in common.
 */

let bundle: ReturnType<typeof bundleForTests>;
let prod: TestStack;
/** Three providers: main (its threshold the top-level balance's), at (its own), gateway (http, no balance). */
let several: TestStack;

const SEVERAL_PROVIDERS = `providers:
  main: { type: sms-service, baseUrl: "https://sms.example.co.tz" }
  at: { type: africastalking, username: acme, balance: { threshold: 300 } }
  gateway:
    type: http
    url: https://gw.example.com/api/v1/sms/send
    headers: { X-API-Key: "{{ secret.gateway-key }}" }
    body: '{"to": {{ to | json }}, "message": {{ text | json }}}'
routing:
  - { numbers: ["+255"], use: [main, at] }
  - { numbers: ["+254"], use: [at, gateway] }
balance: { threshold: 5000 }
routes:
  ci: { source: github, secret: gh, recipients: ["+255712345678"] }
`;

beforeAll(() => {
  bundle = bundleForTests();
  prod = synthStack('prod', configText('prod'), bundle.dir);
  several = synthStack('providers', SEVERAL_PROVIDERS, bundle.dir);
});

interface AlarmJson {
  readonly AlarmName?: string;
  readonly AlarmDescription?: string;
  readonly Namespace?: string;
  readonly MetricName?: string;
  readonly Dimensions?: { Name: string; Value: unknown }[];
  readonly Statistic?: string;
  readonly ExtendedStatistic?: string;
  readonly DatapointsToAlarm?: number;
  readonly AlarmActions?: unknown[];
  readonly OKActions?: unknown[];
  readonly Period?: number;
  readonly Threshold?: number;
  readonly EvaluationPeriods?: number;
  readonly ComparisonOperator?: string;
  readonly TreatMissingData?: string;
  readonly Metrics?: {
    Id: string;
    Expression?: string;
    MetricStat?: {
      Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] };
      Period: number;
      Stat: string;
    };
  }[];
}

const alarmsOf = (stack: TestStack): AlarmJson[] =>
  resourcesOfType(stack.resources, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties as AlarmJson);

/** The metrics an alarm reads: its one metric, or each metric of its math expression. */
function watched(alarm: AlarmJson): { namespace: string; name: string; dimensions: Record<string, unknown> }[] {
  const dims = (list: { Name: string; Value: unknown }[] | undefined): Record<string, unknown> =>
    Object.fromEntries((list ?? []).map(({ Name, Value }) => [Name, Value]));
  if (alarm.MetricName !== undefined)
    return [{ namespace: alarm.Namespace ?? '', name: alarm.MetricName, dimensions: dims(alarm.Dimensions) }];
  return (alarm.Metrics ?? []).flatMap((metric) =>
    metric.MetricStat === undefined
      ? []
      : [
          {
            namespace: metric.MetricStat.Metric.Namespace,
            name: metric.MetricStat.Metric.MetricName,
            dimensions: dims(metric.MetricStat.Metric.Dimensions),
          },
        ],
  );
}

const sameDimensions = (a: Record<string, unknown>, b: Record<string, unknown>): boolean =>
  JSON.stringify(Object.entries(a).sort(([x], [y]) => x.localeCompare(y))) ===
  JSON.stringify(Object.entries(b).sort(([x], [y]) => x.localeCompare(y)));

/** Every alarm reading the relay metric `name` (any dimensions) of an environment's namespace. */
function alarmsWatching(stack: TestStack, name: string, namespace = RELAY): AlarmJson[] {
  return alarmsOf(stack).filter((alarm) =>
    watched(alarm).some((metric) => metric.namespace === namespace && metric.name === name),
  );
}

/** Every .ts file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file));
}

/** The one alarm watching `name` in `namespace` with exactly these dimensions. */
function alarmWatching(
  stack: TestStack,
  namespace: string,
  name: string,
  dimensions?: Record<string, unknown>,
): AlarmJson {
  const found = alarmsOf(stack).filter((alarm) =>
    watched(alarm).some(
      (metric) =>
        metric.namespace === namespace &&
        metric.name === name &&
        (dimensions === undefined || sameDimensions(metric.dimensions, dimensions)),
    ),
  );
  expect(found, `alarms watching ${namespace} ${name} ${JSON.stringify(dimensions)}`).toHaveLength(1);
  return found[0]!;
}

const RELAY = metricsNamespace('prod');
const SERVICE = { service: METRICS.service };
const fnRef = (name: HandlerName): { Ref: string } => ({ Ref: prod.functionId(name) });
const AT_LEAST_ONE = {
  Threshold: 1,
  ComparisonOperator: 'GreaterThanOrEqualToThreshold',
  EvaluationPeriods: 1,
  TreatMissingData: 'notBreaching',
};
/** Throttles: in 2 of the last 3 periods, so one burst (retried anyway) does not notify. */
const TWO_OF_THREE = { ...AT_LEAST_ONE, EvaluationPeriods: 3, DatapointsToAlarm: 2 };
/** prod's `priority: critical` routes. */
const CRITICAL_ROUTES = ['oncall'];

describe('an alarm for every way a message is lost or stuck', () => {
  it.each([
    ['UNKNOWN', RelayMetric.UnknownNow, 'MessagesUnknown'],
    ['PARKED', RelayMetric.ParkedNow, 'MessagesParked'],
    ['FAILED', RelayMetric.FailedNow, 'MessagesFailed'],
    ['HELD', RelayMetric.HeldNow, 'MessagesHeld'],
    ['DEFERRED past its window', RelayMetric.DeferredOverdue, 'DigestsOverdue'],
    ['incidents past their last step, unacknowledged', RelayMetric.IncidentsUnacknowledged, 'IncidentsUnacknowledged'],
  ])(
    'records %s now (the gauge each sweep publishes): in alarm while any is, its state kept while the sweeper is silent',
    (_what, metric, name) => {
      expect(alarmWatching(prod, RELAY, metric, SERVICE)).toMatchObject({
        Statistic: 'Maximum',
        Period: 300,
        ...AT_LEAST_ONE,
        TreatMissingData: 'ignore',
        AlarmName: `SmsRelay-prod-${name}`,
      });
    },
  );

  it('the SMS service unreachable (sends paused by the outage circuit), in words that say so', () => {
    const unreachable = alarmWatching(prod, RELAY, RelayMetric.SmsServiceUnreachable, SERVICE);
    expect(unreachable).toMatchObject({
      Statistic: 'Maximum',
      Period: 300,
      ...AT_LEAST_ONE,
      TreatMissingData: 'ignore',
    });
    expect(unreachable.AlarmDescription).toContain('SMS service unreachable');
  });

  it.each([
    ['a route misconfigured (its secret missing: ingest answers 500)', RelayMetric.RouteMisconfigured],
    ['the sweeper unable to send due records', RelayMetric.SweepErrors],
    ['records this version cannot decode (after a rollback)', RelayMetric.UndecodableRecords],
  ])('%s: any in 5 minutes', (_what, metric) => {
    expect(alarmWatching(prod, RELAY, metric, SERVICE)).toMatchObject({
      Statistic: 'Sum',
      Period: 300,
      ...AT_LEAST_ONE,
    });
  });

  it.each(['oncall', 'orders', 'ci'])(
    'route %s dropping a webhook or message (a template that no longer fits, no recipient): any in 5 minutes',
    (route) => {
      const dropped = alarmWatching(prod, RELAY, RelayMetric.Dropped, { ...SERVICE, route });
      expect(dropped).toMatchObject({
        Statistic: 'Sum',
        Period: 300,
        ...AT_LEAST_ONE,
        AlarmName: `SmsRelay-prod-Dropped-${route}`,
      });
      expect(dropped.AlarmDescription).not.toMatch(/route is muted/);
    },
  );

  it('a planned mute fires nothing: Muted, its own count, is read by no alarm', () => {
    expect(alarmsWatching(prod, RelayMetric.Muted)).toEqual([]);
  });

  it('one alarm for messages held over a route limit: MessagesHeld (HELD now), not also the HeldBack event', () => {
    expect(alarmsWatching(prod, RelayMetric.HeldBack)).toEqual([]);
    expect(alarmsWatching(prod, RelayMetric.HeldNow).map((alarm) => alarm.AlarmName)).toEqual([
      'SmsRelay-prod-MessagesHeld',
    ]);
  });

  it.each(CRITICAL_ROUTES)(
    'critical route %s: a new UNKNOWN or FAILED message, any in a minute (one alarm reading both)',
    (route) => {
      const unknown = alarmWatching(prod, RELAY, RelayMetric.Unknown, { ...SERVICE, route });
      expect(alarmWatching(prod, RELAY, RelayMetric.Failed, { ...SERVICE, route })).toBe(unknown);
      expect(unknown).toMatchObject({ ...AT_LEAST_ONE, AlarmName: `SmsRelay-prod-UnknownOrFailed-${route}` });
      expect(unknown.Metrics?.find((metric) => metric.Expression !== undefined)?.Expression).toBe(
        'FILL(unknown, 0) + FILL(failed, 0)',
      );
      for (const metric of unknown.Metrics ?? [])
        if (metric.MetricStat !== undefined) expect(metric.MetricStat).toMatchObject({ Period: 60, Stat: 'Sum' });
    },
  );

  it('no UNKNOWN-or-FAILED or latency alarm on a route that is not critical', () => {
    for (const route of ['orders', 'ci']) {
      for (const metric of [RelayMetric.Unknown, RelayMetric.Failed, RelayMetric.DeliveryLatency])
        expect(
          alarmsWatching(prod, metric).filter((alarm) => watched(alarm).some((m) => m.dimensions['route'] === route)),
        ).toEqual([]);
    }
  });

  it.each(CRITICAL_ROUTES)(
    'critical route %s: DeliveryLatency p99 over 5 minutes above alarms.deliveryLatencyP99 (60 s)',
    (route) => {
      expect(alarmWatching(prod, RELAY, RelayMetric.DeliveryLatency, { ...SERVICE, route })).toMatchObject({
        AlarmName: `SmsRelay-prod-DeliveryLatency-${route}`,
        ExtendedStatistic: 'p99',
        Period: 300,
        Threshold: 60_000,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
      });
    },
  );

  it('DeliveryLatency: 60 s when alarms.deliveryLatencyP99 is absent, its value when set', () => {
    const text = (alarms: string) =>
      `provider: { baseUrl: "https://sms.example.co.tz" }\n${alarms}routes:\n  pager: { source: alertmanager, secret: t, recipients: ["+255712345678"], priority: critical }\n`;
    const threshold = (stack: TestStack) =>
      alarmWatching(stack, metricsNamespace('lat'), RelayMetric.DeliveryLatency, { ...SERVICE, route: 'pager' })
        .Threshold;
    expect(threshold(synthStack('lat', text(''), bundle.dir))).toBe(60_000);
    expect(threshold(synthStack('lat', text('alarms: { deliveryLatencyP99: 2m }\n'), bundle.dir))).toBe(120_000);
  });

  it('paging that did not go out: an escalation step not recorded or sent, any in a minute', () => {
    expect(alarmWatching(prod, RELAY, RelayMetric.EscalationErrors, SERVICE)).toMatchObject({
      AlarmName: 'SmsRelay-prod-EscalationErrors',
      Statistic: 'Sum',
      Period: 60,
      ...AT_LEAST_ONE,
    });
  });

  it('paging late: an open incident more than 2 minutes past its next step (the gauge each sweep publishes), in a minute', () => {
    expect(alarmWatching(prod, RELAY, RelayMetric.IncidentsOverdue, SERVICE)).toMatchObject({
      AlarmName: 'SmsRelay-prod-IncidentsOverdue',
      Statistic: 'Maximum',
      Period: 60,
      ...AT_LEAST_ONE,
      TreatMissingData: 'ignore',
    });
  });

  it('webhooks refused with 5xx by the HTTP API: any in 5 minutes', () => {
    const [apiId] = resourcesOfType(prod.resources, 'AWS::ApiGatewayV2::Api')[0] ?? [];
    expect(alarmWatching(prod, 'AWS/ApiGateway', '5xx', { ApiId: { Ref: apiId }, Stage: '$default' })).toMatchObject({
      Statistic: 'Sum',
      Period: 300,
      ...AT_LEAST_ONE,
    });
  });

  it.each(['oncall', 'orders', 'ci'])(
    'route %s refusing webhooks (4xx) twice in an hour: a rarely-called sender with a wrong secret trips it',
    (route) => {
      expect(alarmWatching(prod, RELAY, RelayMetric.Rejected, { ...SERVICE, route })).toMatchObject({
        Statistic: 'Sum',
        Period: 3_600,
        ...AT_LEAST_ONE,
        Threshold: 2,
      });
    },
  );

  it('the sender more than a minute behind its stream', () => {
    expect(alarmWatching(prod, 'AWS/Lambda', 'IteratorAge', { FunctionName: fnRef('sender') })).toMatchObject({
      Statistic: 'Maximum',
      Threshold: 60_000,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it("the oldest due PENDING record waiting more than 5 minutes (the sweeper's backlog metric)", () => {
    expect(alarmWatching(prod, RELAY, RelayMetric.OldestPendingAgeSeconds, SERVICE)).toMatchObject({
      Statistic: 'Maximum',
      Threshold: 300,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it.each(HANDLER_NAMES)('%s throttled by Lambda (2 of 3 periods), and failing (any)', (name) => {
    expect(alarmWatching(prod, 'AWS/Lambda', 'Throttles', { FunctionName: fnRef(name) })).toMatchObject({
      Statistic: 'Sum',
      ...TWO_OF_THREE,
    });
    expect(alarmWatching(prod, 'AWS/Lambda', 'Errors', { FunctionName: fnRef(name) })).toMatchObject({
      Statistic: 'Sum',
      ...AT_LEAST_ONE,
      AlarmName: `SmsRelay-prod-${pascalCase(name)}Errors`,
    });
  });

  it('DynamoDB throttling the table or any of its indexes, reads or writes', () => {
    const [tableId, table] = resourcesOfType(prod.resources, 'AWS::DynamoDB::Table')[0]!;
    const tableRef = { Ref: tableId };
    const reads = alarmWatching(prod, 'AWS/DynamoDB', 'ReadThrottleEvents', { TableName: tableRef });
    expect(alarmWatching(prod, 'AWS/DynamoDB', 'WriteThrottleEvents', { TableName: tableRef })).toBe(reads);
    const indexes = (table.Properties!['GlobalSecondaryIndexes'] as { IndexName: string }[]).map(
      (index) => index.IndexName,
    );
    expect(indexes.length).toBeGreaterThan(0);
    for (const index of indexes) {
      for (const metric of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
        expect(
          alarmWatching(prod, 'AWS/DynamoDB', metric, { TableName: tableRef, GlobalSecondaryIndexName: index }),
          `${index} ${metric}`,
        ).toBe(reads);
      }
    }
    expect(reads).toMatchObject(TWO_OF_THREE);
    const expression = reads.Metrics?.find((metric) => metric.Expression !== undefined)?.Expression ?? '';
    // Every series the alarm reads is added up, each gap as 0.
    const ids = (reads.Metrics ?? []).filter((metric) => metric.MetricStat !== undefined).map((metric) => metric.Id);
    expect(ids).toHaveLength(2 + 2 * indexes.length);
    expect(expression.split(' + ').sort()).toEqual(ids.map((id) => `FILL(${id}, 0)`).sort());
  });

  it("the API answering 429 to webhooks (not the acknowledge link's own limit), counted from its access logs into the environment namespace", () => {
    expect(alarmWatching(prod, RELAY, API_THROTTLED, {})).toMatchObject({ Statistic: 'Sum', ...TWO_OF_THREE });
    prod.template.hasResourceProperties('AWS::Logs::MetricFilter', {
      // `POST /hooks/{route}` and `ANY /hooks/{route}/{proxy+}` (an opsgenie route's API), not `/a/{token}`.
      FilterPattern:
        '{ ($.status = "429") && (($.routeKey = "POST /hooks/{route}") || ($.routeKey = "ANY /hooks/{route}/{proxy+}")) }',
      MetricTransformations: [{ MetricNamespace: RELAY, MetricName: API_THROTTLED, MetricValue: '1' }],
    });
  });

  it('the balance watch unable to read the balance on two runs (prod: hourly, so two in 2 hours)', () => {
    expect(
      alarmsWatching(prod, RelayMetric.BalanceReadFailed).find((alarm) => alarm.Statistic === 'Sum'),
    ).toMatchObject({
      Period: 7_200,
      Threshold: 2,
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(balanceReadWindow('rate(5 minutes)')).toMatchObject({ threshold: 2 });
    expect(balanceReadWindow('rate(5 minutes)').period.toSeconds()).toBe(600);
    expect(balanceReadWindow('rate(1 day)')).toMatchObject({ threshold: 1 });
    expect(balanceReadWindow('cron(0 6 * * ? *)').period.toSeconds()).toBe(86_400);
  });

  it('the balance below the threshold (kept)', () => {
    expect(alarmWatching(prod, RELAY, RelayMetric.RemainingBalance, SERVICE)).toMatchObject({
      Statistic: 'Minimum',
      Threshold: 5000,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'ignore',
    });
  });

  it.each([
    ['failure queue', 'RelayFailureQueue'],
    ['dead-letter queue', 'RelayDeadLetterQueue'],
  ])('the %s holding a message (kept)', (_what, queue) => {
    const alarms = alarmsOf(prod).filter((alarm) =>
      watched(alarm).some(
        (metric) =>
          metric.name === 'ApproximateNumberOfMessagesVisible' &&
          JSON.stringify(metric.dimensions).includes(`"${queue}`),
      ),
    );
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({ Namespace: 'AWS/SQS', Statistic: 'Maximum', ...AT_LEAST_ONE });
  });

  it('a page SNS could not deliver (an SMS refused, an HTTPS endpoint down): any in 5 minutes, as a ticket', () => {
    const outputs = (prod.template.toJSON() as { Outputs: Record<string, { Value: { Ref: string } }> }).Outputs;
    expect(
      alarmWatching(prod, 'AWS/SNS', 'NumberOfNotificationsFailed', {
        TopicName: { 'Fn::GetAtt': [outputs['PageTopicArn']!.Value.Ref, 'TopicName'] },
      }),
    ).toMatchObject({
      Statistic: 'Sum',
      Period: 300,
      ...AT_LEAST_ONE,
      AlarmActions: [outputs['TicketTopicArn']!.Value],
    });
  });

  it('nothing else: every alarm is one of the above', () => {
    // 6 stuck-now gauges (incidents unacknowledged included) + unreachable + 3 relay counts + 3 dropped + 5xx + 3 rejected + iterator age + backlog + 4×2 functions
    // + table + 429 + balance read + balance low + 2 queues + 2 watchers + 2 paging (overdue, escalation errors) + 2 per critical route + pages undelivered
    expect(alarmsOf(prod)).toHaveLength(
      6 + 1 + 3 + 3 + 1 + 3 + 1 + 1 + 8 + 1 + 1 + 1 + 1 + 2 + 2 + 2 + 2 * CRITICAL_ROUTES.length + 1,
    );
  });

  it('without a balance threshold there is no BalanceLow, but the unreadable-balance alarm stays', () => {
    const minimal = synthStack(
      'minimal',
      'provider: { baseUrl: "https://sms.example.co.tz" }\nroutes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"] }\n',
      bundle.dir,
    );
    const relay = metricsNamespace('minimal');
    expect(alarmsOf(minimal).filter((alarm) => alarm.MetricName === RelayMetric.RemainingBalance)).toEqual([]);
    expect(
      alarmsWatching(minimal, RelayMetric.BalanceReadFailed, relay).find((alarm) => alarm.Statistic === 'Sum'),
    ).toMatchObject({ Period: 7_200, Threshold: 2 });
  });
});

describe('the watchers: an alarm when the sweeper or the balance watch did not run (missing data breaching)', () => {
  it('the sweeper: no sweep (the Sweeps heartbeat is published by every one) in 3 of 3 one-minute periods, so within 3 minutes of the last', () => {
    expect(alarmWatching(prod, RELAY, RelayMetric.Sweeps, SERVICE)).toMatchObject({
      AlarmName: 'SmsRelay-prod-SweeperNotRunning',
      Statistic: 'SampleCount',
      Period: 60,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
  });

  it.each([
    ['rate(1 hour)', 7_200],
    ['rate(15 minutes)', 1_800],
    ['rate(1 day)', 86_400],
    ['cron(0 6 * * ? *)', 86_400],
  ])('the balance watch on %s: no run (BalanceReadFailed is published by every one) in %i s', (schedule, period) => {
    const text = `provider: { baseUrl: "https://sms.example.co.tz" }\nbalance: { threshold: 100, notify: ["+255712345678"], schedule: "${schedule}" }\nroutes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"] }\n`;
    const stack = synthStack('watch', text, bundle.dir);
    const silent = alarmsWatching(stack, RelayMetric.BalanceReadFailed, metricsNamespace('watch')).filter(
      (alarm) => alarm.Statistic === 'SampleCount',
    );
    expect(silent).toHaveLength(1);
    expect(silent[0]).toMatchObject({
      AlarmName: 'SmsRelay-watch-BalanceWatchNotRunning',
      Period: period,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
  });
});

describe('alarm texts', () => {
  it('name their environment, never an --env placeholder, and give the commands that help', () => {
    const alarms = alarmsOf(prod);
    for (const alarm of alarms) {
      expect(alarm.AlarmDescription, alarm.AlarmName).toMatch(/^sms-relay prod: /);
      expect(alarm.AlarmDescription, alarm.AlarmName).not.toContain('<env>');
      expect(alarm.AlarmDescription, alarm.AlarmName).not.toMatch(/<route>|<function>|<Function>|undefined/);
      // CloudWatch refuses a description longer than 1024 characters.
      expect(alarm.AlarmDescription!.length, alarm.AlarmName).toBeLessThanOrEqual(1024);
    }
    expect(alarmWatching(prod, RELAY, RelayMetric.UnknownNow, SERVICE).AlarmDescription).toContain(
      '`sms-relay redrive --env prod --state UNKNOWN --accept-duplicates`',
    );
    expect(alarmWatching(prod, RELAY, RelayMetric.ParkedNow, SERVICE).AlarmDescription).toContain(
      '`sms-relay redrive --env prod --state PARKED`',
    );
    expect(alarmWatching(prod, RELAY, RelayMetric.RouteMisconfigured, SERVICE).AlarmDescription).toContain(
      '--secret-id sms-relay/prod --secret-string file://',
    );
  });
});

describe('every metric the relay publishes has a tile and an alarm decision (METRIC_ALARMS)', () => {
  /** The metric names the relay's code publishes: each `RelayMetric.<name>` under functions/. */
  const published = (): Set<string> => {
    const names = new Set<string>();
    for (const file of sourceFiles('functions')) {
      for (const [, name] of readFileSync(file, 'utf8').matchAll(/\bRelayMetric\.(\w+)/g)) names.add(name!);
    }
    return names;
  };

  it('finds the metrics the handlers publish', () => {
    // The scan itself: these are published today, so an empty or broken scan fails here.
    for (const name of [RelayMetric.Sent, RelayMetric.Dropped, RelayMetric.Rejected, RelayMetric.PendingDue])
      expect(published()).toContain(name);
  });

  it('each is a RelayMetric with a dashboard tile, and its alarms exist as decided (or none reads it)', () => {
    const [, dashboard] = resourcesOfType(prod.resources, 'AWS::CloudWatch::Dashboard')[0] ?? [];
    const body = JSON.stringify((dashboard as CfnResourceJson).Properties?.['DashboardBody']);
    const names = new Set<string>([...published(), ...Object.values(RelayMetric)]);
    for (const name of names) {
      expect(Object.values(RelayMetric), `${name} is defined in functions/core/metrics.ts`).toContain(name);
      expect(body, `${name} has a dashboard tile`).toContain(`\\"${name}\\"`);
      const decision: MetricAlarmDecision | undefined = (METRIC_ALARMS as Record<string, MetricAlarmDecision>)[name];
      expect(decision, `${name} has an alarm decision in METRIC_ALARMS`).toBeDefined();
      const reading = alarmsWatching(prod, name).map((alarm) => alarm.AlarmName);
      if (decision !== undefined && 'alarms' in decision) {
        // prod has one provider: its service-wide alarms are its own, and no per-provider one exists.
        const expected = decision.alarms.flatMap((id) =>
          id.includes('<provider>')
            ? []
            : id.includes('<route>')
              ? ['oncall', 'orders', 'ci'].map((route) => id.replace('<route>', route))
              : id.includes('<critical route>')
                ? CRITICAL_ROUTES.map((route) => id.replace('<critical route>', route))
                : [id],
        );
        expect(reading.sort(), name).toEqual(expected.map((id) => `SmsRelay-prod-${id}`).sort());
      } else {
        expect(reading, `${name}: decided no alarm`).toEqual([]);
      }
    }
  });
});

describe('the dashboard', () => {
  it('charts every metric an alarm watches, and shows every alarm', () => {
    const [, dashboard] = resourcesOfType(prod.resources, 'AWS::CloudWatch::Dashboard')[0] ?? [];
    const body = JSON.stringify((dashboard as CfnResourceJson).Properties?.['DashboardBody']);
    for (const metric of new Set(alarmsOf(prod).flatMap((alarm) => watched(alarm).map((each) => each.name))))
      expect(body, metric).toContain(`\\"${metric}\\"`);
    for (const metric of Object.values(RelayMetric)) expect(body, metric).toContain(`\\"${metric}\\"`);
    for (const [id] of resourcesOfType(prod.resources, 'AWS::CloudWatch::Alarm'))
      expect(body).toContain(`"Fn::GetAtt":["${id}","Arn"]`);
    expect(body).toContain(`\\"${RELAY}\\"`);
  });
});

describe('two environments in one account and region', () => {
  let templates: Record<'prod' | 'staging', Record<string, CfnResourceJson>>;
  beforeAll(() => {
    // One app, as `cdk deploy -c env=prod` and `-c env=staging` put them side by side.
    const app = new App({ builtinCloudFormationValidation: false });
    const stacks = (['prod', 'staging'] as const).map((env) => {
      const text = configText(env);
      return [
        env,
        new SmsRelayStack(app, {
          environmentName: env,
          config: parseConfig(text, `${env}.yaml`),
          configText: text,
          bundleDir: bundle.dir,
        }),
      ] as const;
    });
    templates = Object.fromEntries(
      stacks.map(([env, stack]) => [
        env,
        (Template.fromStack(stack).toJSON() as { Resources: Record<string, CfnResourceJson> }).Resources,
      ]),
    ) as typeof templates;
  });

  /** Every metric series a stack's alarms read; a Ref names a resource of that stack only. */
  function series(env: 'prod' | 'staging'): Set<string> {
    const local = (value: unknown): unknown =>
      JSON.parse(
        JSON.stringify(value)
          .replace(/\{"Ref":"([^"]+)"\}/g, `"${env}:$1"`)
          .replace(/\{"Fn::GetAtt":\["([^"]+)","([^"]+)"\]\}/g, `"${env}:$1.$2"`),
      );
    const alarms = Object.values(templates[env])
      .filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm')
      .map((alarm) => alarm.Properties as AlarmJson);
    return new Set(
      alarms.flatMap((alarm) =>
        watched(alarm).map((metric) => JSON.stringify([metric.namespace, metric.name, local(metric.dimensions)])),
      ),
    );
  }

  it('publish to their own namespaces, which only their own alarms and dashboards read', () => {
    for (const [env, other] of [
      ['prod', 'staging'],
      ['staging', 'prod'],
    ] as const) {
      const functions = Object.values(templates[env]).filter((resource) => resource.Type === 'AWS::Lambda::Function');
      const namespaces = new Set(
        functions.map(
          (fn) =>
            (fn.Properties!['Environment'] as { Variables: Record<string, string> }).Variables[
              'POWERTOOLS_METRICS_NAMESPACE'
            ],
        ),
      );
      expect(namespaces).toEqual(new Set([metricsNamespace(env)]));
      const read = [...series(env)].map((each) => JSON.parse(each) as [string]).map(([namespace]) => namespace);
      expect(read).toContain(metricsNamespace(env));
      expect(read.filter((namespace) => namespace.startsWith(METRICS.namespace))).not.toContain(
        metricsNamespace(other),
      );
      const dashboard = JSON.stringify(
        Object.values(templates[env]).find((resource) => resource.Type === 'AWS::CloudWatch::Dashboard')?.Properties,
      );
      expect(dashboard).toContain(metricsNamespace(env));
      expect(dashboard).not.toContain(metricsNamespace(other));
    }
  });

  it('share no metric series, no alarm name, no dashboard and no secret', () => {
    const [prodSeries, stagingSeries] = [series('prod'), series('staging')];
    expect(prodSeries.size).toBeGreaterThan(10);
    expect([...prodSeries].filter((each) => stagingSeries.has(each))).toEqual([]);
    const named = (env: 'prod' | 'staging', type: string, key: string): unknown[] =>
      Object.values(templates[env])
        .filter((resource) => resource.Type === type)
        .map((resource) => resource.Properties?.[key]);
    for (const [type, key] of [
      ['AWS::CloudWatch::Alarm', 'AlarmName'],
      ['AWS::CloudWatch::Dashboard', 'DashboardName'],
      ['AWS::SecretsManager::Secret', 'Name'],
    ] as const) {
      const prodNames = named('prod', type, key);
      expect(prodNames.length).toBeGreaterThan(0);
      expect(named('staging', type, key).filter((name) => prodNames.includes(name))).toEqual([]);
    }
    expect(named('staging', 'AWS::SecretsManager::Secret', 'Name').sort()).toEqual([
      'sms-relay/staging',
      'sms-relay/staging/provider',
    ]);
  });
});

describe('two kinds of alarm: pages and tickets, each alarm into the topic of its kind', () => {
  /** The alarms that must reach someone now (issue's list); every other alarm is a ticket. */
  const PAGING = [
    'SweeperNotRunning',
    'IncidentsOverdue',
    'EscalationErrors',
    'SmsServiceUnreachable',
    'PendingBacklog',
    'WebhooksRefused5xx',
    'SenderIteratorAge',
    'BalanceLow',
    ...CRITICAL_ROUTES.map((route) => `UnknownOrFailed-${route}`),
  ];

  /** Each alarm's kind, read from the topic its actions name (the stack's PageTopicArn and TicketTopicArn outputs). */
  function severities(stack: TestStack): Map<string, string> {
    const outputs = (stack.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;
    const topics = new Map([
      [JSON.stringify(outputs['PageTopicArn']?.Value), 'page'],
      [JSON.stringify(outputs['TicketTopicArn']?.Value), 'ticket'],
    ]);
    expect(topics.size).toBe(2);
    return new Map(
      alarmsOf(stack).map((alarm) => {
        expect(alarm.AlarmActions, alarm.AlarmName).toHaveLength(1);
        expect(alarm.OKActions, alarm.AlarmName).toEqual(alarm.AlarmActions);
        return [
          alarm.AlarmName!.replace(/^SmsRelay-(prod|providers)-/, ''),
          topics.get(JSON.stringify(alarm.AlarmActions![0]))!,
        ];
      }),
    );
  }

  it('pages exactly the alarms that say the relay cannot page or a critical message is not going out', () => {
    const kinds = severities(prod);
    expect(
      [...kinds]
        .filter(([, kind]) => kind === 'page')
        .map(([name]) => name)
        .sort(),
    ).toEqual([...PAGING].sort());
    expect([...kinds.values()].filter((kind) => kind === 'ticket').length).toBe(kinds.size - PAGING.length);
    expect(kinds.get('MessagesFailed')).toBe('ticket');
    expect(kinds.get('DeliveryLatency-oncall')).toBe('ticket');
  });

  it("docs/deploying.md's alarm tables list every alarm once, with the severity the template gives it", () => {
    const documented = new Map<string, string>();
    for (const [, name, severity] of readFileSync(join('docs', 'deploying.md'), 'utf8').matchAll(
      /^\| `([^`]+)`[^|]*\| (\*\*page\*\*|ticket) \|/gm,
    )) {
      expect(documented.has(name!), `${name} documented once`).toBe(false);
      documented.set(name!, severity!.replaceAll('*', ''));
    }
    // A per-route or per-function alarm is documented once, by its pattern.
    const pattern = (name: string): string =>
      name
        .replace(/^(Dropped|Rejected|UnknownOrFailed|DeliveryLatency)-.+$/, '$1-<route>')
        .replace(new RegExp(`^(${HANDLER_NAMES.map(pascalCase).join('|')})(Errors|Throttles)$`), '<Function>$2')
        .replace(/^(ProviderCircuitOpen|ProviderBalanceUnreadable|ProviderBalanceLow)-.+$/, '$1-<provider>');
    // The per-provider alarms exist only with several providers: prod has one.
    const fromTemplate = new Map(
      [...severities(prod), ...severities(several)].map(([name, kind]) => [pattern(name), kind]),
    );
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(fromTemplate));
  });

  it('says, for SweeperNotRunning, that escalations, renotify and handoff SMS stop', () => {
    expect(alarmWatching(prod, RELAY, RelayMetric.Sweeps, SERVICE).AlarmDescription).toContain(
      'escalations, renotify and handoff SMS stop',
    );
  });
});

describe('each provider of several: its circuit, its balance unreadable, its balance low, by its provider dimension', () => {
  const RELAY_SEVERAL = metricsNamespace('providers');
  const of = (provider: string) => ({ ...SERVICE, [METRICS.providerDimension]: provider });
  const names = (stack: TestStack): string[] =>
    alarmsOf(stack)
      .map((alarm) => alarm.AlarmName!)
      .filter((name) => name.includes('-Provider'))
      .sort();

  it('one circuit alarm per provider, a ticket that names the provider and what the relay does meanwhile', () => {
    for (const provider of ['main', 'at', 'gateway']) {
      const alarm = alarmWatching(several, RELAY_SEVERAL, RelayMetric.SmsServiceUnreachable, of(provider));
      expect(alarm).toMatchObject({
        AlarmName: `SmsRelay-providers-ProviderCircuitOpen-${provider}`,
        Statistic: 'Maximum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'ignore',
      });
      expect(alarm.AlarmDescription).toContain(`The circuit of provider ${provider} is open`);
      expect(alarm.AlarmDescription).toContain('sms-relay providers --env providers');
    }
  });

  it('a balance-unreadable alarm for each provider whose API has a balance (not the http gateway)', () => {
    for (const provider of ['main', 'at']) {
      expect(alarmWatching(several, RELAY_SEVERAL, RelayMetric.BalanceReadFailed, of(provider))).toMatchObject({
        AlarmName: `SmsRelay-providers-ProviderBalanceUnreadable-${provider}`,
        Statistic: 'Sum',
        Threshold: 2,
      });
    }
    expect(names(several)).not.toContain('SmsRelay-providers-ProviderBalanceUnreadable-gateway');
  });

  it("a low-balance page at each provider's own threshold (the first provider's the top-level balance's), none service-wide", () => {
    expect(alarmWatching(several, RELAY_SEVERAL, RelayMetric.RemainingBalance, of('main'))).toMatchObject({
      AlarmName: 'SmsRelay-providers-ProviderBalanceLow-main',
      Threshold: 5000,
      ComparisonOperator: 'LessThanThreshold',
    });
    expect(alarmWatching(several, RELAY_SEVERAL, RelayMetric.RemainingBalance, of('at'))).toMatchObject({
      AlarmName: 'SmsRelay-providers-ProviderBalanceLow-at',
      Threshold: 300,
    });
    // Balances of several providers have no one minimum: BalanceLow is each provider's instead.
    expect(alarmsWatching(several, RelayMetric.RemainingBalance, RELAY_SEVERAL)).toHaveLength(2);
    expect(names(several)).toEqual([
      'SmsRelay-providers-ProviderBalanceLow-at',
      'SmsRelay-providers-ProviderBalanceLow-main',
      'SmsRelay-providers-ProviderBalanceUnreadable-at',
      'SmsRelay-providers-ProviderBalanceUnreadable-main',
      'SmsRelay-providers-ProviderCircuitOpen-at',
      'SmsRelay-providers-ProviderCircuitOpen-gateway',
      'SmsRelay-providers-ProviderCircuitOpen-main',
    ]);
  });

  it('none with one provider: its service-wide alarms are its own', () => {
    expect(names(prod)).toEqual([]);
  });
});
