/**
 * `accept`: the latency of the accept path — the ingest handler given an API Gateway v2 event, in
 * process, with its real context (config, dynalite store, secrets file) — at concurrency 16, against
 * one bare `PutItem` on the same dynalite at the same concurrency, with a client configured the
 * handler's way.
 *
 * The webhooks are signed Shopify `orders/create` deliveries (HMAC-SHA256 over the body), each with
 * its own event id, so every one is new and accepted (202). Rounds of ingest and PutItem requests
 * alternate (and alternate which goes first) so both sides see the same machine. dynalite runs in
 * its own process (as DynamoDB is another machine); the handler's log lines are counted, not
 * printed.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { createDynamoClient } from '../functions/handlers/runtime/dynamo';
import {
  apiGatewayEvent,
  createTable,
  handlerModules,
  lambdaContext,
  progress,
  relayEnv,
  shopifyOrderWebhook,
  tapOutput,
  useRelayEnv,
  type Services,
  type Workspace,
} from './harness';
import { median, percentile, ratio, round, summarize, type Summary } from './stats';

export interface AcceptResult {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly putItemP50Ms: number;
  readonly ratio: number;
}

export interface AcceptDetails {
  readonly concurrency: number;
  /** Requests measured per side. */
  readonly requests: number;
  /** Whether the time budget cut the run short of the requested count. */
  readonly budgetExhausted: boolean;
  readonly roundSize: number;
  readonly warmup: number;
  /**
   * Median over the alternating round pairs of (ingest p50 / PutItem p50 of the pair): a check of
   * the ratio that is insensitive to the machine's load drifting during the run.
   */
  readonly pairedRatioMedian: number;
  readonly ingest: Summary;
  readonly putItem: Summary;
  readonly bodyBytes: number;
  readonly statuses: Readonly<Record<string, number>>;
}

export interface AcceptOptions {
  readonly services: Services;
  readonly workspace: Workspace;
  /** Per side, after warm-up. @default 2000 */
  readonly requests?: number;
  /** @default 16 */
  readonly concurrency?: number;
  /** Requests per alternating round. @default 100 */
  readonly roundSize?: number;
  /** Per side, not measured. @default 200 */
  readonly warmup?: number;
  /**
   * Wall-time budget of the measured rounds: on a machine so loaded that 2000 requests a side would
   * not fit, the run stops after the round that exhausts it (never before `minRequests` a side),
   * and the count actually measured is reported. @default 150000
   */
  readonly budgetMs?: number;
  /** @default 600 */
  readonly minRequests?: number;
}

/** Runs `count` calls of `work` with at most `concurrency` in flight; returns each one's latency (ms). */
export async function runConcurrently(count: number, concurrency: number, work: (index: number) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      const start = performance.now();
      await work(index);
      latencies.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return latencies;
}

/** An item about the size of a message record (~700 bytes), without index attributes. */
function putItemOf(index: number): PutItemCommand {
  return new PutItemCommand({
    TableName: 'accept',
    Item: {
      pk: { S: `BENCH#${randomUUID()}` },
      sk: { S: 'PUT' },
      n: { N: String(index) },
      payload: { S: 'Order #1042: TZS 45,000.00 from Neema. '.repeat(16) },
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
}

export async function runAccept({ services, workspace, requests = 2_000, concurrency = 16, roundSize = 100, warmup = 200, budgetMs = 150_000, minRequests = 600 }: AcceptOptions): Promise<{ result: AcceptResult; details: AcceptDetails }> {
  const tableName = 'accept';
  await createTable(services.dynamoEndpoint, tableName);
  await useRelayEnv(relayEnv({ workspace, services, tableName }));
  const { ingest } = await handlerModules();
  const client = createDynamoClient({ dynamodbEndpoint: services.dynamoEndpoint });
  const statuses: Record<string, number> = {};
  let bodyBytes = 0;

  const ingestRound = async (count: number): Promise<number[]> => {
    const events = Array.from({ length: count }, (_, index) => apiGatewayEvent(shopifyOrderWebhook(index)));
    bodyBytes = Buffer.byteLength(events[0]?.body ?? '');
    return await runConcurrently(count, concurrency, async (index) => {
      const response = await ingest.handler(events[index]!, lambdaContext('ingest', 256, 10_000));
      statuses[String(response.statusCode)] = (statuses[String(response.statusCode)] ?? 0) + 1;
    });
  };
  const putRound = async (count: number): Promise<number[]> =>
    await runConcurrently(count, concurrency, async (index) => {
      await client.send(putItemOf(index));
    });

  const tap = tapOutput();
  const ingestLatencies: number[] = [];
  const putLatencies: number[] = [];
  const pairRatios: number[] = [];
  let budgetExhausted = false;
  try {
    await ingestRound(warmup);
    await putRound(warmup);
    for (const key of Object.keys(statuses)) delete statuses[key];
    const rounds = Math.ceil(requests / roundSize);
    const started = performance.now();
    for (let index = 0; index < rounds; index += 1) {
      if (performance.now() - started > budgetMs && ingestLatencies.length >= minRequests) {
        budgetExhausted = true;
        progress(`accept: time budget of ${budgetMs / 1000} s used after ${ingestLatencies.length} requests a side`);
        break;
      }
      const count = Math.min(roundSize, requests - index * roundSize);
      let ingestPair: number[];
      let putPair: number[];
      if (index % 2 === 0) {
        ingestPair = await ingestRound(count);
        putPair = await putRound(count);
      } else {
        putPair = await putRound(count);
        ingestPair = await ingestRound(count);
      }
      ingestLatencies.push(...ingestPair);
      putLatencies.push(...putPair);
      pairRatios.push(percentile(ingestPair, 50) / percentile(putPair, 50));
      if ((index + 1) % 5 === 0) progress(`accept: round ${index + 1}/${rounds}`);
    }
  } finally {
    tap.restore();
    client.destroy();
  }
  const accepted = statuses['202'] ?? 0;
  if (accepted !== ingestLatencies.length) throw new Error(`accept: expected every webhook accepted (202), got ${JSON.stringify(statuses)}`);

  const p50 = percentile(ingestLatencies, 50);
  const putP50 = percentile(putLatencies, 50);
  return {
    result: { p50Ms: round(p50, 2), p99Ms: round(percentile(ingestLatencies, 99), 2), putItemP50Ms: round(putP50, 2), ratio: ratio(p50, putP50) },
    details: {
      concurrency,
      requests: ingestLatencies.length,
      budgetExhausted,
      roundSize,
      warmup,
      pairedRatioMedian: round(median(pairRatios), 2),
      ingest: roundSummary(summarize(ingestLatencies)),
      putItem: roundSummary(summarize(putLatencies)),
      bodyBytes,
      statuses,
    },
  };
}

function roundSummary(summary: Summary): Summary {
  return Object.fromEntries(Object.entries(summary).map(([key, value]) => [key, key === 'count' ? value : round(value, 2)])) as unknown as Summary;
}
