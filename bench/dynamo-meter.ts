/**
 * Counts the DynamoDB capacity the relay's own requests would consume on AWS (on-demand), by
 * sitting between the handlers' DynamoDB client and dynalite as an HTTP proxy: whatever client the
 * handlers build from `DYNAMODB_ENDPOINT`, every command goes through here. For each write the
 * proxy reads the item before and after (its own consistent GetItem straight to dynalite, not
 * counted), so it can apply DynamoDB's rules:
 *
 * - item size: attribute names plus values (strings and binaries by byte length, numbers about one
 *   byte per two significant digits plus one, lists and maps 3 bytes plus their elements);
 * - a write consumes ceil(size / 1 KB) write request units, size being the larger of the item
 *   before and after; a write whose condition fails still consumes units for the item's size;
 * - every global secondary index whose key attributes the item has (before or after) costs more
 *   writes: a put of the new index entry, a delete of the old, both when an index key changes, one
 *   update when only projected attributes change — for an index projecting `ALL` (`byState`);
 *   a `KEYS_ONLY` one (`byRoute`) projects no other attribute, so such a change costs it nothing,
 *   and its entries (keys only) are one unit each;
 * - a strongly consistent read consumes ceil(size / 4 KB) read request units (a Query: of all items
 *   returned together; a BatchGetItem: of each item, a key without an item as an empty one), an
 *   eventually consistent one half that.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE } from '../functions/store/table';

type Item = Record<string, AttributeValue>;

/** Bytes of `text` in UTF-8. */
const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

/** DynamoDB's size of a number: about one byte per two significant digits, plus one. */
export function numberSize(value: string): number {
  const digits = value.replace(/^[-+]/, '').replace(/[eE].*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

/** DynamoDB's size of one attribute value (without its name). */
export function attributeValueSize(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  // On the wire (JSON) binaries are base64 strings; in the SDK's shapes they are bytes.
  const binary = value.B as Uint8Array | string | undefined;
  if (binary !== undefined) return typeof binary === 'string' ? Buffer.from(binary, 'base64').byteLength : binary.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, entry) => sum + utf8(entry), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, entry) => sum + numberSize(entry), 0);
  if (value.BS !== undefined) return (value.BS as (Uint8Array | string)[]).reduce((sum, entry) => sum + (typeof entry === 'string' ? Buffer.from(entry, 'base64').byteLength : entry.byteLength), 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, entry) => sum + attributeValueSize(entry), 0);
  if (value.M !== undefined) return 3 + itemSize(value.M);
  return 0;
}

/** DynamoDB's size of an item: for each attribute, its name's bytes plus its value's size. */
export function itemSize(item: Item | undefined): number {
  if (item === undefined) return 0;
  return Object.entries(item).reduce((sum, [name, value]) => sum + utf8(name) + attributeValueSize(value), 0);
}

export interface IndexDefinition {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  /** What the index holds besides the keys. */
  readonly projection: 'ALL' | 'KEYS_ONLY';
}

/** The table's global secondary indexes (`functions/store/table.ts`), with their projections. */
export const TABLE_INDEXES: readonly IndexDefinition[] = Object.values(TABLE.indexes);

const writeUnitsOf = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));

/** The attributes a keys-only index entry holds: the table's keys and the index's. */
const indexKeys = (item: Item | undefined, index: IndexDefinition): Item =>
  Object.fromEntries(
    [TABLE.partitionKey, TABLE.sortKey, index.partitionKey, index.sortKey].flatMap((name) => (item?.[name] === undefined ? [] : [[name, item[name]]])),
  );

const keyOf = (item: Item | undefined, index: IndexDefinition): string | undefined => {
  const partition = item?.[index.partitionKey];
  const sort = item?.[index.sortKey];
  return partition === undefined || sort === undefined ? undefined : JSON.stringify([partition, sort]);
};

export interface WriteUnits {
  readonly table: number;
  readonly indexes: Readonly<Record<string, number>>;
}

/**
 * The write request units of one table write, given the item before and after it
 * (`after === before` for a write whose condition failed).
 *
 * @example
 * ```ts
 * writeUnits(undefined, messageItem, false); // { table: 1, indexes: { byState: 1, byRoute: 1 } }
 * writeUnits(pendingItem, sendingItem, false); // { table: 1, indexes: { byState: 2, byRoute: 0 } }
 * ```
 */
