import { describe, expect, it } from 'vitest';
import { costModel, type CostInputs } from '../../bench/cost';
import { PRICE_CITATIONS, renderReport, summaryLines, type BenchResults } from '../../bench/report';

const summary = { count: 2000, min: 1, p50: 2, p90: 3, p99: 4, max: 5, mean: 2.5 };
const inputs: CostInputs = {
  memoryMb: { ingest: 256, sender: 256 },
  ingestInvocationsPerWebhook: 1,
  senderInvocationsPerWebhook: 0.9,
  ingestMs: 10,
  senderMs: 20,
  apiRequestsPerWebhook: 1,
  writeUnitsPerWebhook: 3,
  readUnitsPerWebhook: 0.1,
  logBytesPerWebhook: 1000,
};
const model = costModel(inputs);
const entry = (ratio: number) => ({ ms: 100 * ratio, baselineMs: 100, ratio });

const results = (met: boolean): BenchResults => ({
  pipeline: { medianMicros: met ? 50 : 200, floorMedianMicros: 25, ratio: met ? 2 : 8 },
  coldInit: { ingest: entry(met ? 1.2 : 3), sender: entry(1.1), sweeper: entry(1.3), 'balance-watch': entry(1.4) },
  accept: { p50Ms: 3, p99Ms: 9, putItemP50Ms: 2, ratio: met ? 1.5 : 4 },
  providerCalls: { observed: 40, optimal: 40 },
  costPerMillionUsd: Math.round(model.totalUsd * 100) / 100,
  targets: {
    pipeline: { target: 'ratio ≤ 3', met },
    coldInit: { target: 'every ratio ≤ 1.5', met },
    accept: { target: 'ratio ≤ 2', met },
    providerCalls: { target: 'observed = optimal', met: true },
    costPerMillionUsd: { target: '≤ $2.50', met },
  },
  meta: { date: '2026-11-22T00:00:00.000Z', node: 'v20.20.2', platform: 'linux x64', cpus: 2, cpuModel: 'cpu', memoryGb: 24, loadAverageBefore: [1, 1, 1], loadAverageAfter: [2, 2, 2], durationSeconds: 280, sectionSeconds: { pipeline: 20 } },
  details: {
    pipeline: { batch: 200, batches: 60, bodyBytes: 2682, messages: 1, recipients: 2, text: '[FIRING] x', stagesMicros: { render: 90, parse: 30 } },
    coldInit: {
      runs: 9,
      detailRuns: 5,
      bundles: Object.fromEntries(['ingest', 'sender', 'sweeper', 'balance-watch'].map((name) => [name, { bytes: 1_400_000, baselineBytes: 360_000, sdkClients: ['@aws-sdk/client-dynamodb'], byFamily: { zod: 470_000, 'AWS SDK (+ smithy)': 360_000 } }])),
      moduleOnlyMs: { ingest: 200, sender: 100, sweeper: 100, 'balance-watch': 100 },
      librariesMs: { zod: 200, 'AWS SDK DynamoDB client': 300 },
      memoryMb: { ingest: 256, sender: 256, sweeper: 256, 'balance-watch': 128 },
    },
    accept: { concurrency: 16, requests: 2000, budgetExhausted: false, roundSize: 100, warmup: 200, pairedRatioMedian: 4, ingest: summary, putItem: summary, bodyBytes: 5936, statuses: { '202': 2000 } },
    providerCalls: { webhooks: 45, statuses: { '202': 35, '200': 10 }, pendingRecords: 40, senderInvocations: 4, deliveredMessages: 40, distinctTexts: 40, recipientDeliveries: 60, optimalByKind: { 'alertmanager firing': 20 } },
    cost: {
      inputs,
      lines: model.lines,
      webhooksMeasured: 135,
      ingest: { invocations: 135, medianMs: 10, meanMs: 11, medianCpuMs: 5, logBytesPerInvocation: 900 },
      sender: { invocations: 120, medianMs: 20, meanMs: 21, medianCpuMs: 8, logBytesPerInvocation: 1500 },
      log: { handlerBytesPerWebhook: 500, platformBytesPerWebhook: 300, accessLogBytesPerWebhook: 200 },
      dynamo: { 'ingest PutItem MSG': { count: 1, wru: 1, indexWru: 2, rru: 0, conditionFailed: 0 } },
      dynamoTotals: { tableWru: 1, indexWru: 2, rru: 0.1 },
      cpuShareEstimate: { ingestMs: 30, senderMs: 60, totalUsd: 3 },
      usdPer100msSenderLatency: 0.3,
    },
  },
});

describe('BENCHMARKS.md', () => {
  it('has every section, the summary and the static price citations', () => {
    const text = renderReport(results(false));
    for (const heading of ['## How to run', '## Machine and method', '## Summary', '## Pipeline', '## Cold init', '## Accept', '## Provider calls', '## Cost', '## Prices']) {
      expect(text).toContain(heading);
    }
    expect(text).toContain('npm run bench');
    expect(text).toContain(PRICE_CITATIONS);
    expect(text).toContain('Targets missed: pipeline, coldInit, accept, costPerMillionUsd');
    expect(text.match(/\*\*Why the target is missed\.\*\*/g)).toHaveLength(4);
  });

  it('explains no miss when every target is met', () => {
    const text = renderReport(results(true));
    expect(text).toContain('Every target is met.');
    expect(text).not.toContain('Why the target is missed');
  });

  it('prints one summary line per figure and handler', () => {
    const lines = summaryLines(results(false));
    expect(lines).toHaveLength(2 + 1 + 4 + 1 + 1 + 1);
    expect(lines[0]).toMatch(/^figure\s+measured\s+baseline\s+ratio\s+target\s+status$/);
    expect(lines.find((line) => line.startsWith('cost per 1M webhooks'))).toContain(`$${results(false).costPerMillionUsd.toFixed(2)}`);
  });
});
