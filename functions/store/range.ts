import { type AttributeValue, QueryCommand } from '@aws-sdk/client-dynamodb';
import { type Item, str } from './attributes';
import { lastEvaluatedKey, pages } from './cursor';
import type { StoreTable } from './store-table';
import { TABLE } from './table';

/** A filter applied to the items of a {@link queryAll}. */
export interface RangeFilter {
  readonly expression: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, AttributeValue>;
}

/** One page of a Query or Scan, as the SDK returns it. */
interface ItemPage {
  readonly Items?: Item[];
  readonly LastEvaluatedKey?: Record<string, AttributeValue>;
}

/** Every item of a Query or Scan: `fetchPage` is called with each page's start key until the last. */
export const allPages = async (
  fetchPage: (start: Record<string, AttributeValue> | undefined) => Promise<ItemPage>,
): Promise<Item[]> => {
  const items: Item[] = [];
  for await (const page of pages(fetchPage, lastEvaluatedKey)) items.push(...(page.Items ?? []));
  return items;
};

/** Every item of a partition with a sort key in `[from, to]`, all pages. */
export const queryAll = async (
  table: StoreTable,
  partition: string,
  from: string,
  to: string,
  filter?: RangeFilter,
): Promise<Item[]> =>
  await allPages(
    async (start) =>
      await table.client.send(
        new QueryCommand({
          TableName: table.tableName,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ...(filter === undefined ? {} : { FilterExpression: filter.expression }),
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#sk': TABLE.sortKey, ...filter?.names },
          ExpressionAttributeValues: { ':pk': str(partition), ':from': str(from), ':to': str(to), ...filter?.values },
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      ),
  );
