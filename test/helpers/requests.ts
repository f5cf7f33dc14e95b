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
