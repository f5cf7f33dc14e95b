/**
 * `awsCostPer1000Sms`: what AWS charges for 1,000 SMS of one webhook each, from published prices
 * (us-east-1; sources in BENCHMARKS.md) and the quantities measured by the bench: one API Gateway
 * HTTP API request and one ingest invocation per webhook, one sender invocation per SMS (a stream
 * batch of one, the low-traffic case), the measured median durations billed per started ms at the
 * stack's memory sizes, the sender's wait for the SMS service's answer (which the loopback sandbox
 * does not make), the DynamoDB units of `dynamoPerSms` (table units as reported, plus the
 * estimated index writes dynalite does not report), and the CloudWatch Logs each SMS writes. What
 * does not grow with the SMS (alarms, dashboard, custom metrics, secrets, the sweeper's minute) is
 * {@link fixedMonthlyCost}. The SMS credit itself is not an AWS cost; it is the denominator of
 * `shareOfSmsSpend`.
 */
import { PROVIDER_RATE } from '../functions/core/provider-rate';
import { round } from './stats';

export const PRICES = {
  /** Lambda on Arm (the stack's architecture), first 7.5 billion GB-s a month. */
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  /** HTTP API, first 300 million requests a month. */
  httpApiPerMillionRequests: 1.0,
  /** On-demand, Standard table class. */
  dynamoPerMillionWriteUnits: 0.625,
  dynamoPerMillionReadUnits: 0.125,
  /** CloudWatch Logs, Standard log class: ingestion. */
  logsPerGbIngested: 0.5,
  /** CloudWatch: a standard-resolution alarm, per metric it reads, a month. */
  alarmMetricPerMonth: 0.1,
  /** CloudWatch: a dashboard a month (an account's first three of up to 50 metrics are free). */
  dashboardPerMonth: 3,
  /** CloudWatch: a custom metric a month, first 10,000 (prorated by the hours it is published). */
  customMetricPerMonth: 0.3,
  /** Secrets Manager: a secret a month. */
  secretPerMonth: 0.4,
} as const;

/**
 * CloudWatch Logs bytes per plain SMS: what ingest and the sender write (their JSON lines and the
 * metrics' embedded-format lines), measured from the deployed bundles by
 * test/integration/aws-log-bytes.test.ts (`npm run test:aws`, 2026-12-04: 1,391 and 1,830); Lambda's
 * START, END and REPORT lines (about 300 bytes an invocation, two invocations); API Gateway's access
 * log line (the stack's format, about 330 bytes).
 */
export const LOG_BYTES_PER_SMS = { ingest: 1_391, sender: 1_830, lambdaPlatform: 600, accessLog: 330 } as const;

/**
 * What the sender waits for the SMS service's answer on every send, billed as its duration: the
 * slow end of a healthy service (`PROVIDER_RATE.assumedSendSeconds`, the figure the concurrency
 * arithmetic uses too); the loopback sandbox of the bench answers at once.
 */
export const SERVICE_ANSWER_MS = PROVIDER_RATE.assumedSendSeconds * 1000;

/**
 * What prod's template (`cdk synth -c env=prod`) holds that CloudWatch bills by the month; kept
 * equal to the template by test/infra/stack.test.ts.
 */
export const PROD_CLOUDWATCH = { alarms: 40, alarmMetrics: 48, dashboards: 1, secrets: 2 } as const;

/** The sandbox's price of one SMS to one recipient, and the exchange rate assumed (see BENCHMARKS.md). */
export const SMS_PRICE_TZS = 20;
export const TZS_PER_USD = 2_500;

export interface CostInputs {
  readonly ingestMs: number;
  readonly senderMs: number;
  readonly memoryMb: { readonly ingest: number; readonly sender: number };
  /** Per SMS. */
  readonly writeUnits: number;
  readonly readUnits: number;
  /** The sender's wait for the service's answer, per SMS. @default SERVICE_ANSWER_MS */
  readonly serviceAnswerMs?: number;
  /** Log bytes per SMS. @default LOG_BYTES_PER_SMS */
  readonly logBytes?: Readonly<Record<string, number>>;
}

