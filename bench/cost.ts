/**
 * `costPerMillionUsd`: what one million webhooks of the fixed mix cost on AWS (us-east-1,
 * excluding SMS credit), from published prices and quantities measured here:
 *
 * - Lambda duration: the median per-invocation wall time of the ingest and sender handlers, run
 *   in process with a warm context against dynalite and the sandbox, rounded up to 1 ms as Lambda
 *   bills, times the configured memory (`DEFAULT_MEMORY_MB` of the CDK construct);
 * - Lambda requests: one ingest invocation per webhook, one sender invocation per PENDING record
 *   (batch of one: the low-traffic case, the most invocations);
 * - API Gateway HTTP API: one request per webhook (bodies are far below the 512 KB metering unit);
 * - DynamoDB on-demand: write and read request units counted by `dynamo-meter.ts` from the
 *   commands the handlers actually issued, index writes included;
 * - CloudWatch Logs ingestion: the bytes the handlers wrote (Powertools JSON lines and EMF metric
 *   lines), plus Lambda's START/END/REPORT lines per invocation and API Gateway's access log line
 *   per request.
 *
 * DynamoDB Streams reads by a Lambda trigger and EventBridge scheduled rules cost nothing; the
 * fixed monthly items (sweeper and balance-watch schedules, Secrets Manager, custom metrics,
 * storage) do not scale with webhooks and are listed, not added.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { HandlerName } from '../infra/bundle';
import { startDynamoMeter, type OperationRecord } from './dynamo-meter';
import { createTable, localDynamoClient, progress, relayEnv, REPO_ROOT, useRelayEnv, type Services, type Workspace } from './harness';
import { readMemoryDefaults } from './memory';
import { runMix, type InvocationSample } from './provider-calls';
import { mean, median, round } from './stats';

/**
 * Published us-east-1 prices (sources and dates in BENCHMARKS.md, "Prices").
 */
export const PRICES = {
  /** Lambda, Arm, first 7.5 billion GB-seconds a month, per GB-second. */
  lambdaArmGbSecond: 0.0000133334,
  /** Lambda requests, per million. */
  lambdaRequestsPerMillion: 0.2,
  /** API Gateway HTTP API, first 300 million requests a month, per million. */
  httpApiRequestsPerMillion: 1.0,
  /** DynamoDB on-demand (Standard table class), per million write request units. */
  dynamoWriteRequestUnitsPerMillion: 0.625,
  /** DynamoDB on-demand (Standard table class), per million read request units. */
  dynamoReadRequestUnitsPerMillion: 0.125,
  /** DynamoDB Streams read requests made by a Lambda trigger: free. */
  dynamoStreamsReadsByLambda: 0,
  /** CloudWatch Logs, Standard class, data ingestion, per GB. */
  cloudWatchLogsIngestionPerGb: 0.5,
  /** EventBridge scheduled rules on the default bus: free. */
  eventBridgeScheduledRules: 0,
} as const;
export type Prices = typeof PRICES;

/** Bytes in the GB that AWS bills CloudWatch Logs by (2^30). */
export const GB = 1024 ** 3;

/** Quantities per webhook that the model prices. */
export interface CostInputs {
  readonly memoryMb: { readonly ingest: number; readonly sender: number };
  readonly ingestInvocationsPerWebhook: number;
  readonly senderInvocationsPerWebhook: number;
  /** Median measured duration, ms (rounded up to whole ms by the model, as Lambda bills). */
  readonly ingestMs: number;
  readonly senderMs: number;
  readonly apiRequestsPerWebhook: number;
  /** Write request units per webhook, table and index writes together. */
  readonly writeUnitsPerWebhook: number;
  readonly readUnitsPerWebhook: number;
  readonly logBytesPerWebhook: number;
}

export interface CostLine {
  readonly item: string;
  /** Quantity for one million webhooks, in `unit`. */
  readonly quantity: number;
  readonly unit: string;
  readonly unitPrice: number;
  readonly priceUnit: string;
  readonly usd: number;
}

export interface CostModel {
  readonly lines: readonly CostLine[];
  readonly totalUsd: number;
}

const MILLION = 1_000_000;