export function writeUnits(before: Item | undefined, after: Item | undefined, conditionFailed: boolean, indexes: readonly IndexDefinition[] = TABLE_INDEXES): WriteUnits {
  const beforeSize = itemSize(before);
  const afterSize = itemSize(after);
  const table = writeUnitsOf(Math.max(beforeSize, afterSize));
  const perIndex: Record<string, number> = {};
  for (const index of indexes) perIndex[index.name] = 0;
  if (conditionFailed) return { table, indexes: perIndex };
  const changed = JSON.stringify(before ?? null) !== JSON.stringify(after ?? null);
  for (const index of indexes) {
    const oldKey = keyOf(before, index);
    const newKey = keyOf(after, index);
    const all = index.projection === 'ALL';
    // An index entry's size: the item's, or with keys only, the keys' (table and index).
    const entryUnits = (item: Item | undefined, size: number): number => writeUnitsOf(all ? size : itemSize(indexKeys(item, index)));
    let units = 0;
    if (oldKey === undefined && newKey !== undefined) units = entryUnits(after, afterSize);
    else if (oldKey !== undefined && newKey === undefined) units = entryUnits(before, beforeSize);
    else if (oldKey !== undefined && newKey !== undefined && oldKey !== newKey) units = entryUnits(before, beforeSize) + entryUnits(after, afterSize);
    // Same key: with ALL projected, any change of the item is an update of the index entry; with
    // keys only, the entry does not change.
    else if (oldKey !== undefined && changed && all) units = writeUnitsOf(afterSize);
    perIndex[index.name] = units;
  }
  return { table, indexes: perIndex };
}

/** Read request units of a read returning items of `sizes` bytes (a missing item still costs one). */
export function readUnits(sizes: readonly number[], consistent: boolean): number {
  const total = sizes.reduce((sum, size) => sum + size, 0);
  const units = Math.max(1, Math.ceil(total / 4096));
  return consistent ? units : units / 2;
}

export interface OperationRecord {
  readonly phase: string;
  readonly operation: string;
  /** What kind of item: the partition key's prefix (MSG, DEDUPE, LIMIT, SPEND, BALANCE) or the index queried. */
  readonly item: string;
  readonly wru: number;
  readonly indexWru: number;
  readonly rru: number;
  readonly itemBytes: number;
  readonly conditionFailed: boolean;
}

export interface DynamoMeter {
  /** The proxy's URL: give it to the handlers as `DYNAMODB_ENDPOINT`. */
  readonly endpoint: string;
  /** Operations after this belong to `phase` (`ingest`, `sender`). */
  setPhase(phase: string): void;
  records(): readonly OperationRecord[];
  close(): Promise<void>;
}

/** A label for the item a key addresses: `MSG`, `DEDUPE`, `LIMIT W`, `SPEND`, `BALANCE`… */
export function itemKind(key: Item | undefined): string {
  const pk = key?.[TABLE.partitionKey]?.S;
  if (pk === undefined) return '?';
  const prefix = pk.split('#')[0] ?? pk;
  const sk = key?.[TABLE.sortKey]?.S;
  return prefix === 'LIMIT' && sk !== undefined ? `LIMIT ${sk.split('#')[0]}` : prefix;
}

