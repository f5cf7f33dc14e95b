import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  ScanCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { createStore, ensureTable, type MessageStore, type NewMessage, TABLE } from '../../../functions/store';
import type { Dynalite } from '../../helpers/dynalite';

export const T0 = new Date('2025-03-01T10:00:00.000Z');
export const at = (offsetMs: number): Date => new Date(T0.getTime() + offsetMs);

export const message = (overrides: Partial<NewMessage> = {}): NewMessage => ({
  index: 0,
  part: 1,
  parts: 1,
  text: 'Order #42 shipped',
  to: ['255712345678'],
  encoding: 'GSM-7',
  characters: 17,
  segments: 1,
  delivery: 'at-most-once',
  ...overrides,
});

export const messages = (count: number, overrides: Partial<NewMessage> = {}): NewMessage[] =>
  Array.from({ length: count }, (_, index) => message({ index, text: `message ${index}`, ...overrides }));

export interface TestTable {
  readonly tableName: string;
  readonly store: MessageStore;
  /** Every item in the table, for asserting what was (not) written. */
  scan(): Promise<Record<string, AttributeValue>[]>;
  rawItem(pk: string, sk: string): Promise<Record<string, AttributeValue> | undefined>;
  /** A store on the same table through another client (and a spend window of its own). */
  storeWith(client: DynamoDBClient, options?: { readonly spendWindowMs?: number }): MessageStore;
}

/** A fresh table per test keeps tests independent on one server. */
export const newTable = async (db: Dynalite): Promise<TestTable> => {
  const tableName = `store-${randomUUID()}`;
  await ensureTable(db.client, tableName);
  // DynamoDB Local deletes expired items within seconds (AWS within days, dynalite never): the tests' records are dated 2025.
  if (db.engine === 'dynamodb-local')
    await db.client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE.timeToLive, Enabled: false },
      }),
    );
  // A clock that never moves: a test that forgets to pass `now` still gets a fixed time.
  const storeWith = (client: DynamoDBClient, options: { readonly spendWindowMs?: number } = {}) =>
    createStore({ client, tableName, clock: () => T0, ...options });
  return {
    tableName,
    store: storeWith(db.client),
    storeWith,
    scan: async () => {
      const items: Record<string, AttributeValue>[] = [];
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await db.client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      return items;
    },
    rawItem: async (pk, sk) =>
      (await db.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: pk }, sk: { S: sk } } }))).Item,
  };
};

export const kinds = (items: readonly Record<string, AttributeValue>[], kind: string) =>
  items.filter((item) => item.kind?.S === kind);

let sentCount = 0;

/** Records one message of `route` as sent at `now`, the SMS service having deducted `deducted`: what the spend views add up. */
export const sentRecord = async (
  store: MessageStore,
  { route, deducted, now }: { readonly route: string; readonly deducted: number; readonly now: Date },
): Promise<string> => {
  sentCount += 1;
  const {
    ids: [id],
  } = await store.acceptWebhook({
    route,
    dedupeKey: `sent-${sentCount}`,
    windowSeconds: 60,
    messages: [message()],
    now,
  });
  const claimed = await store.claimMessage(id!, { now });
  await store.settle(
    id!,
    claimed!.claimToken!,
    { state: 'SENT', result: { deducted, remainingBalance: 1000, message: 'ok', senderId: 'RELAY', recipients: [] } },
    { now },
  );
  return id!;
};

/** Accepts one message per entry, the n-th at n seconds past T0, and returns the ids in order. */
export const acceptEach = async (store: MessageStore, routes: readonly string[]): Promise<string[]> => {
  const ids: string[] = [];
  for (const [n, route] of routes.entries()) {
    const {
      ids: [id],
    } = await store.acceptWebhook({
      route,
      dedupeKey: `k${n}`,
      windowSeconds: 60,
      messages: [message({ text: `m${n}` })],
      now: at(n * 1000),
    });
    ids.push(id ?? '');
  }
  return ids;
};
