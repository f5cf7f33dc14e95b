import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { type AttributeValue, CreateTableCommand, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import * as DYNAMODB_COMMANDS from '@aws-sdk/client-dynamodb';
import { expect } from 'vitest';
import { createTableInput } from '../../functions/store';
import { listen } from '../../local/http';
import { createDynalite } from '../../local/shared/dynalite';
import { type Dynalite, startDynalite, TEST_ENGINE } from './dynalite';

/**
 * The differential tests' engines: the relay's dynalite (`dynalite`: the local store's engine, with
 * its `TransactWriteItems`, local/shared/dynalite.ts) and AWS's DynamoDB Local (`local`), so
 * `npm run test:aws` only. The same requests go to each; the relay's dynalite must answer as
 * DynamoDB Local (the same outcome, the same error name, the same items; DynamoDB Local words its
 * messages otherwise).
 */

export type Outcome =
  | { readonly ok: Record<string, unknown> }
  | { readonly error: string; readonly message: string; readonly reasons?: unknown };
export type Request = (client: DynamoDBClient, table: string) => Promise<unknown>;
export type EngineName = 'dynalite' | 'local';
/** One request as a store sent it: the command's name and its input. */
export interface RecordedRequest {
  readonly command: string;
  readonly input: Record<string, unknown>;
}

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
export const clientOf = (endpoint: string): DynamoDBClient =>
  new DynamoDBClient({ region: 'local', endpoint, credentials, maxAttempts: 1 });

const itemKey = (item: Record<string, AttributeValue>): string => `${item['pk']?.S}\u0000${item['sk']?.S}`;
const byKey = (items: Record<string, AttributeValue>[]): Record<string, AttributeValue>[] =>
  [...items].sort((a, b) => (itemKey(a) < itemKey(b) ? -1 : 1));

const outcomeOf = async (request: Promise<unknown>): Promise<Outcome> => {
  try {
    const { $metadata: _, ...ok } = (await request) as Record<string, unknown>;
    // BatchGetItem answers its items in no set order, on any engine.
    const responses = ok['Responses'] as Record<string, Record<string, AttributeValue>[]> | undefined;
    if (responses !== undefined)
      ok['Responses'] = Object.fromEntries(Object.entries(responses).map(([table, items]) => [table, byKey(items)]));
    return { ok };
  } catch (error) {
    const { name, message, CancellationReasons } = error as Error & { CancellationReasons?: unknown };
    return { error: name, message, ...(CancellationReasons === undefined ? {} : { reasons: CancellationReasons }) };
  }
};

/** A fresh table of the relay's shape on `client`, the same name on every engine. */
const newTable = async (client: DynamoDBClient, name: string): Promise<void> => {
  await client.send(new CreateTableCommand(createTableInput(name)));
  // dynalite makes a table ACTIVE on a timer even with createTableMs 0; DynamoDB Local at once.
  for (;;) {
    const described = await outcomeOf(client.send(new ScanCommand({ TableName: name, Limit: 1 })));
    if ('ok' in described) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

const itemsOf = async (client: DynamoDBClient, table: string): Promise<Record<string, AttributeValue>[]> => {
  const { Items = [] } = await client.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
  return byKey(Items);
};

/**
 * Only what every engine words the same: the outcome, the error's name, the cancellation codes. A
 * query's or a scan's items as a set: DynamoDB leaves the order of items with equal index sort keys
 * unset (dynalite orders them by the table's key, DynamoDB Local otherwise), and a scan's order is
 * each engine's own.
 */
const comparable = (outcome: Outcome): unknown => {
  if ('error' in outcome)
    return {
      error: outcome.error,
      reasons: (outcome.reasons as { Code?: string; Item?: unknown }[] | undefined)?.map(({ Code, Item }) => ({
        Code,
        Item,
      })),
    };
  const {
    ConsumedCapacity: _,
    Items,
    ...rest
  } = outcome.ok as { ConsumedCapacity?: unknown; Items?: Record<string, AttributeValue>[] };
  return { ok: { ...rest, ...(Items === undefined ? {} : { Items: byKey(Items) }) } };
};

export interface Engines {
  readonly clients: Readonly<Record<EngineName, DynamoDBClient>>;
  /** The relay's dynalite's endpoint (a store made on it here is the one recorded). */
  readonly dynaliteEndpoint: string;
  /**
   * Runs `requests` in order on each engine, each on a fresh table of its own (the engines side by
   * side): they answer alike step by step and leave the same items. Returns the relay's dynalite's
   * answers.
   */
  sameEverywhere(requests: readonly Request[]): Promise<Outcome[]>;
  close(): Promise<void>;
}

/**
 * The relay's dynalite in this process and DynamoDB Local (`npm run test:aws`).
 *
 * @throws {Error} under `npm test`: with one engine there is nothing to compare
 */
export async function startEngines(): Promise<Engines> {
  if (TEST_ENGINE !== 'dynamodb-local')
    throw new Error(
      "the differential tests compare the relay's dynalite with DynamoDB Local: run them with npm run test:aws",
    );
  const dynaliteServer: Server = createDynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const dynaliteEndpoint = `http://127.0.0.1:${await listen(dynaliteServer, { port: 0, host: '127.0.0.1' })}`;
  const local: Dynalite = await startDynalite();
  const clients: Record<EngineName, DynamoDBClient> = { dynalite: clientOf(dynaliteEndpoint), local: local.client };
  // DynamoDB Local is one shared database for the whole run (-sharedDb): a run's own prefix keeps the
  // differential files' tables apart.
  const run = randomUUID().slice(0, 8);
  let tables = 0;

  const sameEverywhere: Engines['sameEverywhere'] = async (requests) => {
    tables += 1;
    const table = `diff-${run}-${tables}`;
    const answers: Partial<Record<EngineName, Outcome[]>> = {};
    const items: Partial<Record<EngineName, unknown>> = {};
    await Promise.all(
      (['dynalite', 'local'] as const).map(async (engine) => {
        const client = clients[engine];
        await newTable(client, table);
        const outcomes: Outcome[] = [];
        for (const request of requests) outcomes.push(await outcomeOf(request(client, table)));
        answers[engine] = outcomes;
        items[engine] = await itemsOf(client, table);
      }),
    );
    expect(answers.local!.map(comparable), 'DynamoDB Local answers as the relay’s dynalite').toEqual(
      answers.dynalite!.map(comparable),
    );
    expect(items.local, 'DynamoDB Local holds the items the relay’s dynalite holds').toEqual(items.dynalite);
    return answers.dynalite!;
  };

  return {
    clients,
    dynaliteEndpoint,
    sameEverywhere,
    close: async () => {
      for (const client of Object.values(clients)) client.destroy();
      await local.close();
      await new Promise<void>((resolve) => dynaliteServer.close(() => resolve()));
    },
  };
}

/** `input` with the recorded table's name (a `TableName`, a key of `RequestItems`) replaced by `table`. */
const renamed = (value: unknown, from: string, table: string): unknown => {
  if (Array.isArray(value)) return value.map((each) => renamed(each, from, table));
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, each]) => [
      name === from ? table : name,
      name === 'TableName' ? table : renamed(each, from, table),
    ]),
  );
};

/** Recorded requests, to send again in order to another engine's table of another name. */
export const replayOf = (requests: readonly RecordedRequest[], recordedTable: string): Request[] =>
  requests.map(
    ({ command, input }): Request =>
      (engine, table) => {
        const Command = DYNAMODB_COMMANDS[command as keyof typeof DYNAMODB_COMMANDS] as unknown as new (
          input: unknown,
        ) => Parameters<DynamoDBClient['send']>[0];
        return engine.send(new Command(renamed(input, recordedTable, table)));
      },
  );
