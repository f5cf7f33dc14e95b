import { describe, expect, it } from 'vitest';
import { costPer1000Sms, fixedMonthlyCost, PRICES, SMS_PRICE_TZS, TZS_PER_USD } from '../../bench/cost';
import {
  cliSection,
  dynamoSection,
  redriveSection,
  renderReport,
  summaryLines,
  timeToSmsSection,
  updateReport,
  type BenchRun,
} from '../../bench/report';

const cost = costPer1000Sms({
  ingestMs: 4.2,
  senderMs: 17.5,
  memoryMb: { ingest: 256, sender: 256 },
  writeUnits: 13,
  readUnits: 0,
  serviceAnswerMs: 300,
  logBytes: { ingest: 600_000, sender: 400_000 },
});
const entry = { ms: 300, baselineMs: 200, ratio: 1.5 };
const run: BenchRun = {
  results: {
    timeToSms: {
      trickle: { p50Ms: 12.3, p99Ms: 45.6, floorP50Ms: 3.2, floorP99Ms: 11.7 },
      burst: { acceptP99Ms: 250, drainSeconds: 10, smsPerSecond: 100, floorSmsPerSecond: 400 },
    },
    redrive: { records: 2_000, seconds: 8, smsPerSecond: 250 },
    consoleLoad: {
      records: 10_000,
      seedSeconds: 120,
      api: { recordsMs: 30, routesMs: 5, creditMs: 40 },
      baseline: { logsRecordsMs: 20 },
      recordsRatio: 1.5,
      browser: { activityMs: 250, creditMs: 300 },
    },
    coldInit: { ingest: entry, sender: entry, sweeper: entry, 'balance-watch': entry },
    dynamoPerSms: { requests: 4, writeUnits: 6, tableWriteUnits: 4, indexWriteUnitsEstimated: 2 },
    awsCostPer1000Sms: { usd: cost.usd, shareOfSmsSpend: cost.shareOfSmsSpend },
    cli: {
      helpMs: 90,
      validateMs: 300,
      baselineMs: 60,
      helpRatio: 1.5,
      validateRatio: 5,
      sources: { helpMs: 1800, validateMs: 2500 },
    },
  },
  dynamo: {
    readUnits: 0,
    tableWriteUnits: 4,
    indexWriteUnitsEstimated: 2,
    byCommand: { PutItem: 2, UpdateItem: 2 },
    unreported: 0,
    ingestMs: 4.2,
    senderMs: 17.5,
  },
  cost: { lines: cost.lines, memoryMb: { ingest: 256, sender: 256, sweeper: 256, 'balance-watch': 128 } },
  meta: {
    date: '2026-11-24T00:00:00.000Z',
    node: 'v20',
    machine: '2 × CPU',
    loadBefore: [1, 1, 1],
    loadAfter: [2, 2, 2],
    seconds: 200,
    sectionSeconds: { coldInit: 40 },
  },
};

describe('bench cost', () => {
  it("bills whole milliseconds per invocation (the sender's wait for the service included), the units measured and the log bytes", () => {
    // The sender's 17.5 ms and its 300 ms wait are one invocation: 318 ms billed.
    const gbs = 1000 * (5 / 1000) * 0.25 + 1000 * (318 / 1000) * 0.25;
    const logs = ((1000 * 1_000_000) / 1024 ** 3) * 0.5;
    const expected = 0.001 + 2000 * 0.2e-6 + gbs * PRICES.lambdaArmPerGbSecond + 13_000 * 0.625e-6 + logs;
    expect(cost.usd).toBeCloseTo(expected, 10);
    expect(cost.shareOfSmsSpend).toBeCloseTo(expected / ((1000 * SMS_PRICE_TZS) / TZS_PER_USD), 10);
  });
});

