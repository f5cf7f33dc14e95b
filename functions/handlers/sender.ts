import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { sendMessage } from '../relay/sender';
import { MessageState } from '../store';
import { prepareOnLambda } from './wiring/context';
import { SEND_MARGIN_MS, SENDER_CONCURRENCY } from '../core/defaults';
import { forEachConcurrently } from '../relay/concurrency';
import { invoke, remainingMs } from './wiring/invoke';
import { sleepUntil } from '../relay/ports';

await prepareOnLambda();

export { SENDER_CONCURRENCY } from '../core/defaults';

/**
 * The sender, on the table's stream, one event source mapping per lane (filtered to INSERTs of
 * PENDING messages, to redrives and to woken records of that lane, see {@link messageIdToSend}). Sends each new or redriven message with `sendMessage`, which claims it first, so a redelivered batch never sends twice.
 * Records that throw (the store unreachable) or are not started for lack of time are returned as
 * `batchItemFailures` (partial batch response): the stream retries from the first of them, and the
 * records already settled are skipped by their claim.
 *
 * Retries on time: a send that goes back to PENDING (certainly not sent, or any failure on an
 * at-least-once route) is sent again by this invocation at its `nextAttemptAt` (5 s, 10 s, … by
 * default) while the invocation can still wait for it and give it the provider's time-out plus
 * `SEND_MARGIN_MS`; a later one (40 s on, in a 60 s sender) is left to the sweeper.
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
    const budgetMs = context.config.settings.provider.timeoutMs + SEND_MARGIN_MS;
    const failed: DynamoDBRecord[] = [];
    let retries: Retry[] = [];
    const onRetry = (id: string) => (at: Date) => {
      retries.push({ id, at });
    };
    await forEachConcurrently(event.Records ?? [], SENDER_CONCURRENCY, async (change) => {
      const id = messageIdToSend(change);
      if (id === undefined) {
        logger.debug('stream record skipped: not a new or redriven message', {
          eventName: change.eventName,
          eventID: change.eventID,
        });
        return;
      }
      if (remainingMs(lambdaContext) < budgetMs) {
        failed.push(change);
        logger.warn('send not started: too little time left in this invocation', { id });
        return;
      }
      try {
        await sendMessage(context, id, { onRetry: onRetry(id) });
      } catch (error) {
        failed.push(change);
        logger.error('send failed; the stream will retry it', { id, error });
      }
    });
    // Retries on time: a retry due while this invocation can still wait for it and send is sent
    // here, at its backoff; a later one stays PENDING for the sweeper. The batch is already settled,
    // so a failure here is logged, never reported: the record waits in the table either way.
    while (retries.length > 0) {
      const round = retries.sort((a, b) => a.at.getTime() - b.at.getTime());
      retries = [];
      await forEachConcurrently(round, SENDER_CONCURRENCY, async ({ id, at }) => {
        if (remainingMs(lambdaContext) - Math.max(0, at.getTime() - Date.now()) < budgetMs) {
          logger.info('retry left to the sweeper: due after this invocation could send it', {
            id,
            nextAttemptAt: at.toISOString(),
          });
          return;
        }
        await sleepUntil(at);
        try {
          await sendMessage(context, id, { onRetry: onRetry(id) });
        } catch (error) {
          logger.error('retry failed; the sweeper sends it', { id, error });
        }
      });
    }
    const batchItemFailures = failed.map((change) => ({ itemIdentifier: change.dynamodb?.SequenceNumber ?? '' }));
    // Without a sequence number nothing can be reported per item: failing the whole batch is safe,
    // since every record is claimed before it is sent.
    if (batchItemFailures.some(({ itemIdentifier }) => itemIdentifier === ''))
      throw new Error('a failed stream record has no sequence number');
    return { batchItemFailures };
  });
}

/** A record sent back to PENDING by this invocation, due at `at`. */
interface Retry {
  readonly id: string;
  readonly at: Date;
}

/**
 * The message id of a record the sender should take: an INSERT of a message, a MODIFY that left
 * a message PENDING with no attempt yet (a redrive: the store's `requeue` resets `attempts`; a
 * retry or a recovered send is PENDING after an attempt), or a MODIFY of a PENDING message with
 * `wokenAt` (the sweeper woke it: it waited through an outage, or its retry is past this sender's
 * time-out; the claim removes `wokenAt`). `undefined` for anything else (the
 * sender's own updates, the dedupe guard's INSERT when no stream filter removed it, as locally).
 * The stream mapping's filters (infra) say the same, so nothing else invokes the sender.
 *
 * @example
 * ```ts
 * messageIdToSend({ eventName: 'INSERT', dynamodb: { NewImage: { id: { S: '01J…' } } } }); // '01J…'
 * messageIdToSend({ eventName: 'MODIFY', dynamodb: { NewImage: { id: { S: '01J…' }, state: { S: 'PENDING' }, attempts: { N: '0' } } } }); // '01J…'
 * ```
 */
export function messageIdToSend(change: DynamoDBRecord): string | undefined {
  const image = change.dynamodb?.NewImage;
  const pending = change.eventName === 'MODIFY' && image?.['state']?.S === MessageState.Pending;
  const redriven = pending && image['attempts']?.N === '0';
  const woken = pending && image['wokenAt']?.S !== undefined;
  if (change.eventName !== 'INSERT' && !redriven && !woken) return undefined;
  const id = image?.['id']?.S;
  return id === undefined || id === '' ? undefined : id;
}
