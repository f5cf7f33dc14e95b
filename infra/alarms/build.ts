import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { AlarmSeverity } from '../../functions/core/config/alarms-schema';
import { HANDLER_NAMES, type HandlerName } from '../bundle';
import { pascalCase, relayStackName } from '../names';
import { ALARM_SECTIONS } from './sections';
import { AlarmEach, type AlarmContext, type AlarmRow, type Comparison, MissingData, type RunbookValues } from './table';

/** What the alarms of one environment are made for: its names, routes and settings. */
export interface AlarmTargets {
  readonly environmentName: string;
  readonly routes: readonly string[];
  readonly criticalRoutes: readonly string[];
  readonly secretNames: { readonly routes: string; readonly provider: string };
  readonly balanceSchedule: string;
  /** The providers' names, in the config's order. */
  readonly providers: readonly string[];
}

const COMPARISON = {
  '≥': cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
  '>': cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
  '<': cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
} as const satisfies Record<Comparison, cloudwatch.ComparisonOperator>;

const TREAT_MISSING_DATA = {
  [MissingData.KeepState]: cloudwatch.TreatMissingData.IGNORE,
  [MissingData.Ok]: cloudwatch.TreatMissingData.NOT_BREACHING,
  [MissingData.Breaching]: cloudwatch.TreatMissingData.BREACHING,
} as const satisfies Record<MissingData, cloudwatch.TreatMissingData>;

/** The metrics of a function the per-function rows read. */
export function functionMetrics(
  functions: Readonly<Record<HandlerName, lambda.IFunction>>,
): AlarmContext['functionMetrics'] {
  const period = Duration.minutes(5);
  return (name) => ({
    errors: functions[name].metricErrors({ statistic: 'Sum', period }),
    throttles: functions[name].metricThrottles({ statistic: 'Sum', period }),
  });
}

/** The subjects one row is repeated for: none (one alarm), each route, each critical route, each function. */
function subjectsOf(row: AlarmRow, targets: AlarmTargets): readonly string[] {
  switch (row.each ?? AlarmEach.Once) {
    case AlarmEach.Once:
      return [''];
    case AlarmEach.Route:
      return targets.routes;
    case AlarmEach.CriticalRoute:
      return targets.criticalRoutes;
    case AlarmEach.Function:
      return HANDLER_NAMES;
    case AlarmEach.Provider:
      return targets.providers.length > 1 ? targets.providers : [];
  }
}

/** Capitalised, with its full stop: a runbook fragment as the sentence an alarm's text reads. */
const sentence = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;

/**
 * Every alarm of the table, each notifying the topic of its severity when it fires and when it
 * recovers (so a mailbox shows when a problem ended). Its text names the environment and the
 * commands that help, filled in from the same words docs/deploying.md shows.
 */
export function relayAlarms(
  scope: Construct,
  targets: AlarmTargets,
  context: AlarmContext,
  topics: Readonly<Record<AlarmSeverity, sns.ITopic>>,
): cloudwatch.Alarm[] {
  const env = targets.environmentName;
  const window = context.balanceWindow;
  const environmentValues: Omit<RunbookValues, 'route' | 'fn' | 'fnId' | 'provider'> = {
    env,
    routesSecret: targets.secretNames.routes,
    providerSecret: targets.secretNames.provider,
    balanceThreshold: String(context.balanceThreshold ?? ''),
    latencyP99: `${context.latencyP99Seconds} s`,
    balanceWindow: `${window.period.toHumanString()} (two runs of balance.schedule ${targets.balanceSchedule})`,
    balanceFailures: window.threshold === 1 ? 'on its last run' : 'on two runs',
  };
  const alarms: cloudwatch.Alarm[] = [];
  for (const row of ALARM_SECTIONS.flatMap((section) => section.rows)) {
    for (const subject of subjectsOf(row, targets)) {
      if (row.exists !== undefined && !row.exists(context, subject)) continue;
      const values = {
        ...environmentValues,
        route: subject,
        fn: subject,
        fnId: pascalCase(subject),
        provider: subject,
      };
      const alarmId = row.name
        .replace('<route>', subject)
        .replace('<Function>', values.fnId)
        .replace('<provider>', subject);
      const { threshold } = row;
      const created = new cloudwatch.Alarm(scope, alarmId, {
        alarmName: `${relayStackName(env)}-${alarmId}`,
        alarmDescription: `sms-relay ${env}: ${sentence(row.means(values))} First response: ${row.firstResponse(values)} (docs/deploying.md, Alarms).`,
        metric: row.metric(context, subject),
        threshold: typeof threshold.value === 'number' ? threshold.value : threshold.value(context, subject),
        comparisonOperator: COMPARISON[threshold.comparison],
        evaluationPeriods: threshold.periods?.of ?? 1,
        ...(threshold.periods === undefined ? {} : { datapointsToAlarm: threshold.periods.breaching }),
        treatMissingData: TREAT_MISSING_DATA[row.missingData],
      });
      created.addAlarmAction(new actions.SnsAction(topics[row.severity]));
      created.addOkAction(new actions.SnsAction(topics[row.severity]));
      alarms.push(created);
    }
  }
  return alarms;
}
