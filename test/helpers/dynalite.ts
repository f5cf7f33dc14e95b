import { flushSpendThrough } from '../../functions/store/spend';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { listen } from '../../local/http';
import { createDynalite } from '../../local/shared/dynalite';
import { DYNAMODB_LOCAL_CREDENTIALS } from './dynamodb-local';

/** The engines a test's store runs on: dynalite (`npm test`), AWS's DynamoDB Local (`npm run test:aws`). */
export type Engine = 'dynalite' | 'dynamodb-local';

/** The one switch between engines: vitest.aws.config.ts sets it; anything else means dynalite. */
export const TEST_ENGINE: Engine =
  process.env['TEST_STORE_ENGINE'] === 'dynamodb-local' ? 'dynamodb-local' : 'dynalite';

export interface Dynalite {
  /** Which engine answers: a test that meets a difference between them names it in one line. */
  readonly engine: Engine;
  readonly endpoint: string;
  /** A client for this server, with fixed local credentials. */
  readonly client: DynamoDBClient;
  /** Another client for the same server, e.g. one with fault-injecting middleware. */
  newClient(): DynamoDBClient;
  close(): Promise<void>;
}

/** Clients of one local endpoint (fixed local credentials), all destroyed by `destroy`. */
export interface ClientPool {
  readonly client: DynamoDBClient;
  /** Every client of the pool, the first included. */
  readonly clients: readonly DynamoDBClient[];
  newClient(): DynamoDBClient;
  destroy(): void;
}

/**
 * Clients of a local DynamoDB endpoint (dynalite or DynamoDB Local): the first one, and more on
 * request (one with fault-injecting middleware, say), destroyed together.
 */
export const clientPool = (endpoint: string): ClientPool => {
  const clients: DynamoDBClient[] = [];
  const newClient = (): DynamoDBClient => {
    const client = new DynamoDBClient({ region: 'local', endpoint, credentials: DYNAMODB_LOCAL_CREDENTIALS });
    clients.push(client);
    return client;
  };
  return {
    client: newClient(),
    clients,
    newClient,
    destroy: () => {
      for (const each of clients) each.destroy();
    },
  };
};

/** Clients of the run's DynamoDB Local (test/helpers/dynamodb-local-setup.ts), which outlives the test file. */
const connectDynamoDbLocal = (): Dynalite => {
  const local = inject('dynamoDbLocal');
  if (local === undefined || 'unavailable' in local) {
    throw new Error(
      `this test runs against AWS's DynamoDB Local, which is not available: ${local?.unavailable ?? 'no global setup started it (run npm run test:aws)'}`,
    );
  }
  const pool = clientPool(local.endpoint);
  return {
    engine: 'dynamodb-local',
    endpoint: local.endpoint,
    client: pool.client,
    newClient: pool.newClient,
    close: async () => pool.destroy(),
  };
};

/**
 * Starts a dynalite server on 127.0.0.1 and a free port: in memory, or on disk under `path`.
 * Tables become ACTIVE at once. It answers `TransactWriteItems` too (local/shared/dynalite.ts).
 * Under `npm run test:aws` ({@link TEST_ENGINE}) it connects to the run's DynamoDB Local instead,
 * the same for every test file that starts its store here; `path` is then ignored.
 *
 * @example
 * ```typescript
 * let db: Dynalite;
 * beforeAll(async () => { db = await startDynalite(); });
 * afterAll(async () => { await db.close(); });
 * ```
 */
export const startDynalite = async ({ path }: { readonly path?: string } = {}): Promise<Dynalite> => {
  if (TEST_ENGINE === 'dynamodb-local') return connectDynamoDbLocal();
  const server = createDynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(path === undefined ? {} : { path }),
  });
  const endpoint = `http://127.0.0.1:${await listen(server, { port: 0, host: '127.0.0.1' })}`;
  const pool = clientPool(endpoint);
  return {
    engine: 'dynalite',
    endpoint,
    client: pool.client,
    newClient: pool.newClient,
    close: async () => {
      // A spend window of a store on this dynalite, written after it closed, would throw inside
      // dynalite ("Database is closed") as an uncaught exception of the test process.
      await flushSpendThrough(pool.clients).catch(() => undefined);
      pool.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
};
