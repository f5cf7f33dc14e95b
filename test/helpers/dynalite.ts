import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The part of dynalite's factory these tests use; the package ships no TypeScript types. */
type DynaliteFactory = (options: {
  readonly createTableMs?: number;
  readonly deleteTableMs?: number;
  readonly updateTableMs?: number;
  readonly path?: string;
}) => Server;

// dynalite is CommonJS without type declarations; require keeps the import surface typed here.
const dynalite = createRequire(import.meta.url)('dynalite') as DynaliteFactory;

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
 * Tables become ACTIVE at once.
 *
 * @example
 * ```typescript
 * let db: Dynalite;
 * beforeAll(async () => { db = await startDynalite(); });
 * afterAll(async () => { await db.close(); });
 * ```
 */
export const startDynalite = async ({ path }: { readonly path?: string } = {}): Promise<Dynalite> => {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(path === undefined ? {} : { path }) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
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
