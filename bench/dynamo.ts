/**
 * `dynamoPerSms`: the DynamoDB requests and capacity of the accept-and-send path, one webhook that
 * makes one SMS: `ingestWebhook` then `sendMessage`, in process, on dynalite and a sandbox, with the
 * relay context wired by hand as the relay's own tests wire it.
 *
 * A client middleware adds `ReturnConsumedCapacity: 'TOTAL'` to every data command and sums the
 * `ConsumedCapacity` DynamoDB answers with. dynalite answers it for GetItem, PutItem, UpdateItem,
 * DeleteItem and the batch commands, for the table only: it reports no global secondary index
 * units and none for Query. Index writes are therefore estimated separately, and labelled so, by
 * DynamoDB's documented rule (an index entry put or deleted costs one write of the projected item
 * size, an update that changes an index key costs a delete and a put), from each index's projected
 * attributes (`TABLE.indexes`); `writeUnits` is the table's plus the indexes'.
 *
 * The same loop times each call, for the Lambda durations the cost is computed from.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AttributeValue, ConsumedCapacity, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loadConfig } from '../functions/core/config/load';
import { createFileSecretSource } from '../functions/adapters/secrets';
import { createSmsClientSource } from '../functions/adapters/sms';
import { ingestWebhook } from '../functions/relay/ingest';
import { DEFAULT_RETRY_POLICY, type RelayContext } from '../functions/relay/ports';
import { SendOutcome, sendMessage } from '../functions/relay/sender';
import { createStore, ensureTable } from '../functions/store';
import { TABLE } from '../functions/store/table';
import { startSandbox } from '../local/sandbox/server';
import { clientPool, startDynalite } from '../test/helpers/dynalite';
import { startDynamoDbLocal } from '../test/helpers/dynamodb-local';
import { benchConfigYaml, benchSecrets, SENDER_ID } from './relay-config';
import { median, round } from './stats';

export interface DynamoPerSms {
  readonly requests: number;
  /** The table's write units as DynamoDB (here dynalite) reported them, plus the index writes estimated. */
  readonly writeUnits: number;
  /** As reported: table writes only. */
  readonly tableWriteUnits: number;
  readonly readUnits: number;
  /** Not reported by dynalite: estimated by the documented rule, see the module comment. */
  readonly indexWriteUnitsEstimated: number;
}

export interface DynamoRun {
  readonly perSms: DynamoPerSms;
  /** Median wall time of one `ingestWebhook` / `sendMessage` call, ms. */
  readonly ingestMs: number;
  readonly senderMs: number;
  /** Requests per SMS by command, and those DynamoDB answered without `ConsumedCapacity`. */
  readonly byCommand: Readonly<Record<string, number>>;
  readonly unreported: number;
}

const DATA_COMMANDS = new Set([
  'GetItemCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'QueryCommand',
  'BatchGetItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);
const READ_COMMANDS = new Set(['GetItemCommand', 'QueryCommand', 'BatchGetItemCommand']);

interface Tally {
  requests: number;
  writeUnits: number;
  readUnits: number;
  indexWriteUnits: number;
  unreported: number;
  byCommand: Record<string, number>;
}

const emptyTally = (): Tally => ({
  requests: 0,
  writeUnits: 0,
  readUnits: 0,
  indexWriteUnits: 0,
  unreported: 0,
  byCommand: {},
});

type WriteInput = {
  Item?: Record<string, AttributeValue>;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  TransactItems?: { Put?: { Item?: Record<string, AttributeValue> } }[];
};

/** DynamoDB's item size: names and values in UTF-8 bytes, numbers about 1 byte per 2 digits, 3 bytes per list or map. */
function attributeSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-|\.|^0+/g, '').length / 2) + 1;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.L !== undefined) return 3 + value.L.reduce((sum, each) => sum + 1 + attributeSize(each), 0);
  if (value.M !== undefined)
    return (
      3 +
      Object.entries(value.M).reduce((sum, [name, each]) => sum + 1 + Buffer.byteLength(name) + attributeSize(each), 0)
    );
  if (value.SS !== undefined) return value.SS.reduce((sum, each) => sum + Buffer.byteLength(each), 0);
  return 0;
}

