import { describe, expect, it } from 'vitest';
import { accessLogLineBytes, billedMs, costModel, gbSeconds, GB, platformLogBytes, PRICES, type CostInputs } from '../../bench/cost';

const inputs: CostInputs = {
  memoryMb: { ingest: 256, sender: 512 },
  ingestInvocationsPerWebhook: 1,
  senderInvocationsPerWebhook: 2,
  ingestMs: 9.2,
  senderMs: 20,
  apiRequestsPerWebhook: 1,
  writeUnitsPerWebhook: 10,
  readUnitsPerWebhook: 2,
  logBytesPerWebhook: GB / 1_000_000,
};

describe('cost model', () => {
  it('bills Lambda duration rounded up to whole milliseconds', () => {
    expect(billedMs(9.2)).toBe(10);
    expect(billedMs(10)).toBe(10);
    expect(billedMs(0.1)).toBe(1);
    expect(gbSeconds(1000, 9.2, 256)).toBeCloseTo(1000 * 0.01 * 0.25, 10);
  });

  it('prices one million webhooks line by line', () => {
    const model = costModel(inputs);
    const line = (item: string): number => model.lines.find((entry) => entry.item === item)?.usd ?? Number.NaN;
    expect(line('Lambda duration, ingest')).toBeCloseTo(1_000_000 * 0.01 * 0.25 * PRICES.lambdaArmGbSecond, 8);
    expect(line('Lambda duration, sender')).toBeCloseTo(2_000_000 * 0.02 * 0.5 * PRICES.lambdaArmGbSecond, 8);
    expect(line('Lambda requests')).toBeCloseTo(3 * PRICES.lambdaRequestsPerMillion, 10);
    expect(line('API Gateway HTTP API')).toBeCloseTo(PRICES.httpApiRequestsPerMillion, 10);
    expect(line('DynamoDB writes (table + indexes)')).toBeCloseTo(10 * PRICES.dynamoWriteRequestUnitsPerMillion, 10);
    expect(line('DynamoDB reads')).toBeCloseTo(2 * PRICES.dynamoReadRequestUnitsPerMillion, 10);
    expect(line('CloudWatch Logs ingestion')).toBeCloseTo(PRICES.cloudWatchLogsIngestionPerGb, 10);
    expect(line('DynamoDB Streams reads (Lambda trigger)')).toBe(0);
    expect(line('EventBridge scheduled rules')).toBe(0);
    expect(model.totalUsd).toBeCloseTo(model.lines.reduce((sum, entry) => sum + entry.usd, 0), 12);
  });

  it('uses the published prices', () => {
    expect(PRICES).toMatchObject({
      lambdaArmGbSecond: 0.0000133334,
      lambdaRequestsPerMillion: 0.2,
      httpApiRequestsPerMillion: 1,
      dynamoWriteRequestUnitsPerMillion: 0.625,
      dynamoReadRequestUnitsPerMillion: 0.125,
      cloudWatchLogsIngestionPerGb: 0.5,
    });
  });

  it('sizes the platform and access log lines from the stack', () => {
    expect(platformLogBytes(256, 12.3)).toBeGreaterThan(200);
    expect(platformLogBytes(256, 12.3)).toBeLessThan(400);
    const source = "const ACCESS_LOG_FORMAT = AccessLogFormat.custom(\n  JSON.stringify({\n    requestId: '$context.requestId',\n    status: '$context.status',\n  }),\n);";
    expect(accessLogLineBytes(source)).toBe(Buffer.byteLength('{"requestId":"cT2xQjTKoAMEbQw=","status":"202"}\n'));
    expect(accessLogLineBytes()).toBeGreaterThan(100);
    expect(() => accessLogLineBytes('nothing here')).toThrow(/ACCESS_LOG_FORMAT/);
  });
});
