import { setTimeout as sleep } from 'node:timers/promises';
import { type AttributeValue, type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { MessageState, TABLE } from '../../functions/store';
import { messageKey } from '../../functions/store/keys';
import { insertRecord, lambdaContext, streamEvent, type StreamSource } from './events';
import { HANDLER_TIMEOUT_MS, type RelayHandlers } from './handlers';

/** The deployed event source mapping's settings (infra `connectSender`), mirrored locally. */
export const STREAM_DEFAULTS = {
  batchSize: 10,
  /** `parallelizationFactor`: batches in flight at once. */
  parallelism: 2,
  retryAttempts: 3,
  retryDelayMs: 1_000,
} as const;

export interface StreamFeederOptions {
  readonly client: DynamoDBClient;
  readonly source: StreamSource;
  readonly sender: RelayHandlers['sender'];
  /** Told about batches the sender failed or gave up on; the records stay PENDING for the sweeper. */
  readonly onProblem: (message: string, error?: unknown) => void;
  readonly batchSize?: number;
  readonly parallelism?: number;
  readonly retryAttempts?: number;
  readonly retryDelayMs?: number;
}

/**
 * Stands in for DynamoDB Streams, which dynalite lacks: the runtime hands it the ids of records
 * ingest just inserted, and it invokes the sender with the stream event the deployed event source
 * mapping would deliver: the items' new images read right after the insert, filtered to
 * `INSERT` + `state = PENDING`, up to 10 per batch, two batches at a time, failed items retried
 * from the first failure (`ReportBatchItemFailures`), a failing batch bisected, three retries.
 * Then it gives up, like the deployed failure destination, and the sweeper sends the records.
 *
 * @example
 * ```ts
 * const feeder = new StreamFeeder({ client, source, sender: handlers.sender, onProblem: (m) => console.warn(m) });
 * feeder.feed(ids); // returns at once; the sender runs in the background
 * ```
 */
export class StreamFeeder {
  readonly #options: Required<Omit<StreamFeederOptions, 'client' | 'source' | 'sender' | 'onProblem'>> & StreamFeederOptions;
  readonly #queue: string[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  readonly #stopping = new AbortController();
  #sequence = 100_000_000_000_000_000_000n;
  #scheduled = false;

  public constructor(options: StreamFeederOptions) {
    this.#options = { ...STREAM_DEFAULTS, ...options };
  }

  /** Queues new record ids; ids arriving in the same tick share a batch. */
  public feed(ids: readonly string[]): void {
    if (this.#stopping.signal.aborted || ids.length === 0) return;
    this.#queue.push(...ids);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#pump();
    });
  }

  /** Starts nothing new; records still queued stay PENDING in the store for the sweeper or the next start. */
  public stop(): void {
    this.#stopping.abort();
    this.#queue.length = 0;
  }

  /** Resolves when nothing fed so far is still queued or in flight. */
  public async idle(): Promise<void> {
    while (this.#scheduled || this.#inFlight.size > 0) {
      if (this.#scheduled) await new Promise((resolve) => setImmediate(resolve));
      else await Promise.allSettled([...this.#inFlight]);
    }
  }

  #pump(): void {
    while (!this.#stopping.signal.aborted && this.#inFlight.size < this.#options.parallelism && this.#queue.length > 0) {
      const ids = this.#queue.splice(0, this.#options.batchSize);
      const batch = this.#deliver(ids).finally(() => {
        this.#inFlight.delete(batch);
        this.#pump();
      });
      this.#inFlight.add(batch);
    }
  }

  async #deliver(ids: readonly string[]): Promise<void> {
    let records: DynamoDBRecord[];
    try {
      const images = await Promise.all(ids.map(async (id) => await this.#newImage(id)));
      records = images.flatMap((image) => (image?.[TABLE.indexes.byState.partitionKey]?.S === MessageState.Pending ? [this.#record(image)] : []));
    } catch (error) {
      this.#options.onProblem(`stream: could not read ${ids.length} new record(s); the sweeper will send them`, error);
      return;
    }
    if (records.length > 0) await this.#invoke(records, 0);
  }

  async #newImage(id: string): Promise<Record<string, AttributeValue> | undefined> {
    const { Item } = await this.#options.client.send(
      new GetItemCommand({ TableName: this.#options.source.tableName, Key: messageKey(id), ConsistentRead: true }),
    );
    return Item;
  }

  #record(image: Record<string, AttributeValue>): DynamoDBRecord {
    this.#sequence += 1n;
    return insertRecord(image, String(this.#sequence), this.#options.source);
  }

  async #invoke(records: readonly DynamoDBRecord[], attempt: number): Promise<void> {
    let retry: readonly (readonly DynamoDBRecord[])[];
    try {
      const result = await this.#options.sender(streamEvent(records), lambdaContext('sender', HANDLER_TIMEOUT_MS.sender));
      const failed = new Set((result?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      if (failed.size === 0) return;
      // As the event source mapping does: everything from the first failed record on is retried.
      const first = records.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
      retry = [records.slice(Math.max(first, 0))];
    } catch (error) {
      if (attempt >= this.#options.retryAttempts) {
        this.#options.onProblem(`stream: the sender failed on ${records.length} record(s) ${attempt + 1} times; the sweeper will send them`, error);
        return;
      }
      // bisectBatchOnError: a poisoned record ends up alone instead of holding back the batch.
      const half = Math.ceil(records.length / 2);
      retry = records.length > 1 ? [records.slice(0, half), records.slice(half)] : [records];
    }
    if (attempt >= this.#options.retryAttempts) {
      this.#options.onProblem(`stream: gave up on ${retry.flat().length} record(s) after ${attempt + 1} attempts; the sweeper will send them`);
      return;
    }
    try {
      await sleep(this.#options.retryDelayMs, undefined, { signal: this.#stopping.signal });
    } catch {
      return; // stopping: the records are PENDING in the store, so nothing is lost.
    }
    for (const part of retry) await this.#invoke(part, attempt + 1);
  }
}