export interface CostLine {
  readonly item: string;
  readonly quantity: string;
  readonly usd: number;
}

const SMS = 1_000;

/** The cost of 1,000 SMS, line by line. */
export function costPer1000Sms({
  ingestMs,
  senderMs,
  memoryMb,
  writeUnits,
  readUnits,
  serviceAnswerMs = SERVICE_ANSWER_MS,
  logBytes = LOG_BYTES_PER_SMS,
}: CostInputs): {
  readonly lines: readonly CostLine[];
  readonly usd: number;
  readonly shareOfSmsSpend: number;
} {
  const gbSeconds = (ms: number, mb: number): number => SMS * (Math.max(1, Math.ceil(ms)) / 1000) * (mb / 1024);
  const ingestGbs = gbSeconds(ingestMs, memoryMb.ingest);
  const senderGbs = gbSeconds(senderMs, memoryMb.sender);
  // Billed per started ms of the whole invocation: the wait is added before rounding up.
  const waitGbs = gbSeconds(senderMs + serviceAnswerMs, memoryMb.sender) - senderGbs;
  const bytesPerSms = Object.values(logBytes).reduce((sum, bytes) => sum + bytes, 0);
  const logGb = (SMS * bytesPerSms) / 1024 ** 3;
  const lines: CostLine[] = [
    { item: 'API Gateway HTTP API requests', quantity: `${SMS}`, usd: (SMS / 1e6) * PRICES.httpApiPerMillionRequests },
    {
      item: 'Lambda requests (ingest + sender)',
      quantity: `${2 * SMS}`,
      usd: ((2 * SMS) / 1e6) * PRICES.lambdaPerMillionRequests,
    },
    {
      item: `Lambda duration, ingest (${Math.ceil(ingestMs)} ms × ${memoryMb.ingest} MB)`,
      quantity: `${round(ingestGbs, 2)} GB-s`,
      usd: ingestGbs * PRICES.lambdaArmPerGbSecond,
    },
    {
      item: `Lambda duration, sender (${Math.ceil(senderMs)} ms × ${memoryMb.sender} MB)`,
      quantity: `${round(senderGbs, 2)} GB-s`,
      usd: senderGbs * PRICES.lambdaArmPerGbSecond,
    },
    {
      item: `Lambda duration, sender waiting for the SMS service (${serviceAnswerMs} ms × ${memoryMb.sender} MB)`,
      quantity: `${round(waitGbs, 2)} GB-s`,
      usd: waitGbs * PRICES.lambdaArmPerGbSecond,
    },
    {
      item: 'DynamoDB write request units',
      quantity: `${round(SMS * writeUnits)}`,
      usd: ((SMS * writeUnits) / 1e6) * PRICES.dynamoPerMillionWriteUnits,
    },
    {
      item: 'DynamoDB read request units',
      quantity: `${round(SMS * readUnits)}`,
      usd: ((SMS * readUnits) / 1e6) * PRICES.dynamoPerMillionReadUnits,
    },
    {
      item: `CloudWatch Logs ingestion (${bytesPerSms.toLocaleString('en-US')} bytes per SMS)`,
      quantity: `${round((SMS * bytesPerSms) / 1e6, 2)} MB`,
      usd: logGb * PRICES.logsPerGbIngested,
    },
  ];
  const usd = lines.reduce((sum, line) => sum + line.usd, 0);
  return { lines, usd, shareOfSmsSpend: usd / ((SMS * SMS_PRICE_TZS) / TZS_PER_USD) };
}

/**
 * prod's fixed inputs: its template's alarms, dashboard and secrets ({@link PROD_CLOUDWATCH}); the
 * 12 gauges each sweep publishes and the balance watch's 2 (`functions/relay/gauges.ts`, sweeper.ts,
 * balance.ts); the 5 metrics every SMS publishes (Accepted, Sent, DeliveryLatency, CreditsSpent,
 * Segments) service-wide and for each of prod's 3 routes; a quiet sweeper run assumed at 500 ms
 * (about 15 requests of a few ms each), 8 read units (5 gauge counts, the due, stale, digest,
 * incident and held listings, the circuit) and 1,500 log bytes (its metrics line and Lambda's).
 */
