import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  type AttributeMap,
  type Callback,
  type DynaliteError,
  type DynaliteOptions,
  dynaliteInternals,
  type Release,
  type Store,
  type Table,
} from './dynalite-internals';

/**
 * dynalite (the local DynamoDB) with `TransactWriteItems`, which dynalite 4 lacks and the relay's
 * accept uses. Every place that starts dynalite (the local runtime, the tests, the bench) starts
 * it through {@link createDynalite}.
 *
 * A transaction is made of dynalite's own primitives, as its `PutItem` is: the table, the item's
 * validation, the item lock of every key (taken in sorted order, so two transactions cannot
 * deadlock), each condition checked against the item as it stands, then the index entries and the
 * item written for each. So within the process it is atomic: a write of any of its items waits
 * for it, and a condition that fails writes nothing. It is not atomic on disk: a kill between two
 * of its puts leaves the first. Only `Put` is implemented, which is all the relay asks of it.
 *
 * It uses dynalite's internal modules, through `dynalite-internals.ts` (which checks its version).
 */

export type { DynaliteOptions } from './dynalite-internals';

const TARGET = 'DynamoDB_20120810.TransactWriteItems';
/** DynamoDB's limit on the actions of one transaction. */
export const MAX_TRANSACT_ITEMS = 100;
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;
const CANCELLED = 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException';

/**
 * A dynalite server (not yet listening) that also answers `TransactWriteItems`; every other
 * request goes to dynalite unchanged. Its one `request` listener dispatches both, so a request
 * emitted on the server in process is answered the same way. It need not listen: `close()` then
 * closes its LevelDB all the same.
 *
 * @example
 * ```ts
 * const server = createDynalite({ path, createTableMs: 0 });
 * server.listen(0, '127.0.0.1');
 * ```
 */
export function createDynalite(options: DynaliteOptions): Server {
  const { dynalite, db } = dynaliteInternals();
  // dynalite keeps its store to itself: `create` is wrapped for the one call that makes it.
  const create = db.create;
  let store: Store | undefined;
  db.create = (createOptions) => (store = create(createOptions));
  let server: Server;
  try {
    server = dynalite(options);
  } finally {
    db.create = create;
  }
  if (store === undefined) throw new Error('dynalite did not create its store through dynalite/db');
  const captured = store;
  const [answer] = server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.method === 'POST' && request.headers['x-amz-target'] === TARGET)
      transactRequest(captured, request, response);
    else answer!(request, response);
  });
  // The local store listens nowhere (its own process asks it in memory, `dynalite-handler.ts`):
  // dynalite closes LevelDB only after the HTTP server, whose close fails when it never listened.
  const closeServer = server.close.bind(server);
  server.close = ((callback?: (error?: Error) => void) => {
    if (server.listening) return closeServer(callback);
    captured.db.close((error) => callback?.(error ?? undefined));
    return server;
  }) as Server['close'];
  return server;
}

/** One `Put` of a transaction, validated as dynalite validates a `PutItem`. */
interface PutAction {
  readonly data: { readonly TableName: string; readonly Item: AttributeMap; readonly _condition?: unknown };
  readonly returnOld: boolean;
  table?: Table;
  key?: string;
  existing?: AttributeMap | undefined;
}

function transactRequest(store: Store, request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = [];
  let size = 0;
  request.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
  });
  request.on('end', () => {
    const send = (status: number, body: unknown): void => {
      const text = JSON.stringify(body);
      response.statusCode = status;
      response.setHeader('Content-Type', 'application/x-amz-json-1.0');
      response.setHeader('Content-Length', Buffer.byteLength(text));
      response.end(text);
    };
    if (size > MAX_REQUEST_BYTES) return send(413, {});
    let input: { TransactItems?: unknown; ReturnConsumedCapacity?: string };
    try {
      input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof input;
    } catch {
      return send(400, { __type: 'com.amazon.coral.service#SerializationException' });
    }
    transact(store, input, (error, result) => {
      if (error?.statusCode !== undefined) return send(error.statusCode, error.body);
      if (error)
        return send(500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: error.message });
      send(200, result);
    });
  });
}