const readBody = async (stream: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/**
 * Starts the metering proxy in front of `target` (dynalite). `direct` is a client for dynalite
 * itself, used for the before/after reads. Requests should be sequential for exact before/after
 * images (the cost benchmark sends one at a time).
 */
export async function startDynamoMeter(target: string, direct: DynamoDBClient): Promise<DynamoMeter> {
  const targetUrl = new URL(target);
  const records: OperationRecord[] = [];
  let phase = 'none';

  const getItem = async (table: string, key: Item): Promise<Item | undefined> =>
    (await direct.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  const primaryKey = (item: Item): Item => ({ [TABLE.partitionKey]: item[TABLE.partitionKey]!, [TABLE.sortKey]: item[TABLE.sortKey]! });

  const forward = async (incoming: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> =>
    await new Promise((resolvePromise, reject) => {
      const outgoing = httpRequest(
        { hostname: targetUrl.hostname, port: targetUrl.port, path: incoming.url, method: incoming.method, headers: { ...incoming.headers, host: targetUrl.host } },
        (response) => {
          void readBody(response).then((responseBody) => resolvePromise({ status: response.statusCode ?? 500, headers: response.headers, body: responseBody }), reject);
        },
      );
      outgoing.once('error', reject);
      outgoing.end(body);
    });

  const server: Server = createServer((incoming, outgoing) => {
    void (async () => {
      const body = await readBody(incoming);
      const operation = String(incoming.headers['x-amz-target'] ?? '').split('.').pop() ?? 'unknown';
      const input = body.length > 0 ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
      const table = String(input['TableName'] ?? '');
      let before: Item | undefined;
      let key: Item | undefined;
      if (operation === 'PutItem') key = primaryKey(input['Item'] as Item);
      else if (operation === 'UpdateItem' || operation === 'DeleteItem') key = input['Key'] as Item;
      if (key !== undefined) before = await getItem(table, key);

      const response = await forward(incoming, body);
      const output = response.body.length > 0 ? (JSON.parse(response.body.toString('utf8')) as Record<string, unknown>) : {};
      const conditionFailed = response.status === 400 && String(output['__type'] ?? '').endsWith('ConditionalCheckFailedException');

      if (key !== undefined) {
        const after = conditionFailed ? before : await getItem(table, key);
        const units = writeUnits(before, conditionFailed ? (operation === 'PutItem' ? (input['Item'] as Item) : before) : after, conditionFailed);
        const indexWru = Object.values(units.indexes).reduce((sum, value) => sum + value, 0);
        records.push({ phase, operation, item: itemKind(key), wru: units.table, indexWru, rru: 0, itemBytes: Math.max(itemSize(before), itemSize(after)), conditionFailed });
      } else if (operation === 'GetItem') {
        const size = itemSize(output['Item'] as Item | undefined);
        records.push({ phase, operation, item: itemKind(input['Key'] as Item | undefined), wru: 0, indexWru: 0, rru: readUnits([size], input['ConsistentRead'] === true), itemBytes: size, conditionFailed: false });
      } else if (operation === 'BatchGetItem') {
        // Each item is rounded up on its own; a key without an item still costs a unit.
        const requests = Object.entries((input['RequestItems'] ?? {}) as Record<string, { Keys?: Item[]; ConsistentRead?: boolean }>);
        for (const [name, request] of requests) {
          const returned = ((output['Responses'] as Record<string, Item[]> | undefined)?.[name] ?? []).map(itemSize);
          const unprocessed = ((output['UnprocessedKeys'] as Record<string, { Keys?: Item[] }> | undefined)?.[name]?.Keys ?? []).length;
          const missing = Math.max(0, (request.Keys ?? []).length - unprocessed - returned.length);
          const sizes = [...returned, ...Array.from({ length: missing }, () => 0)];
          const rru = sizes.reduce((sum, size) => sum + readUnits([size], request.ConsistentRead === true), 0);
          records.push({ phase, operation, item: itemKind(request.Keys?.[0]), wru: 0, indexWru: 0, rru, itemBytes: returned.reduce((sum, size) => sum + size, 0), conditionFailed: false });
        }
      } else if (operation === 'Query' || operation === 'Scan') {
        const sizes = ((output['Items'] as Item[] | undefined) ?? []).map(itemSize);
        // Index queries are always eventually consistent.
        const consistent = input['ConsistentRead'] === true && input['IndexName'] === undefined;
        records.push({ phase, operation, item: String(input['IndexName'] ?? 'table'), wru: 0, indexWru: 0, rru: readUnits(sizes, consistent), itemBytes: sizes.reduce((sum, size) => sum + size, 0), conditionFailed: false });
      } else {
        records.push({ phase, operation, item: '-', wru: 0, indexWru: 0, rru: 0, itemBytes: 0, conditionFailed: false });
      }

      outgoing.writeHead(response.status, response.headers);
      outgoing.end(response.body);
    })().catch((error: unknown) => {
      outgoing.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
      outgoing.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: String(error) }));
    });
  });
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    setPhase: (next) => {
      phase = next;
    },
    records: () => records,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
    },
  };
}