/** The write units of one index entry of `item`: its projected attributes' size, per started KB, at least 1. */
export function indexEntryUnits(
  index: (typeof TABLE.indexes)[keyof typeof TABLE.indexes],
  item: Record<string, AttributeValue> | undefined,
): number {
  if (item === undefined) return 1;
  const projected = new Set<string>([
    TABLE.partitionKey,
    TABLE.sortKey,
    index.partitionKey,
    index.sortKey,
    ...index.attributes,
  ]);
  let bytes = 0;
  for (const [name, value] of Object.entries(item))
    if (projected.has(name)) bytes += Buffer.byteLength(name) + attributeSize(value);
  return Math.max(1, Math.ceil(bytes / 1024));
}

/**
 * Index writes of one write, by DynamoDB's rule: a put of an item carrying an index's keys adds an
 * index entry; an update that sets an index key deletes the old entry and puts a new one. An entry
 * costs its projected attributes' size (`item`: the item as written, when the write returned it).
 */
export function indexWriteUnits(
  command: string,
  input: WriteInput,
  item: Record<string, AttributeValue> | undefined,
): number {
  // A transaction's puts add their entries as puts do (counted at the standard rate; the doubled
  // transactional rate applies to the table's items, which the table units report).
  if (command === 'TransactWriteItemsCommand') {
    return (input.TransactItems ?? []).reduce(
      (sum, each) => sum + (each.Put === undefined ? 0 : indexWriteUnits('PutItemCommand', { ...each.Put }, undefined)),
      0,
    );
  }
  let units = 0;
  for (const index of Object.values(TABLE.indexes)) {
    if (
      command === 'PutItemCommand' &&
      input.Item?.[index.partitionKey] !== undefined &&
      input.Item[index.sortKey] !== undefined
    )
      units += indexEntryUnits(index, input.Item);
    if (command === 'UpdateItemCommand') {
      const named = new Set(Object.values(input.ExpressionAttributeNames ?? {}));
      const expression = input.UpdateExpression ?? '';
      const sets = (name: string): boolean => named.has(name) || new RegExp(`\\b${name}\\s*=`).test(expression);
      const removed = (name: string): boolean =>
        item !== undefined && item[name] === undefined && /\bREMOVE\b/.test(expression) && named.has(name);
      // A sparse index (`byDue`): an item without its keys after the update has no entry; one whose
      // key the update removed loses its old entry (one unit).
      const listedAfter =
        item === undefined || (item[index.partitionKey] !== undefined && item[index.sortKey] !== undefined);
      if (!listedAfter) units += removed(index.partitionKey) || removed(index.sortKey) ? 1 : 0;
      else if (sets(index.partitionKey) || sets(index.sortKey)) units += 1 + indexEntryUnits(index, item);
    }
  }
  return units;
}

/** A store engine for the bench: dynalite, or AWS's DynamoDB Local (Java), which reports index units. */
async function startEngine(
  engine: 'dynalite' | 'dynamodb-local',
): Promise<{ readonly client: DynamoDBClient; newClient(): DynamoDBClient; close(): Promise<void> }> {
  if (engine === 'dynalite') return await startDynalite();
  const local = await startDynamoDbLocal();
  const pool = clientPool(local.endpoint);
  return {
    client: pool.client,
    newClient: pool.newClient,
    close: async () => {
      pool.destroy();
      await local.stop();
    },
  };
}

/**
 * @param engine `dynamodb-local`: AWS's DynamoDB Local, asked for `INDEXES`: it reports each
 *   index's units, so `indexWriteUnitsEstimated` is then measured (named so for one shape of result).
 */
