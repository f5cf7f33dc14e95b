import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { listen } from '../../local/http';
import { createDynalite } from '../../local/shared/dynalite';

export interface Dynalite {
  readonly endpoint: string;
  /** A client for this server, with fixed local credentials. */
  readonly client: DynamoDBClient;
  /** Another client for the same server, e.g. one with fault-injecting middleware. */
  newClient(): DynamoDBClient;
  close(): Promise<void>;
}

/**
 * Starts a dynalite server on 127.0.0.1 and a free port: in memory, or on disk under `path`.
 * Tables become ACTIVE at once. It answers `TransactWriteItems` too (local/shared/dynalite.ts).
 *
 * @example
 * ```typescript
 * let db: Dynalite;
 * beforeAll(async () => { db = await startDynalite(); });
 * afterAll(async () => { await db.close(); });
 * ```
 */
export const startDynalite = async ({ path }: { readonly path?: string } = {}): Promise<Dynalite> => {
  const server = createDynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(path === undefined ? {} : { path }) });
  const endpoint = `http://127.0.0.1:${await listen(server, { port: 0, host: '127.0.0.1' })}`;
  const clients: DynamoDBClient[] = [];
  const newClient = (): DynamoDBClient => {
    const client = new DynamoDBClient({
      region: 'local',
      endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    clients.push(client);
    return client;
  };
  const client = newClient();
  return {
    endpoint,
    client,
    newClient,
    close: async () => {
      for (const each of clients) each.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
};
