import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { sendMessage } from '../relay/sender';
import { prepareOnLambda } from './wiring/context';
import { SEND_MARGIN_MS, SENDER_CONCURRENCY } from '../core/defaults';
import { forEachConcurrently, invoke, remainingMs } from './wiring/invoke';

await prepareOnLambda();

export { SENDER_CONCURRENCY } from '../core/defaults';

/**
 * The sender, on the table's stream (filtered to INSERTs of PENDING messages). Sends each new
 * message with `sendMessage`, which claims it first, so a redelivered batch never sends twice.
 * Records that throw (the store unreachable) or are not started for lack of time are returned as
 * `batchItemFailures` (partial batch response): the stream retries from the first of them, and the
 * records already settled are skipped by their claim.
 *
 * @example
 * ```ts
 * const { batchItemFailures } = await handler(streamEvent, lambdaContext);
 * ```
 */
export async function handler(event: DynamoDBStreamEvent, lambdaContext?: Context): Promise<DynamoDBBatchResponse> {
  // The container's SMS client, not one per invocation: a warm sender reuses its connection and
  // TLS session (the client never sends on a socket idle past its keep-alive limit).
  return await invoke(lambdaContext, async ({ context, logger }) => {
    const budgetMs = context.config.config.provider.timeoutMs + SEND_MARGIN_MS;
    const failed: DynamoDBRecord[] = [];
    await forEachConcurrently(event.Records ?? [], SENDER_CONCURRENCY, async (record) => {
      const id = insertedMessageId(record);
      if (id === undefined) {
        logger.debug('stream record skipped: not a new message', { eventName: record.eventName, eventID: record.eventID });
        return;
      }
      if (remainingMs(lambdaContext) < budgetMs) {
        failed.push(record);
        logger.warn('send not started: too little time left in this invocation', { id });
        return;
      }
      try {
        await sendMessage(context, id);
      } catch (error) {
        failed.push(record);
        logger.error('send failed; the stream will retry it', { id, error });
      }
    });
    const batchItemFailures = failed.map((record) => ({ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }));
    // Without a sequence number nothing can be reported per item: failing the whole batch is safe,
    // since every record is claimed before it is sent.
    if (batchItemFailures.some(({ itemIdentifier }) => itemIdentifier === '')) throw new Error('a failed stream record has no sequence number');
    return { batchItemFailures };
  });
}

/**
 * The message id of an INSERT of a message record; `undefined` for anything else (updates, the
 * dedupe guard's own INSERT when no stream filter removed it, as locally).
 *
 * @example
 * ```ts
 * insertedMessageId({ eventName: 'INSERT', dynamodb: { NewImage: { id: { S: '01J…' } } } }); // '01J…'
 * ```
 */
export function insertedMessageId(record: DynamoDBRecord): string | undefined {
  if (record.eventName !== 'INSERT') return undefined;
  const id = record.dynamodb?.NewImage?.['id']?.S;
  return id === undefined || id === '' ? undefined : id;
}
