import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The requests a DynamoDB client sent, by command name (`PutItem`, `UpdateItem`, …). */
export interface RequestCount {
  readonly total: () => number;
  readonly byCommand: () => Readonly<Record<string, number>>;
  readonly reset: () => void;
}

/**
 * Counts every request `client` sends, by a middleware on its stack: what the store really
 * asks of DynamoDB, refused conditional writes included.
 *
 * @example
 * ```ts
 * const requests = countRequests(client);
 * await store.claimMessage(id);
 * expect(requests.byCommand()).toEqual({ UpdateItem: 1 });
 * ```
 */
export function countRequests(client: DynamoDBClient): RequestCount {
  let counts: Record<string, number> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context.commandName ?? 'unknown').replace(/Command$/, '');
      counts[command] = (counts[command] ?? 0) + 1;
      return await next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  return {
    total: () => Object.values(counts).reduce((sum, count) => sum + count, 0),
    byCommand: () => ({ ...counts }),
    reset: () => {
      counts = {};
    },
  };
}

/** The items a DynamoDB client read and wrote, as its requests and answers show them. */
export interface ItemTraffic {
  /** Items the answers returned: `GetItem`'s item, `BatchGetItem`'s, `Query`'s and `Scan`'s pages (a count's: the items it read). */
  readonly itemsRead: () => number;
  /** Single-item writes (`PutItem`, `UpdateItem`, `DeleteItem`) by the item's `pk/sk`. */
  readonly writesTo: (pk: string, sk: string) => number;
  readonly reset: () => void;
}

/**
 * Counts what `client` read and which items it wrote, by a middleware on its stack: how many items
 * a read really cost (its pages included), and whether an item is written on every send.
 *
 * @example
 * ```ts
 * const traffic = countItemTraffic(client);
 * await forecastBalance(store, 90, first, now);
 * expect(traffic.itemsRead()).toBeLessThanOrEqual(10);
 * ```
 */
export function countItemTraffic(client: DynamoDBClient): ItemTraffic {
  let read = 0;
  let writes: Record<string, number> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context.commandName ?? '').replace(/Command$/, '');
      const input = args.input as { Key?: Record<string, { S?: string }>; Item?: Record<string, { S?: string }> };
      if (command === 'PutItem' || command === 'UpdateItem' || command === 'DeleteItem') {
        const key = input.Key ?? input.Item ?? {};
        const name = `${key['pk']?.S}/${key['sk']?.S}`;
        writes[name] = (writes[name] ?? 0) + 1;
      }
      const result = await next(args);
      const output = result.output as {
        Item?: unknown;
        Items?: unknown[];
        ScannedCount?: number;
        Responses?: Record<string, unknown[]>;
      };
      if (command === 'GetItem') read += output.Item === undefined ? 0 : 1;
      // A `Select: COUNT` page returns no items: what it read is its ScannedCount.
      if (command === 'Query' || command === 'Scan') read += output.Items?.length ?? output.ScannedCount ?? 0;
      if (command === 'BatchGetItem')
        read += Object.values(output.Responses ?? {}).reduce((sum, items) => sum + items.length, 0);
      return result;
    },
    { step: 'initialize', name: 'countItemTraffic' },
  );
  return {
    itemsRead: () => read,
    writesTo: (pk, sk) => writes[`${pk}/${sk}`] ?? 0,
    reset: () => {
      read = 0;
      writes = {};
    },
  };
}