/** Validates and applies one transaction: `{}` (with `ConsumedCapacity` when asked) or an error with DynamoDB's body. */
export function transact(
  store: Store,
  input: { TransactItems?: unknown; ReturnConsumedCapacity?: string },
  cb: Callback<object>,
): void {
  const { db } = dynaliteInternals();
  let actions: PutAction[];
  try {
    actions = parse(store, input.TransactItems);
  } catch (error) {
    return cb(error as DynaliteError);
  }
  // Each table's description is read once per transaction, not once per action: a read of
  // LevelDB and a JSON parse that every one of dynalite's own requests also makes.
  const tables = new Map<string, Table>();
  const tableNames = [...new Set(actions.map((action) => action.data.TableName))];
  eachSeries(
    tableNames,
    (name, next) =>
      store.getTable(name, (error, table) => {
        if (error) return next(error);
        tables.set(name, table!);
        next();
      }),
    (error) => {
      if (error) return cb(error);
      for (const action of actions) {
        const table = tables.get(action.data.TableName)!;
        const invalid = db.validateItem(action.data.Item, table);
        if (invalid) return cb(invalid);
        action.table = table;
        action.key = db.createKey(action.data.Item, table);
      }
      const lockKey = (action: PutAction): string => `${action.data.TableName}\u0000${action.key!}`;
      const locked = new Set<string>();
      for (const action of actions) {
        if (locked.has(lockKey(action)))
          return cb(db.validationError('Transaction request cannot include multiple operations on one item'));
        locked.add(lockKey(action));
      }
      const order = [...actions].sort((a, b) => (lockKey(a) < lockKey(b) ? -1 : 1));
      lockAll(store, order, (releaseAll) => {
        const done: Callback<object> = (failure, result) => {
          releaseAll();
          cb(failure, result);
        };
        eachSeries(
          actions,
          (action, next) =>
            store.getItemDb(action.data.TableName).get(action.key!, (failure, existing) => {
              if (failure && failure.name !== 'NotFoundError') return next(failure);
              action.existing = failure ? undefined : existing;
              next();
            }),
          (failure) => {
            if (failure) return done(failure);
            const refused = actions.map((action) => db.checkConditional(action.data, action.existing) != null);
            if (refused.some(Boolean)) return done(cancelled(actions, refused));
            eachSeries(
              actions,
              (action, next) =>
                db.updateIndexes(store, action.table!, action.existing, action.data.Item, (indexFailure) => {
                  if (indexFailure) return next(indexFailure);
                  store
                    .getItemDb(action.data.TableName)
                    .put(action.key!, action.data.Item, (putFailure) => next(putFailure));
                }),
              (writeFailure) =>
                writeFailure ? done(writeFailure) : done(null, consumed(input.ReturnConsumedCapacity, actions)),
            );
          },
        );
      });
    },
  );
}

function parse(store: Store, items: unknown): PutAction[] {
  const { db, validations, putItemRules } = dynaliteInternals();
  if (!Array.isArray(items) || items.length === 0) {
    throw db.validationError(
      "1 validation error detected: Value null at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1",
    );
  }
  if (items.length > MAX_TRANSACT_ITEMS) {
    throw db.validationError(
      `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to ${MAX_TRANSACT_ITEMS}`,
    );
  }
  return items.map((item: Record<string, unknown>) => {
    const kinds = Object.keys(item ?? {}).filter((kind) => item[kind] != null);
    if (kinds.length !== 1)
      throw db.validationError('TransactItems can only contain one of Check, Put, Update or Delete');
    if (kinds[0] !== 'Put')
      throw db.validationError(`the local store implements only Put in TransactWriteItems, not ${kinds[0]}`);
    const { ReturnValuesOnConditionCheckFailure: returnOld, ...put } = item['Put'] as Record<string, unknown>;
    if (returnOld !== undefined && returnOld !== 'ALL_OLD' && returnOld !== 'NONE') {
      throw db.validationError('ReturnValuesOnConditionCheckFailure can only be ALL_OLD or NONE');
    }
    // dynalite's own PutItem validation, which also parses the condition into `_condition`.
    const data = validations.checkTypes(put, putItemRules.types);
    validations.checkValidations(data, putItemRules.types, putItemRules.custom, store);
    return { data: data as PutAction['data'], returnOld: returnOld === 'ALL_OLD' };
  });
}

/** Takes the item lock of every action, one after another in the order given; `cb` gets the release of all. */
function lockAll(store: Store, actions: readonly PutAction[], cb: (releaseAll: () => void) => void): void {
  const releases: Release[] = [];
  const take = (position: number): void => {
    if (position === actions.length)
      return cb(() => {
        for (const release of releases) release()();
      });
    const action = actions[position]!;
    store.getItemDb(action.data.TableName).lock(action.key!, (release) => {
      releases.push(release);
      take(position + 1);
    });
  };
  take(0);
}

/** DynamoDB's answer to a transaction whose conditions refused it: one reason per action, in order. */
function cancelled(actions: readonly PutAction[], refused: readonly boolean[]): DynaliteError {
  const reasons = actions.map((action, position) =>
    refused[position]
      ? {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          ...(action.returnOld && action.existing ? { Item: action.existing } : {}),
        }
      : { Code: 'None' },
  );
  const message = `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`;
  return Object.assign(new Error(message), {
    statusCode: 400,
    body: { __type: CANCELLED, CancellationReasons: reasons, Message: message },
  });
}

/** A transactional write costs DynamoDB two units per started KB of each item (the larger of old and new). */
function consumed(returnConsumedCapacity: string | undefined, actions: readonly PutAction[]): object {
  const { db } = dynaliteInternals();
  if (returnConsumedCapacity !== 'TOTAL' && returnConsumedCapacity !== 'INDEXES') return {};
  const byTable = new Map<string, number>();
  for (const { data, existing } of actions) {
    const units = 2 * Math.max(db.capacityUnits(data.Item, false), existing ? db.capacityUnits(existing, false) : 0);
    byTable.set(data.TableName, (byTable.get(data.TableName) ?? 0) + units);
  }
  return {
    ConsumedCapacity: [...byTable].map(([TableName, CapacityUnits]) => ({
      TableName,
      CapacityUnits,
      ...(returnConsumedCapacity === 'INDEXES' ? { Table: { CapacityUnits } } : {}),
    })),
  };
}

function eachSeries<T>(
  values: readonly T[],
  step: (value: T, next: (error?: DynaliteError | null) => void) => void,
  cb: (error?: DynaliteError | null) => void,
): void {
  const run = (position: number): void => {
    if (position === values.length) return cb();
    step(values[position]!, (error) => (error ? cb(error) : run(position + 1)));
  };
  run(0);
}
