import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamsRecord,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { TABLE } from '../../functions/store/table';
import { type FilterPattern, passesFilters } from './event-filter';

/**
 * The settings of an `AWS::Lambda::EventSourceMapping` on a DynamoDB stream that this poller
 * applies, read from the synthesized template ({@link mappingSettingsOf}).
 */
export interface MappingSettings {
  readonly filters: readonly FilterPattern[];
  readonly batchSize: number;
  readonly bisectBatchOnFunctionError: boolean;
  readonly reportBatchItemFailures: boolean;
  /** -1: until the record expires (here: forever). */
  readonly maximumRetryAttempts: number;
  readonly startingPosition: 'LATEST' | 'TRIM_HORIZON';
  /** Batches of one shard processed at once (Lambda's default 1); applied only with `parallel` (see {@link StreamMapping}). */
  readonly parallelizationFactor: number;
}

/** The mapping's settings from its template properties; a property the poller does not model throws. */
export function mappingSettingsOf(properties: Record<string, unknown>): MappingSettings {
  // ParallelizationFactor is applied when a test asks for it (`parallel`); DestinationConfig is the failure queue.
  const modelled = new Set([
    'FunctionName',
    'EventSourceArn',
    'FilterCriteria',
    'BatchSize',
    'BisectBatchOnFunctionError',
    'FunctionResponseTypes',
    'MaximumRetryAttempts',
    'StartingPosition',
    'DestinationConfig',
    'ParallelizationFactor',
  ]);
  const unknown = Object.keys(properties).filter((key) => !modelled.has(key));
  if (unknown.length > 0)
    throw new Error(`the stream mapping sets ${unknown.join(', ')}, which this poller does not apply`);
  const filters = (
    (properties['FilterCriteria'] as { Filters?: { Pattern: string }[] } | undefined)?.Filters ?? []
  ).map((filter) => JSON.parse(filter.Pattern) as FilterPattern);
  return {
    filters,
    // Lambda's defaults for a DynamoDB stream.
    batchSize: (properties['BatchSize'] as number | undefined) ?? 100,
    bisectBatchOnFunctionError: properties['BisectBatchOnFunctionError'] === true,
    reportBatchItemFailures: ((properties['FunctionResponseTypes'] as string[] | undefined) ?? []).includes(
      'ReportBatchItemFailures',
    ),
    maximumRetryAttempts: (properties['MaximumRetryAttempts'] as number | undefined) ?? -1,
    startingPosition: properties['StartingPosition'] as MappingSettings['startingPosition'],
    parallelizationFactor: (properties['ParallelizationFactor'] as number | undefined) ?? 1,
  };
}

/**
 * The template's sender mappings by the lane their filters take (`NewImage.lane`): the relay has
 * one per lane. Throws unless each lane has exactly one.
 */
export function mappingsByLane(
  mappings: readonly Record<string, unknown>[],
): Readonly<Record<'critical' | 'bulk', MappingSettings>> {
  const laneOf = (settings: MappingSettings): string => {
    const lanes = new Set(
      settings.filters.map((filter) =>
        JSON.stringify((filter['dynamodb'] as { NewImage?: { lane?: unknown } } | undefined)?.NewImage?.lane),
      ),
    );
    if (lanes.size !== 1) throw new Error(`a mapping's filters take ${[...lanes].join(', ')}, not one lane`);
    return [...lanes][0]!;
  };
  const byLane = new Map(
    mappings.map((properties) => mappingSettingsOf(properties)).map((each) => [laneOf(each), each]),
  );
  const of = (lane: string): MappingSettings => {
    const found = byLane.get(JSON.stringify({ S: [lane] }));
    if (found === undefined || byLane.size !== mappings.length || mappings.length !== 2)
      throw new Error(`the template has no one mapping for the ${lane} lane`);
    return found;
  };
  return { critical: of('critical'), bulk: of('bulk') };
}

