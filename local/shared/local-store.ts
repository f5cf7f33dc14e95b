import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createStore, ensureTable, type MessageStore, type UndecodableRecord } from '../../functions/store';
import type { RelayLogger } from '../../functions/relay/ports';
import { reportUndecodable } from '../../functions/relay/undecodable';
import { createDynalite, type DynaliteOptions } from './dynalite';
import { dynaliteInternals } from './dynalite-internals';
import { createDynaliteHandler, type DynaliteHandler } from './dynalite-handler';
import { startDynaliteThread } from './dynalite-thread';
import { oneAtATime } from './one-at-a-time';
import { RuntimeError } from './errors';

/** Where LevelDB keeps its files inside `RELAY_DATA_DIR`; the directory also holds `runtime.json`. */
export const DATABASE_SUBDIR = 'db';

/**
 * The SDK client's endpoint: a name that resolves nowhere, since its requests never go on the
 * network (they are handed to dynalite in this process or its worker). The local store listens on
 * no port: dynalite takes any signature, so any local process that reached one could read every
 * record and write a PENDING one for the relay to send.
 */
export const IN_PROCESS_ENDPOINT = 'http://local-store.invalid';

/** Fixed credentials: dynalite checks that requests are signed, not by whom. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/**
 * What the local client sends in place of a signature: the fields dynalite requires of an
 * `Authorization` header (it checks their presence, never a signature), for requests that never
 * leave this process.
 */
export const LOCAL_AUTHORIZATION = {
  authorization:
    'AWS4-HMAC-SHA256 Credential=local/20000101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=local',
  'x-amz-date': '20000101T000000Z',
} as const;
export const LOCAL_REGION = 'local';

export interface LocalStore {
  /** This process's client: it calls dynalite in this thread (`createDynaliteHandler`) or posts to its worker (`offThread`), not over HTTP. */
  readonly client: DynamoDBClient;
  /**
   * A client of the same store for the runtime's own background reads (the sweeps after the first,
   * the attention watch): its requests reach the store one at a time (`oneAtATime`), so a webhook's
   * requests wait behind one of them at most, not behind a dozen sent at once.
   */
  readonly backgroundClient: DynamoDBClient;
  readonly store: MessageStore;
  readonly tableName: string;
  readonly dataDir: string;
  /** Waits for pending writes, closes LevelDB and the server. Idempotent. */
  close(): Promise<void>;
}

export interface OpenLocalStoreOptions {
  readonly dataDir: string;
  readonly tableName: string;
  /**
   * dynalite and LevelDB in a worker thread (the other core; `startDynaliteThread`), for the
   * long-running runtime. Otherwise in this thread: a one-off command spares the worker's start.
   * @default false
   */
  readonly offThread?: boolean;
  /** With `offThread`: called once if the worker fails or ends before `close()`. */
  readonly onFailure?: (error: RuntimeError) => void;
  /**
   * Told of each record a listing left out because this version cannot read it (see `StoreOptions.onUndecodable`).
   * @default a line on stderr per record (a CLI command, the standalone console)
   */
  readonly onUndecodable?: (record: UndecodableRecord) => void;
  /**
   * The store's time for operations not given one (`createStore`'s `clock`).
   * @default the system clock
   */
  readonly clock?: () => Date;
}

/**
 * The `onUndecodable` of a command run by hand: a line on stderr per record left out, so a listing
 * that shows fewer records than there are says why.
 */
export function undecodableToStderr(): (record: UndecodableRecord) => void {
  const stderr: RelayLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message, attributes) =>
      process.stderr.write(`warning: ${message}: ${String(attributes?.['id'])} (${String(attributes?.['reason'])})\n`),
    error: () => undefined,
  };
  return reportUndecodable(stderr, { add: () => undefined });
}

/**
 * Starts dynalite for this process only (no port; see {@link IN_PROCESS_ENDPOINT}) with its data on
 * disk under `dataDir`, and makes sure the relay's table exists. Other processes reach the records
 * through the running runtime's `/_relay` endpoints, with the secret of its `runtime.json`. Records survive a restart. LevelDB allows one process per
 * directory, so the lock is tested first: dynalite itself would crash the process on it later.
 *
 * @throws {RuntimeError} another process holds the store
 *
 * @example
 * ```ts
 * const local = await openLocalStore({ dataDir: '.relay/data', tableName: 'sms-relay' });
 * await local.store.listByState('PARKED');
 * await local.close();
 * ```
 */