export const PROD_FIXED: FixedInputs = {
  alarmMetrics: PROD_CLOUDWATCH.alarmMetrics,
  dashboards: PROD_CLOUDWATCH.dashboards,
  secrets: PROD_CLOUDWATCH.secrets,
  alwaysPublishedMetrics: 14,
  trafficMetrics: 5 * (1 + 3),
  sweeperRunMs: 500,
  sweeperMemoryMb: 256,
  sweeperReadUnits: 8,
  sweeperLogBytes: 1_500,
};

/** What {@link fixedMonthlyCost} is told: prod's CloudWatch resources and the metrics it publishes. */
export interface FixedInputs {
  readonly alarmMetrics: number;
  readonly dashboards: number;
  readonly secrets: number;
  /** Custom metrics published every hour whatever the traffic (the sweeper's gauges, the balance watch's). */
  readonly alwaysPublishedMetrics: number;
  /** Custom metrics published only in hours with traffic (per route and service-wide); their bill is prorated by those hours. */
  readonly trafficMetrics: number;
  /** The sweeper's run, every minute. */
  readonly sweeperRunMs: number;
  readonly sweeperMemoryMb: number;
  /** DynamoDB read units of one sweeper run, and its log bytes. */
  readonly sweeperReadUnits: number;
  readonly sweeperLogBytes: number;
}

const MINUTES_A_MONTH = 30 * 24 * 60;

/**
 * What AWS charges a month whatever the SMS: alarms, dashboard, custom metrics, secrets and the
 * sweeper's run a minute; the range is the custom metrics that bill only in hours with traffic
 * (none to all of them every hour).
 */
export function fixedMonthlyCost(inputs: FixedInputs): {
  readonly lines: readonly CostLine[];
  readonly usd: { readonly low: number; readonly high: number };
} {
  const sweeperGbs = MINUTES_A_MONTH * (inputs.sweeperRunMs / 1000) * (inputs.sweeperMemoryMb / 1024);
  const lines: CostLine[] = [
    {
      item: 'CloudWatch alarms (standard resolution, per metric read)',
      quantity: `${inputs.alarmMetrics}`,
      usd: inputs.alarmMetrics * PRICES.alarmMetricPerMonth,
    },
    {
      item: "CloudWatch dashboard (free if among the account's first three)",
      quantity: `${inputs.dashboards}`,
      usd: inputs.dashboards * PRICES.dashboardPerMonth,
    },
    {
      item: 'Custom metrics published every hour (gauges, balance)',
      quantity: `${inputs.alwaysPublishedMetrics}`,
      usd: inputs.alwaysPublishedMetrics * PRICES.customMetricPerMonth,
    },
    {
      item: 'Custom metrics of traffic, if published every hour (prorated by the hours they are)',
      quantity: `up to ${inputs.trafficMetrics}`,
      usd: inputs.trafficMetrics * PRICES.customMetricPerMonth,
    },
    { item: 'Secrets Manager secrets', quantity: `${inputs.secrets}`, usd: inputs.secrets * PRICES.secretPerMonth },
    {
      item: `Sweeper: a run a minute (${inputs.sweeperRunMs} ms × ${inputs.sweeperMemoryMb} MB, ${inputs.sweeperReadUnits} RRU, ${inputs.sweeperLogBytes} log bytes)`,
      quantity: `${MINUTES_A_MONTH} runs`,
      usd:
        sweeperGbs * PRICES.lambdaArmPerGbSecond +
        (MINUTES_A_MONTH / 1e6) * PRICES.lambdaPerMillionRequests +
        ((MINUTES_A_MONTH * inputs.sweeperReadUnits) / 1e6) * PRICES.dynamoPerMillionReadUnits +
        ((MINUTES_A_MONTH * inputs.sweeperLogBytes) / 1024 ** 3) * PRICES.logsPerGbIngested,
    },
  ];
  const high = lines.reduce((sum, line) => sum + line.usd, 0);
  const traffic = inputs.trafficMetrics * PRICES.customMetricPerMonth;
  const dashboards = inputs.dashboards * PRICES.dashboardPerMonth;
  return { lines, usd: { low: high - traffic - dashboards, high } };
}