export async function runDynamo({
  webhooks = 200,
  warmup = 10,
  engine = 'dynalite' as 'dynalite' | 'dynamodb-local',
} = {}): Promise<DynamoRun> {
  const apiKey = `bench-${randomBytes(8).toString('hex')}`;
  const token = `bench-${randomBytes(12).toString('hex')}`;
  const db = await startEngine(engine);
  const sandbox = await startSandbox({ apiKey, balance: 1_000_000_000, rate: 20, senderIds: [SENDER_ID] });
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-bench-dynamo-'));
  try {
    const tableName = `bench-${randomUUID()}`;
    await ensureTable(db.client, tableName);
    let tally = emptyTally();
    const client = db.newClient();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? '';
        if (!DATA_COMMANDS.has(command)) return next(args);
        const input = args.input as WriteInput & { ReturnConsumedCapacity?: string };
        input.ReturnConsumedCapacity = engine === 'dynalite' ? 'TOTAL' : 'INDEXES';
        tally.requests += 1;
        tally.byCommand[command] = (tally.byCommand[command] ?? 0) + 1;
        const result = await next(args);
        const reported = (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] })
          .ConsumedCapacity;
        if (reported === undefined) tally.unreported += 1;
        const each = [reported ?? []].flat();
        const indexUnits = each.reduce(
          (sum, one) =>
            sum +
            Object.values(one.GlobalSecondaryIndexes ?? {}).reduce(
              (total, index) => total + (index.CapacityUnits ?? 0),
              0,
            ),
          0,
        );
        const units = each.reduce((sum, one) => sum + (one.CapacityUnits ?? 0), 0) - indexUnits;
        if (READ_COMMANDS.has(command)) tally.readUnits += units;
        else {
          tally.writeUnits += units;
          tally.indexWriteUnits +=
            engine === 'dynalite'
              ? indexWriteUnits(
                  command,
                  input,
                  (result.output as { Attributes?: Record<string, AttributeValue> }).Attributes,
                )
              : indexUnits;
        }
        return result;
      },
      { step: 'initialize', name: 'benchConsumedCapacity' },
    );

    const secretsPath = join(dir, 'secrets.json');
    writeFileSync(secretsPath, benchSecrets(apiKey, token));
    const loaded = loadConfig(benchConfigYaml(sandbox.baseUrl), 'bench.yaml');
    const secrets = createFileSecretSource(secretsPath);
    const discard = (): void => {};
    const context: RelayContext = {
      config: loaded,
      store: createStore({ client, tableName }),
      secrets,
      sms: createSmsClientSource({
        secrets,
        baseUrl: loaded.settings.provider.baseUrl,
        timeoutMs: loaded.settings.provider.timeoutMs,
      }),
      logger: { debug: discard, info: discard, warn: discard, error: discard },
      metrics: { add: discard },
      clock: () => new Date(),
      policy: DEFAULT_RETRY_POLICY,
    };

    const ingestMs: number[] = [];
    const senderMs: number[] = [];
    let sent = 0;
    for (let index = 0; index < warmup + webhooks; index += 1) {
      if (index === warmup) tally = emptyTally();
      const body = new TextEncoder().encode(JSON.stringify({ message: `dynamo ${index} ${randomUUID()}` }));
      let started = performance.now();
      const answer = await ingestWebhook(context, {
        routeId: 'bench',
        body,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        query: {},
        receivedAt: new Date(),
      });
      ingestMs.push(performance.now() - started);
      const ids = answer.body['ids'] as string[] | undefined;
      if (answer.status !== 202 || ids?.length !== 1)
        throw new Error(`ingest answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      started = performance.now();
      const outcome = await sendMessage(context, ids[0]!);
      // As the Lambda sender's invocation (one SMS at prod's rates) writes its spend window before it returns.
      await context.store.flushSpend();
      senderMs.push(performance.now() - started);
      if (outcome !== SendOutcome.Sent) throw new Error(`sendMessage: ${outcome}`);
      if (index >= warmup) sent += 1;
    }
    const per = (value: number): number => round(value / sent, 2);
    return {
      perSms: {
        requests: per(tally.requests),
        writeUnits: per(tally.writeUnits + tally.indexWriteUnits),
        tableWriteUnits: per(tally.writeUnits),
        readUnits: per(tally.readUnits),
        indexWriteUnitsEstimated: per(tally.indexWriteUnits),
      },
      ingestMs: round(median(ingestMs.slice(warmup)), 2),
      senderMs: round(median(senderMs.slice(warmup)), 2),
      byCommand: Object.fromEntries(
        Object.entries(tally.byCommand).map(([command, count]) => [command.replace(/Command$/, ''), per(count)]),
      ),
      unreported: per(tally.unreported),
    };
  } finally {
    await sandbox.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