/** Lambda's billed duration: rounded up to the next whole millisecond (at least 1). */
export function billedMs(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/** GB-seconds of `invocations` invocations of `ms` each (billed) at `memoryMb`. */
export function gbSeconds(invocations: number, ms: number, memoryMb: number): number {
  return invocations * (billedMs(ms) / 1000) * (memoryMb / 1024);
}

/**
 * Prices one million webhooks.
 *
 * @example
 * ```ts
 * costModel({ memoryMb: { ingest: 256, sender: 256 }, ingestInvocationsPerWebhook: 1, senderInvocationsPerWebhook: 1, ingestMs: 20, senderMs: 30,
 *   apiRequestsPerWebhook: 1, writeUnitsPerWebhook: 10, readUnitsPerWebhook: 0, logBytesPerWebhook: 2000 }).totalUsd;
 * ```
 */
export function costModel(inputs: CostInputs, prices: Prices = PRICES): CostModel {
  const webhooks = MILLION;
  const ingestGbs = gbSeconds(webhooks * inputs.ingestInvocationsPerWebhook, inputs.ingestMs, inputs.memoryMb.ingest);
  const senderGbs = gbSeconds(webhooks * inputs.senderInvocationsPerWebhook, inputs.senderMs, inputs.memoryMb.sender);
  const invocations = webhooks * (inputs.ingestInvocationsPerWebhook + inputs.senderInvocationsPerWebhook);
  const logGb = (webhooks * inputs.logBytesPerWebhook) / GB;
  const lines: CostLine[] = [
    { item: 'Lambda duration, ingest', quantity: ingestGbs, unit: 'GB-s', unitPrice: prices.lambdaArmGbSecond, priceUnit: 'per GB-s', usd: ingestGbs * prices.lambdaArmGbSecond },
    { item: 'Lambda duration, sender', quantity: senderGbs, unit: 'GB-s', unitPrice: prices.lambdaArmGbSecond, priceUnit: 'per GB-s', usd: senderGbs * prices.lambdaArmGbSecond },
    { item: 'Lambda requests', quantity: invocations, unit: 'requests', unitPrice: prices.lambdaRequestsPerMillion, priceUnit: 'per million', usd: (invocations / MILLION) * prices.lambdaRequestsPerMillion },
    { item: 'API Gateway HTTP API', quantity: webhooks * inputs.apiRequestsPerWebhook, unit: 'requests', unitPrice: prices.httpApiRequestsPerMillion, priceUnit: 'per million', usd: inputs.apiRequestsPerWebhook * prices.httpApiRequestsPerMillion },
    { item: 'DynamoDB writes (table + indexes)', quantity: webhooks * inputs.writeUnitsPerWebhook, unit: 'WRU', unitPrice: prices.dynamoWriteRequestUnitsPerMillion, priceUnit: 'per million', usd: inputs.writeUnitsPerWebhook * prices.dynamoWriteRequestUnitsPerMillion },
    { item: 'DynamoDB reads', quantity: webhooks * inputs.readUnitsPerWebhook, unit: 'RRU', unitPrice: prices.dynamoReadRequestUnitsPerMillion, priceUnit: 'per million', usd: inputs.readUnitsPerWebhook * prices.dynamoReadRequestUnitsPerMillion },
    { item: 'DynamoDB Streams reads (Lambda trigger)', quantity: 0, unit: 'read requests', unitPrice: prices.dynamoStreamsReadsByLambda, priceUnit: 'free', usd: 0 },
    { item: 'CloudWatch Logs ingestion', quantity: logGb, unit: 'GB', unitPrice: prices.cloudWatchLogsIngestionPerGb, priceUnit: 'per GB', usd: logGb * prices.cloudWatchLogsIngestionPerGb },
    { item: 'EventBridge scheduled rules', quantity: 0, unit: 'events', unitPrice: prices.eventBridgeScheduledRules, priceUnit: 'free', usd: 0 },
  ];
  return { lines, totalUsd: lines.reduce((sum, line) => sum + line.usd, 0) };
}

/** Bytes of Lambda's own START, END and REPORT lines for one invocation (text log format). */
export function platformLogBytes(memoryMb: number, durationMs: number): number {
  const id = randomUUID();
  const lines = [
    `START RequestId: ${id} Version: $LATEST\n`,
    `END RequestId: ${id}\n`,
    `REPORT RequestId: ${id}\tDuration: ${durationMs.toFixed(2)} ms\tBilled Duration: ${billedMs(durationMs)} ms\tMemory Size: ${memoryMb} MB\tMax Memory Used: ${Math.round(memoryMb * 0.45)} MB\t\n`,
  ];
  return lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
}

/** Typical values of the access log's `$context` variables, by key. */
const ACCESS_LOG_VALUES: Readonly<Record<string, string>> = {
  requestId: 'cT2xQjTKoAMEbQw=',
  time: '22/Nov/2026:03:04:05 +0000',
  ip: '203.0.113.10',
  userAgent: 'Alertmanager/0.27.0',
  method: 'POST',
  path: '/hooks/alerts',
  routeKey: 'POST /hooks/{route}',
  status: '202',
  responseLength: '64',
  latencyMs: '41',
  integrationStatus: '200',
  integrationLatencyMs: '38',
  integrationError: '-',
};

/**
 * Bytes of one API Gateway access log line in the stack's format (`ACCESS_LOG_FORMAT` of
 * `infra/sms-relay.ts`, read from its source), filled with typical values.
 */
export function accessLogLineBytes(source: string = readFileSync(join(REPO_ROOT, 'infra', 'sms-relay.ts'), 'utf8')): number {
  const block = /const ACCESS_LOG_FORMAT = [\s\S]*?JSON\.stringify\(\{([\s\S]*?)\}\)/.exec(source)?.[1];
  if (block === undefined) throw new Error('ACCESS_LOG_FORMAT not found in infra/sms-relay.ts');
  const keys = [...block.matchAll(/(\w+):\s*'\$context\.[\w.]+'/g)].map((match) => match[1] as string);
  if (keys.length === 0) throw new Error('ACCESS_LOG_FORMAT has no $context fields');
  return Buffer.byteLength(`${JSON.stringify(Object.fromEntries(keys.map((key) => [key, ACCESS_LOG_VALUES[key] ?? '-'])))}\n`);
}

export interface CostDetails {
  readonly inputs: CostInputs;
  readonly lines: readonly CostLine[];
  readonly webhooksMeasured: number;
  readonly ingest: { readonly invocations: number; readonly medianMs: number; readonly meanMs: number; readonly medianCpuMs: number; readonly logBytesPerInvocation: number };
  readonly sender: { readonly invocations: number; readonly medianMs: number; readonly meanMs: number; readonly medianCpuMs: number; readonly logBytesPerInvocation: number };
  readonly log: { readonly handlerBytesPerWebhook: number; readonly platformBytesPerWebhook: number; readonly accessLogBytesPerWebhook: number };
  /** Per webhook, by phase and operation: count, table WRU, index WRU, RRU. */
  readonly dynamo: Readonly<Record<string, { readonly count: number; readonly wru: number; readonly indexWru: number; readonly rru: number; readonly conditionFailed: number }>>;
  readonly dynamoTotals: { readonly tableWru: number; readonly indexWru: number; readonly rru: number };
  /**
   * The same model with Lambda's CPU share at the configured memory (1,769 MB = 1 vCPU): measured
   * CPU time × 1769 / memory, plus the measured time not spent on CPU. An estimate, not the figure.
   */
  readonly cpuShareEstimate: { readonly ingestMs: number; readonly senderMs: number; readonly totalUsd: number };
  /** What each extra 100 ms of sender wall time (a slower provider than the loopback sandbox) adds per million webhooks. */
  readonly usdPer100msSenderLatency: number;
}

const perInvocation = (samples: readonly InvocationSample[]): { readonly invocations: number; readonly medianMs: number; readonly meanMs: number; readonly medianCpuMs: number; readonly logBytesPerInvocation: number } => ({
  invocations: samples.length,
  medianMs: round(median(samples.map((sample) => sample.ms)), 2),
  meanMs: round(mean(samples.map((sample) => sample.ms)), 2),
  medianCpuMs: round(median(samples.map((sample) => sample.cpuMs)), 2),
  logBytesPerInvocation: round(mean(samples.map((sample) => sample.log.bytes)), 1),
});

export interface CostOptions {
  readonly services: Services;
  readonly workspace: Workspace;
  /** Measured repetitions of the mix for durations and logs. @default 3 */
  readonly repetitions?: number;
}

export async function runCost({ services, workspace, repetitions = 3 }: CostOptions): Promise<{ result: number; details: CostDetails }> {
  const memory = readMemoryDefaults(REPO_ROOT) as Record<HandlerName, number>;
  const memoryMb = { ingest: memory.ingest, sender: memory.sender };

  // 1. Durations and log output: warm context, direct to dynalite, one record per sender invocation.
  const timedTable = 'cost-timed';
  await createTable(services.dynamoEndpoint, timedTable);
  await useRelayEnv(relayEnv({ workspace, services, tableName: timedTable }));
  await runMix({ services, tableName: timedTable, tag: 'warm', senderBatchSize: 1, memoryMb });
  const ingestSamples: InvocationSample[] = [];
  const senderSamples: InvocationSample[] = [];
  let webhooks = 0;
  for (let repetition = 0; repetition < repetitions; repetition += 1) {
    const run = await runMix({ services, tableName: timedTable, tag: `cost${repetition}`, senderBatchSize: 1, memoryMb });
    ingestSamples.push(...run.ingest);
    senderSamples.push(...run.sender);
    webhooks += run.webhooks;
    progress(`cost: timed mix ${repetition + 1}/${repetitions}`);
  }

  // 2. DynamoDB units: the same mix through the metering proxy (the first run fills the one-off
  // items — balance state, limit windows — so the metered one is the steady state).
  const meteredTable = 'cost-metered';
  await createTable(services.dynamoEndpoint, meteredTable);
  const direct: DynamoDBClient = localDynamoClient(services.dynamoEndpoint);
  const meter = await startDynamoMeter(services.dynamoEndpoint, direct);
  let records: readonly OperationRecord[] = [];
  let meteredWebhooks = 0;
  try {
    await useRelayEnv(relayEnv({ workspace, services, tableName: meteredTable, dynamoEndpoint: meter.endpoint }));
    await runMix({ services, tableName: meteredTable, tag: 'meter-fill', senderBatchSize: 1, memoryMb, onPhase: (phase) => meter.setPhase(`fill-${phase}`) });
    const run = await runMix({ services, tableName: meteredTable, tag: 'meter', senderBatchSize: 1, memoryMb, onPhase: (phase) => meter.setPhase(phase) });
    meteredWebhooks = run.webhooks;
    records = meter.records().filter((record) => !record.phase.startsWith('fill-'));
  } finally {
    await meter.close();
    direct.destroy();
  }
  progress('cost: DynamoDB units metered');

  const dynamo: Record<string, { count: number; wru: number; indexWru: number; rru: number; conditionFailed: number }> = {};
  for (const record of records) {
    const key = `${record.phase} ${record.operation} ${record.item}`;
    const entry = (dynamo[key] ??= { count: 0, wru: 0, indexWru: 0, rru: 0, conditionFailed: 0 });
    entry.count += 1;
    entry.wru += record.wru;
    entry.indexWru += record.indexWru;
    entry.rru += record.rru;
    if (record.conditionFailed) entry.conditionFailed += 1;
  }
  const perWebhook = (value: number): number => round(value / meteredWebhooks, 4);
  const dynamoPerWebhook = Object.fromEntries(
    Object.entries(dynamo).map(([key, entry]) => [key, { count: perWebhook(entry.count), wru: perWebhook(entry.wru), indexWru: perWebhook(entry.indexWru), rru: perWebhook(entry.rru), conditionFailed: perWebhook(entry.conditionFailed) }]),
  );
  const tableWru = records.reduce((sum, record) => sum + record.wru, 0) / meteredWebhooks;
  const indexWru = records.reduce((sum, record) => sum + record.indexWru, 0) / meteredWebhooks;
  const rru = records.reduce((sum, record) => sum + record.rru, 0) / meteredWebhooks;

  const ingest = perInvocation(ingestSamples);
  const sender = perInvocation(senderSamples);
  const ingestPerWebhook = ingestSamples.length / webhooks;
  const senderPerWebhook = senderSamples.length / webhooks;
  const handlerBytes = [...ingestSamples, ...senderSamples].reduce((sum, sample) => sum + sample.log.bytes, 0) / webhooks;
  const platformBytes = ingestPerWebhook * platformLogBytes(memoryMb.ingest, ingest.medianMs) + senderPerWebhook * platformLogBytes(memoryMb.sender, sender.medianMs);
  const accessBytes = accessLogLineBytes();

  const inputs: CostInputs = {
    memoryMb,
    ingestInvocationsPerWebhook: round(ingestPerWebhook, 4),
    senderInvocationsPerWebhook: round(senderPerWebhook, 4),
    ingestMs: ingest.medianMs,
    senderMs: sender.medianMs,
    apiRequestsPerWebhook: 1,
    writeUnitsPerWebhook: round(tableWru + indexWru, 4),
    readUnitsPerWebhook: round(rru, 4),
    logBytesPerWebhook: round(handlerBytes + platformBytes + accessBytes, 1),
  };
  const model = costModel(inputs);

  // Lambda at 256 MB has 256/1769 of a vCPU: CPU-bound time stretches by 1769/256.
  const stretch = (sample: { medianMs: number; medianCpuMs: number }, mb: number): number =>
    round(Math.max(0, sample.medianMs - sample.medianCpuMs) + sample.medianCpuMs * Math.max(1, 1769 / mb), 2);
  const cpuShare = { ingestMs: stretch(ingest, memoryMb.ingest), senderMs: stretch(sender, memoryMb.sender) };
  const slowerSender = costModel({ ...inputs, senderMs: inputs.senderMs + 100 }).totalUsd - model.totalUsd;

  return {
    result: round(model.totalUsd, 2),
    details: {
      inputs,
      lines: model.lines.map((line) => ({ ...line, quantity: round(line.quantity, 2), usd: round(line.usd, 4) })),
      webhooksMeasured: webhooks,
      ingest,
      sender,
      log: { handlerBytesPerWebhook: round(handlerBytes, 1), platformBytesPerWebhook: round(platformBytes, 1), accessLogBytesPerWebhook: accessBytes },
      dynamo: dynamoPerWebhook,
      dynamoTotals: { tableWru: round(tableWru, 3), indexWru: round(indexWru, 3), rru: round(rru, 3) },
      cpuShareEstimate: { ...cpuShare, totalUsd: round(costModel({ ...inputs, ...cpuShare }).totalUsd, 2) },
      usdPer100msSenderLatency: round(slowerSender, 2),
    },
  };
}