/** What an invocation of the function gave back: its answer, or a function error (a throw, a crash). */
export type InvokeOutcome =
  | { readonly result: DynamoDBBatchResponse | null | undefined }
  | { readonly functionError: string };

/** What Lambda sends the on-failure destination for a stream batch it gave up on (metadata, not the records). */
export interface StreamFailure {
  readonly requestContext: { readonly condition: 'RetryAttemptsExhausted'; readonly approximateInvokeCount: number };
  readonly responseContext: { readonly functionError?: string };
  readonly DDBStreamBatchInfo: {
    readonly shardId: string;
    readonly startSequenceNumber: string;
    readonly endSequenceNumber: string;
    readonly batchSize: number;
    readonly streamArn: string;
  };
}

/** One invocation the poller made: the sequence numbers it carried and what came back. */
export interface MappingInvocation {
  readonly sequenceNumbers: readonly string[];
  /** The partition key of each record it carried, in order. */
  readonly keys: readonly string[];
  /** When the poller handed the batch to the function and when the answer came (epoch ms). */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly outcome: InvokeOutcome;
}

/**
 * A small stand-in for Lambda's event source mapping on a DynamoDB stream: it reads the table's
 * real stream through the DynamoDB Streams API (GetRecords on each shard, parents before
 * children), drops the records no filter passes, hands the rest to `invoke` in batches of at most
 * `batchSize` as Lambda's DynamoDB event (`Records[].eventName`, `dynamodb.Keys/NewImage`,
 * `SequenceNumber`, `eventSourceARN`), and handles the answer as Lambda does:
 * - `batchItemFailures` (with `ReportBatchItemFailures`): checkpoint before the lowest reported
 *   sequence number and retry from it (with bisect on, "split at the returned sequence number":
 *   the same records); an empty or unknown `itemIdentifier` fails the whole batch;
 * - a function error: with `BisectBatchOnFunctionError`, the batch is split in two and each half
 *   delivered on its own (a split is not a retry); otherwise the batch is retried;
 * - after `MaximumRetryAttempts` retries the batch's metadata goes to {@link failureQueue} and the
 *   shard moves on.
 * One shard's batches go one at a time, in order; with `parallel`, as Lambda applies
 * `ParallelizationFactor`: each record goes to one of that many sub-streams by a hash of its key
 * (one key's records stay in order), each sub-stream's batches one at a time, the sub-streams at
 * once (what a backlog's throughput depends on).
 */
export class StreamMapping {
  /** The on-failure destination: what Lambda would have sent the failure queue. */
  public readonly failureQueue: StreamFailure[] = [];
  public readonly invocations: MappingInvocation[] = [];
  #running = false;
  #paused: Promise<void> | undefined;
  #resume: (() => void) | undefined;
  #onParked: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #error: unknown;
  readonly #iterators = new Map<string, string | undefined>();
  readonly #done = new Set<string>();
  /** Shards empty when read from LATEST began that have given no record since (see {@link #read}). */
  readonly #unreadLatest = new Set<string>();

  public constructor(
    private readonly options: {
      readonly client: DynamoDBStreamsClient;
      readonly streamArn: string;
      readonly settings: MappingSettings;
      readonly invoke: (event: DynamoDBStreamEvent) => Promise<InvokeOutcome>;
      /** Between two reads of a shard that gave nothing (Lambda polls a shard about four times a second). @default 250 */
      readonly pollMs?: number;
      /** Apply the mapping's `ParallelizationFactor` (see the class). @default false */
      readonly parallel?: boolean;
    },
  ) {}

