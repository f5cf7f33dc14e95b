import type { Duration } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { RelayMetric } from '../../functions/core/metrics';
import type { AlarmSeverity } from '../../functions/core/config/alarms-schema';
import type { HandlerName } from '../bundle';

/**
 * How an alarm treats a period without data. `keep state` for the gauges each sweep publishes (an
 * e-mailed OK must not claim stuck records were handled while nobody counted them), `OK` for counts
 * of events (a quiet relay is fine), `breaching` for the watchers (silence is what they watch).
 */
export const MissingData = {
  KeepState: 'keep state',
  Ok: 'OK',
  Breaching: 'breaching',
} as const;
export type MissingData = (typeof MissingData)[keyof typeof MissingData];

/** What the texts of one alarm are filled in with: an environment's values, or the docs' placeholders. */
export interface RunbookValues {
  readonly env: string;
  /** The route of a per-route alarm. */
  readonly route: string;
  /** The provider of a per-provider alarm, as named in the config (`at`). */
  readonly provider: string;
  /** The handler of a per-function alarm, as named in the config (`balance-watch`). */
  readonly fn: string;
  /** The same handler as named in its alarm and log group (`BalanceWatch`). */
  readonly fnId: string;
  readonly routesSecret: string;
  readonly providerSecret: string;
  readonly balanceThreshold: string;
  readonly latencyP99: string;
  /** How long two balance-watch runs take (the unreadable-balance and not-running window). */
  readonly balanceWindow: string;
  /** How many failed balance reads fire `BalanceUnreadable`, in words. */
  readonly balanceFailures: string;
}

/** A text written once, filled in for an alarm's description and for docs/deploying.md alike. */
export type RunbookText = (values: RunbookValues) => string;

/** What the metric builders of the table are given by the construct. */
export interface AlarmContext {
  /** One of the relay's own metrics, in the environment's namespace (a route adds its dimension). */
  readonly relay: (name: RelayMetric, statistic: string, period?: Duration, route?: string) => cloudwatch.IMetric;
  /** One of the relay's own metrics of one provider (its `provider` dimension). */
  readonly providerMetric: (
    name: RelayMetric,
    statistic: string,
    period: Duration,
    provider: string,
  ) => cloudwatch.IMetric;
  /** The config's providers, in its order; the per-provider alarms exist when there are several. */
  readonly providers: readonly ProviderAlarmTarget[];
  /** The metrics of one function. */
  readonly functionMetrics: (name: HandlerName) => FunctionMetrics;
  readonly failureQueueVisible: cloudwatch.IMetric;
  readonly deadLetterQueueVisible: cloudwatch.IMetric;
  readonly pagesUndelivered: cloudwatch.IMetric;
  readonly serverErrors: cloudwatch.IMetric;
  readonly apiThrottled: cloudwatch.IMetric;
  readonly tableThrottles: cloudwatch.IMetric;
  readonly senderIteratorAge: cloudwatch.IMetric;
  readonly balanceWindow: { readonly period: Duration; readonly threshold: number };
  readonly balanceThreshold?: number;
  readonly latencyP99Seconds: number;
}

/** What the per-provider alarms need of one provider. */
export interface ProviderAlarmTarget {
  readonly name: string;
  /** Whether its API has a balance to read (the `http` type has none). */
  readonly readsBalance: boolean;
  /** Its `balance.threshold` (the first provider's is the top-level `balance:`); absent: no low-balance alarm. */
  readonly balanceThreshold?: number;
}

/** The metrics of one function the per-function alarms read. */
export interface FunctionMetrics {
  readonly errors: cloudwatch.IMetric;
  readonly throttles: cloudwatch.IMetric;
}

/** `≥` fires at the threshold, `>` above it, `<` below it. */
export type Comparison = '≥' | '>' | '<';

/** When an alarm fires: a comparison, a threshold (fixed, or an environment's) and how many periods. */
export interface AlarmThreshold {
  readonly comparison: Comparison;
  /** A fixed threshold, or one read from the environment's settings (and the row's subject: a provider's own). */
  readonly value: number | ((context: AlarmContext, subject: string) => number);
  /** The threshold in docs/deploying.md, where it is not a fixed number. */
  readonly doc?: string;
  readonly unit?: 'ms' | 's';
  /**
   * Periods evaluated, and how many of them must breach.
   * @default one of one
   */
  readonly periods?: { readonly of: number; readonly breaching: number };
}

/** Which alarms one row stands for: one, one per route, per critical route or per function. */
export const AlarmEach = {
  Once: 'once',
  Route: 'route',
  CriticalRoute: 'critical route',
  Function: 'function',
  /** Each provider, when the config has more than one (with one, the service-wide alarms are its own). */
  Provider: 'provider',
} as const;
export type AlarmEach = (typeof AlarmEach)[keyof typeof AlarmEach];

/**
 * One row of the alarm table: the alarm in the template and the line of docs/deploying.md, from
 * the same fields. `name` is the id after `SmsRelay-<env>-`, `<route>`, `<Function>` or
 * `<provider>` standing for each route, function or provider the row is repeated for.
 */
export interface AlarmRow {
  readonly name: string;
  readonly each?: AlarmEach;
  /** Said beside the name in the docs (when the alarm exists, how many). */
  readonly nameNote?: string;
  /**
   * Whether the environment has this alarm at all (for a repeated row: for this subject).
   * @default always
   */
  readonly exists?: (context: AlarmContext, subject: string) => boolean;
  readonly severity: AlarmSeverity;
  /** The metric column of the docs: the metric, its statistic and period. */
  readonly metricDoc: string;
  readonly metric: (context: AlarmContext, subject: string) => cloudwatch.IMetric;
  readonly threshold: AlarmThreshold;
  readonly missingData: MissingData;
  /** What the alarm means, a sentence without its full stop. */
  readonly means: RunbookText;
  /** What to do first, a sentence without its full stop. */
  readonly firstResponse: RunbookText;
}

/** A group of alarms, a heading and a table in docs/deploying.md. */
export interface AlarmSection {
  readonly heading: string;
  /** Said after the heading: what the alarms of the group have in common. */
  readonly about?: string;
  readonly rows: readonly AlarmRow[];
}