describe('bench fixed cost', () => {
  it("adds up a month's alarms, dashboard, metrics, secrets and sweeper runs; the low end without traffic metrics and dashboard", () => {
    const fixed = fixedMonthlyCost({
      alarmMetrics: 10,
      dashboards: 1,
      secrets: 2,
      alwaysPublishedMetrics: 4,
      trafficMetrics: 6,
      sweeperRunMs: 1000,
      sweeperMemoryMb: 1024,
      sweeperReadUnits: 0,
      sweeperLogBytes: 0,
    });
    const sweeper = 43_200 * 1 * PRICES.lambdaArmPerGbSecond + 43_200 * 0.2e-6;
    expect(fixed.usd.high).toBeCloseTo(10 * 0.1 + 3 + 4 * 0.3 + 6 * 0.3 + 2 * 0.4 + sweeper, 10);
    expect(fixed.usd.low).toBeCloseTo(10 * 0.1 + 4 * 0.3 + 2 * 0.4 + sweeper, 10);
  });
});

describe('bench report', () => {
  it('prints every figure with its baseline', () => {
    const text = summaryLines(run).join('\n');
    expect(text).toContain('12.3 / 45.6 ms');
    expect(text).toContain('floor 3.2 / 11.7 ms (p99 3.9× its)');
    expect(text).toContain('floor 400 (25 % of it)');
    expect(text).toContain('baseline 200 ms, ratio 1.5×');
    expect(text).toContain('4 requests, 6 WRU');
    expect(text).toContain("logs' listing 20 ms, ratio 1.5×");
    expect(text).toContain('250 / 300 ms');
    expect(text).toMatch(/redrive: parked SMS per second +250 +2,000 records in 8 s/);
    expect(text).toMatch(/CLI: sms-relay --help +90 ms +baseline node -e 0 60 ms, ratio 1.5×/);
    expect(text).toMatch(/CLI: sms-relay validate +300 ms +baseline node -e 0 60 ms, ratio 5×/);
  });

  it('renders BENCHMARKS.md with the dynalite caveat, the prices and the exchange rate', () => {
    const markdown = renderReport(run);
    for (const heading of [
      '## Time to SMS',
      '## Console with 10,000 records',
      '## Cold init',
      '## DynamoDB per SMS',
      '## AWS cost per 1,000 SMS',
      '### Prices (us-east-1)',
    ])
      expect(markdown).toContain(heading);
    expect(markdown).toContain('dynalite reports table capacity only');
    expect(markdown).toContain('**estimated**');
    expect(markdown).toContain(`${TZS_PER_USD.toLocaleString('en-US')} TZS per US dollar`);
    expect(markdown).toContain('https://aws.amazon.com/dynamodb/pricing/on-demand/');
    expect(markdown).toContain('| balance-watch | 300 | 200 | 1.5× | 128 MB |');
    expect(markdown).toContain('| `sms-relay validate --config config/prod.yaml` | 300 | 60 | 5× | 2500 |');
  });

  it('after a run of the CLI section alone, replaces its section and the summary and keeps the rest', () => {
    const before = renderReport(run);
    const cli = { ...run.results.cli, helpMs: 70, helpRatio: 1.17 };
    const after = updateReport(before, { ...run.results, cli }, [cliSection(cli, 'on 2026-11-26')]);
    expect(after).toContain('| `sms-relay --help` | 70 | 60 | 1.17× | 1800 |');
    expect(after).toContain('Measured on 2026-11-26, apart from the rest of this page.');
    expect(after).not.toContain('| `sms-relay --help` | 90 |');
    expect(after).toMatch(/CLI: sms-relay --help +70 ms/);
    expect(after.match(/## CLI start-up/g)).toHaveLength(1);
    expect(after.replace(/## CLI start-up[\s\S]*?\n## /, '').replace(/```text[\s\S]*?```/, '')).toBe(
      before.replace(/## CLI start-up[\s\S]*?\n## /, '').replace(/```text[\s\S]*?```/, ''),
    );

    // A report from before the section existed gets it before the DynamoDB section.
    const older = before.replace(/## CLI start-up[\s\S]*?\n(## )/, '$1');
    const added = updateReport(older, { ...run.results, cli }, [cliSection(cli)]);
    expect(added.indexOf('## CLI start-up')).toBeGreaterThan(added.indexOf('## Cold init'));
    expect(added.indexOf('## CLI start-up')).toBeLessThan(added.indexOf('## DynamoDB per SMS'));
  });

  it('after a run of the DynamoDB section alone, replaces its section with the figures and their baseline', () => {
    const before = renderReport(run);
    const dynamoPerSms = { requests: 3, writeUnits: 5, tableWriteUnits: 3, indexWriteUnitsEstimated: 2 };
    const after = updateReport(before, { ...run.results, dynamoPerSms }, [
      dynamoSection(
        dynamoPerSms,
        { ...run.dynamo, tableWriteUnits: 3, byCommand: { TransactWriteItems: 1, UpdateItem: 2 } },
        'on 2026-11-26',
      ),
    ]);
    expect(after).toContain('| requests | 3 (TransactWriteItems 1, UpdateItem 2) |');
    expect(after).toContain('| **write units** (table + indexes) | 5 |');
    expect(after.match(/## DynamoDB per SMS/g)).toHaveLength(1);
    expect(after).toMatch(/DynamoDB per SMS +3 requests, 5 WRU/);
  });

  it('gives the count of DynamoDB Local beside dynalite’s, or why it was not measured', () => {
    const onDynamoDbLocal = { requests: 3, writeUnits: 14, tableWriteUnits: 6, indexWriteUnits: 8, readUnits: 0 };
    const measured = dynamoSection({ ...run.results.dynamoPerSms, onDynamoDbLocal }, run.dynamo).join('\n');
    expect(measured).toContain(
      "**As AWS's DynamoDB Local counts it** (the engine of `npm run test:aws`, asked for `INDEXES`, which reports each index's units): 3 requests, 14 write units per SMS: 6 of the table and 8 of the indexes, measured and 0 read units.",
    );
    expect(
      summaryLines({
        results: { ...run.results, dynamoPerSms: { ...run.results.dynamoPerSms, onDynamoDbLocal } },
      }).join('\n'),
    ).toMatch(/DynamoDB per SMS, DynamoDB Local +3 requests, 14 WRU +measured: table 6 \+ indexes 8 WRU, 0 RRU/);
    const unavailable = dynamoSection(
      { ...run.results.dynamoPerSms, onDynamoDbLocal: { unavailable: 'no Java' } },
      run.dynamo,
    ).join('\n');
    expect(unavailable).toContain(
      "counts it** (the engine of `npm run test:aws`, asked for `INDEXES`, which reports each index's units): not measured: no Java.",
    );
    expect(
      summaryLines({
        results: {
          ...run.results,
          dynamoPerSms: { ...run.results.dynamoPerSms, onDynamoDbLocal: { unavailable: 'no Java' } },
        },
      }).join('\n'),
    ).toMatch(/DynamoDB per SMS, DynamoDB Local +not measured +no Java/);
  });

  it('after a run of the time-to-SMS section alone, replaces its section and keeps the AWS estimate after it', () => {
    const before = renderReport(run);
    const timeToSms = {
      trickle: { p50Ms: 4, p99Ms: 12, floorP50Ms: 3, floorP99Ms: 9 },
      burst: { acceptP99Ms: 480, drainSeconds: 4, smsPerSecond: 250, floorSmsPerSecond: 900 },
    };
    const after = updateReport(before, { ...run.results, timeToSms }, [timeToSmsSection(timeToSms, 'on 2026-11-26')]);
    expect(after).toContain('| burst SMS per second | 250 | 1,000 / drain |');
    expect(after).toMatch(
      /\| trickle floor p50 \/ p99 \| 3 \/ 9 ms \| what the runtime cannot skip between a 202 and the SMS/,
    );
    expect(after).not.toContain('| burst SMS per second | 100 |');
    expect(after).toContain("**What bounds the burst locally: the store's thread.**");
    expect(after.match(/## Time to SMS\n/g)).toHaveLength(1);
    expect(after).toContain('## Time to SMS on AWS (on paper)');
    expect(after).toMatch(/burst: SMS per second +250/);
  });

  it('after a run of the redrive section alone, replaces its section and keeps the AWS estimate', () => {
    const before = renderReport(run);
    expect(before).toContain('## Redrive');
    const redrive = { records: 2_000, seconds: 5, smsPerSecond: 400 };
    const after = updateReport(before, { ...run.results, redrive }, [redriveSection(redrive, 'on 2026-11-26')]);
    expect(after).toContain('| SMS per second | 400 |');
    expect(after).not.toContain('| SMS per second | 250 |');
    expect(after.match(/## Redrive/g)).toHaveLength(1);
    expect(after).toContain('**On AWS (an estimate, not measured):**');
  });
});