export async function openLocalStore({
  dataDir,
  tableName,
  offThread = false,
  onFailure,
  onUndecodable = undecodableToStderr(),
  clock,
}: OpenLocalStoreOptions): Promise<LocalStore> {
  const path = join(dataDir, DATABASE_SUBDIR);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  await assertUnlocked(path, dataDir);

  const options = { path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 } as const;
  const { client, backgroundClient, close } = offThread
    ? await openInWorker(options, onFailure)
    : await openInProcess(options);

  try {
    await ensureTable(client, tableName, { timeoutMs: 10_000 });
  } catch (error) {
    await close().catch(() => undefined);
    throw new RuntimeError(`the local store in ${dataDir} could not be prepared: ${(error as Error).message}`, {
      cause: error,
    });
  }
  // dynalite writes an item and its index entries apart: a kill between them leaves an index that
  // disagrees with the table, so the local store lists records from the table itself.
  return {
    client,
    backgroundClient,
    store: createStore({
      client,
      tableName,
      readIndexes: false,
      onUndecodable,
      ...(clock === undefined ? {} : { clock }),
    }),
    tableName,
    dataDir,
    close,
  };
}

interface Opened {
  readonly client: DynamoDBClient;
  readonly backgroundClient: DynamoDBClient;
  close(): Promise<void>;
}

/** Idempotent: the first call's promise for every call. */
function once(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= run());
}

/**
 * This process's client of the local store, whose requests go to `requestHandler` (dynalite in this
 * thread or in the store's worker), not over loopback HTTP.
 */
function localClient(requestHandler: DynaliteHandler): DynamoDBClient {
  // `cacheMiddleware`: each command's handler chain is built once, not for every request (~5 % of
  // the thread in a burst); nothing adds middleware to this client after its first request.
  const client = new DynamoDBClient({
    region: LOCAL_REGION,
    endpoint: IN_PROCESS_ENDPOINT,
    credentials: LOCAL_CREDENTIALS,
    requestHandler,
    cacheMiddleware: true,
  });
  // The SDK's logger middleware filters every request's input and output for a log line even when,
  // as here, no logger is set: a walk of every item read or written, ~2 % of the thread in a burst.
  client.middlewareStack.remove('loggerMiddleware');
  // Signing (SigV4: a hash of every body, four HMACs per request) was ~7 % of the runtime's thread
  // in a burst, for requests handed to dynalite in this process, which verifies no signature.
  client.middlewareStack.remove('httpSigningMiddleware');
  client.middlewareStack.add(
    (next) => async (args) => {
      Object.assign((args.request as { headers: Record<string, string> }).headers, LOCAL_AUTHORIZATION);
      return await next(args);
    },
    { step: 'finalizeRequest', name: 'localAuthorization' },
  );
  return client;
}

async function openInWorker(
  options: DynaliteOptions,
  onFailure: ((error: RuntimeError) => void) | undefined,
): Promise<Opened> {
  const thread = await startDynaliteThread(options, onFailure === undefined ? {} : { onFailure });
  const client = localClient(thread.handler);
  const backgroundClient = localClient(oneAtATime(thread.handler));
  const close = once(async () => {
    backgroundClient.destroy();
    client.destroy();
    await thread.close();
  });
  return { client, backgroundClient, close };
}

async function openInProcess(options: DynaliteOptions): Promise<Opened> {
  const server = createDynalite(options);
  const handler = createDynaliteHandler(server);
  const client = localClient(handler);
  const backgroundClient = localClient(oneAtATime(handler));
  const close = once(async () => {
    backgroundClient.destroy();
    client.destroy();
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  });
  return { client, backgroundClient, close };
}

async function assertUnlocked(path: string, dataDir: string): Promise<void> {
  // dynalite's own binding (and version), the one it will open.
  const { Level } = dynaliteInternals();
  const database = new Level(path, { valueEncoding: 'json' });
  try {
    await database.open();
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED') {
      throw new RuntimeError(
        `the store in ${dataDir} is in use by another process (is another "sms-relay start" running on it? ` +
          'stop it, or set RELAY_DATA_DIR to another directory)',
        { cause: error },
      );
    }
    throw new RuntimeError(`the local store in ${dataDir} cannot be opened: ${(error as Error).message}`, {
      cause: error,
    });
  }
  await database.close();
}