  /** Takes the shards' positions (LATEST: from now on) and starts polling in the background. */
  public async start(): Promise<void> {
    await this.#discoverShards(this.options.settings.startingPosition);
    this.#running = true;
    this.#loop = this.#poll().catch((error: unknown) => {
      this.#error = error;
    });
  }

  /** Stops polling; throws what stopped the loop, if anything did. */
  public async stop(): Promise<void> {
    this.#running = false;
    this.resume();
    await this.#loop;
    if (this.#error !== undefined) throw this.#error;
  }

  /**
   * Holds the next read of the stream until {@link resume}: what is written meanwhile reaches the
   * function together, as records written within one of Lambda's polls do.
   */
  public async pause(): Promise<void> {
    this.#paused ??= new Promise((resolve) => (this.#resume = resolve));
    await new Promise<void>((resolve) => (this.#onParked = resolve));
  }

  public resume(): void {
    this.#resume?.();
    this.#paused = undefined;
  }

  /** Throws what stopped the loop, if anything did: a test waiting on a state calls it as it polls. */
  public check(): void {
    if (this.#error !== undefined) throw this.#error;
  }

  async #discoverShards(position: MappingSettings['startingPosition']): Promise<void> {
    const { StreamDescription: stream } = await this.options.client.send(
      new DescribeStreamCommand({ StreamArn: this.options.streamArn }),
    );
    for (const shard of stream?.Shards ?? []) {
      const id = shard.ShardId!;
      if (this.#iterators.has(id) || this.#done.has(id)) continue;
      // A child shard waits until its parent is read to its end, as Lambda keeps a key's order.
      if (shard.ParentShardId !== undefined && this.#iterators.has(shard.ParentShardId)) continue;
      this.#iterators.set(id, await this.#iteratorOf(id, position));
      if (position === 'LATEST' && (await this.#isEmpty(id))) this.#unreadLatest.add(id);
    }
  }

  async #iteratorOf(shardId: string, position: MappingSettings['startingPosition']): Promise<string | undefined> {
    const { ShardIterator } = await this.options.client.send(
      new GetShardIteratorCommand({ StreamArn: this.options.streamArn, ShardId: shardId, ShardIteratorType: position }),
    );
    return ShardIterator;
  }

  async #isEmpty(shardId: string): Promise<boolean> {
    const fromStart = await this.#iteratorOf(shardId, 'TRIM_HORIZON');
    if (fromStart === undefined) return false;
    const { Records: records = [] } = await this.options.client.send(
      new GetRecordsCommand({ ShardIterator: fromStart }),
    );
    return records.length === 0;
  }

  /**
   * DynamoDB Local sometimes answers a read of a LATEST iterator taken on a shard that was still empty
   * with TrimmedDataAccessException once something is written (aws/aws-sdk-java#2923). Nothing read
   * from that shard yet, and it held nothing when the mapping started, so reading it from its start
   * gives exactly what LATEST promised.
   */
  async #read(shardId: string, iterator: string): Promise<{ records: StreamsRecord[]; next: string | undefined }> {
    try {
      const { Records: records = [], NextShardIterator } = await this.options.client.send(
        new GetRecordsCommand({ ShardIterator: iterator }),
      );
      if (records.length > 0) this.#unreadLatest.delete(shardId);
      return { records, next: NextShardIterator };
    } catch (error) {
      if (!(error instanceof TrimmedDataAccessException) || !this.#unreadLatest.delete(shardId)) throw error;
      // Read once from the start: the shard is no longer marked, so a second refusal throws.
      const fromStart = await this.#iteratorOf(shardId, 'TRIM_HORIZON');
      return fromStart === undefined ? { records: [], next: undefined } : await this.#read(shardId, fromStart);
    }
  }

  async #poll(): Promise<void> {
    const pollMs = this.options.pollMs ?? 250;
    while (this.#running) {
      if (this.#paused !== undefined) {
        this.#onParked?.();
        await this.#paused;
      }
      let read = 0;
      for (const [shardId, iterator] of [...this.#iterators]) {
        if (iterator === undefined) {
          this.#iterators.delete(shardId);
          this.#done.add(shardId);
          continue;
        }
        const { records, next } = await this.#read(shardId, iterator);
        this.#iterators.set(shardId, next);
        read += records.length;
        const events = records
          .map((record) => lambdaRecord(record, this.options.streamArn))
          .filter((event) => passesFilters(this.options.settings.filters, event));
        const factor = this.options.parallel === true ? this.options.settings.parallelizationFactor : 1;
        const streams = Array.from({ length: factor }, () => [] as DynamoDBRecord[]);
        for (const event of events) streams[keyHash(event) % factor]!.push(event);
        await Promise.all(
          streams.map(async (stream) => {
            for (let at = 0; at < stream.length && this.#running; at += this.options.settings.batchSize) {
              await this.#deliver(shardId, stream.slice(at, at + this.options.settings.batchSize));
            }
          }),
        );
      }
      // New shards (DynamoDB rolls them over), found from the stream's start: nothing is missed.
      await this.#discoverShards('TRIM_HORIZON');
      if (read === 0 && this.#running) await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  async #deliver(shardId: string, records: DynamoDBRecord[]): Promise<void> {
    const { settings } = this.options;
    let batch = records;
    let invocations = 0;
    for (;;) {
      const startedAt = Date.now();
      const outcome = await this.options.invoke({ Records: batch });
      invocations += 1;
      this.invocations.push({
        sequenceNumbers: batch.map((record) => record.dynamodb!.SequenceNumber!),
        keys: batch.map((record) => record.dynamodb?.Keys?.[TABLE.partitionKey]?.S ?? ''),
        startedAt,
        endedAt: Date.now(),
        outcome,
      });
      let retryFrom: number;
      if ('functionError' in outcome) {
        if (settings.bisectBatchOnFunctionError && batch.length > 1) {
          const half = Math.ceil(batch.length / 2);
          await this.#deliver(shardId, batch.slice(0, half));
          await this.#deliver(shardId, batch.slice(half));
          return;
        }
        retryFrom = 0;
      } else {
        const failures = settings.reportBatchItemFailures ? (outcome.result?.batchItemFailures ?? []) : [];
        if (failures.length === 0) return;
        const positions = failures.map(({ itemIdentifier }) =>
          itemIdentifier === '' ? -1 : batch.findIndex((record) => record.dynamodb!.SequenceNumber === itemIdentifier),
        );
        retryFrom = positions.some((position) => position < 0) ? 0 : Math.min(...positions);
      }
      // Checkpointed up to the first failure: only the records from it on are tried again.
      batch = batch.slice(retryFrom);
      if (settings.maximumRetryAttempts >= 0 && invocations > settings.maximumRetryAttempts) {
        this.failureQueue.push({
          requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: invocations },
          responseContext: 'functionError' in outcome ? { functionError: outcome.functionError } : {},
          DDBStreamBatchInfo: {
            shardId,
            startSequenceNumber: batch[0]!.dynamodb!.SequenceNumber!,
            endSequenceNumber: batch.at(-1)!.dynamodb!.SequenceNumber!,
            batchSize: batch.length,
            streamArn: this.options.streamArn,
          },
        });
        return;
      }
    }
  }
}

/**
 * A record of the Streams API as Lambda's event carries it: JSON, the creation time in epoch
 * seconds, binary values base64, and the stream's ARN.
 */
export function lambdaRecord(record: StreamsRecord, streamArn: string): DynamoDBRecord {
  const json = JSON.stringify(record, (_key, value: unknown) => {
    if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
    return value;
  });
  const parsed = JSON.parse(json) as DynamoDBRecord & { dynamodb: { ApproximateCreationDateTime?: unknown } };
  // DynamoDB Local rounds it down to the minute (AWS: to the second); the relay does not read it.
  const created = record.dynamodb?.ApproximateCreationDateTime;
  if (created instanceof Date) parsed.dynamodb.ApproximateCreationDateTime = Math.floor(created.getTime() / 1000);
  return { ...parsed, eventSourceARN: streamArn };
}

/** A record's key, hashed: which of a parallelized shard's sub-streams it goes to. */
function keyHash(event: DynamoDBRecord): number {
  const key = JSON.stringify(event.dynamodb?.Keys ?? {});
  let hash = 0;
  for (let at = 0; at < key.length; at += 1) hash = (hash * 31 + key.charCodeAt(at)) >>> 0;
  return hash;
}
