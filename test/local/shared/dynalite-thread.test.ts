import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect } from 'vitest';
import { test } from '../../helpers/fixtures';
import { startDynaliteThread } from '../../../local/shared/dynalite-thread';
import { RuntimeError } from '../../../local/shared/errors';
import {
  IN_PROCESS_ENDPOINT,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  openLocalStore,
  type LocalStore,
} from '../../../local/shared/local-store';

let dir: string;
let opened: LocalStore[];

test.beforeEach(({ tempDir }) => {
  dir = tempDir;
  opened = [];
});
afterEach(async () => {
  for (const local of opened) await local.close().catch(() => undefined);
});

const open = async (offThread: boolean, onFailure?: (error: RuntimeError) => void): Promise<LocalStore> => {
  const local = await openLocalStore({
    dataDir: dir,
    tableName: 'sms-relay',
    offThread,
    ...(onFailure === undefined ? {} : { onFailure }),
  });
  opened.push(local);
  return local;
};
const accept = async (local: LocalStore, key: string): Promise<string> => {
  const text = `notify ${key}`;
  const { ids } = await local.store.acceptWebhook({
    route: 'notify',
    dedupeKey: key,
    windowSeconds: 60,
    now: new Date(),
    messages: [
      {
        index: 0,
        part: 1,
        parts: 1,
        text,
        to: ['255712345678'],
        encoding: 'GSM-7',
        characters: text.length,
        segments: 1,
        delivery: 'at-most-once',
      },
    ],
  });
  return ids[0]!;
};

describe('the local store in a worker thread', () => {
  // That it listens on no port is measured on `npm start`'s own process (test/e2e/local-access.test.ts,
  // the kernel's account of its sockets): here other test files share this process's threads and ports.
  test('serves this process only, holds the lock, and leaves the records on disk when closed', async () => {
    const local = await open(true);
    const id = await accept(local, 'one');
    expect((await local.client.send(new ListTablesCommand({}))).TableNames).toEqual(['sms-relay']);
    await expect(openLocalStore({ dataDir: dir, tableName: 'sms-relay' })).rejects.toThrow(
      `the store in ${dir} is in use by another process`,
    );

    await local.close();
    // The worker closed LevelDB and let go of its lock: this thread can open it and read the record.
    const reopened = await open(false);
    expect(await reopened.store.getMessage(id)).toMatchObject({ id, state: 'PENDING', text: 'notify one' });
  });

  test('reports a worker that ends on its own as a RuntimeError, once, and nothing after a close', async () => {
    const failures: RuntimeError[] = [];
    const thread = await startDynaliteThread({ path: join(dir, 'db') }, { onFailure: (error) => failures.push(error) });
    await thread.worker.terminate();
    await expect.poll(() => failures.length).toBe(1);
    expect(failures[0]).toBeInstanceOf(RuntimeError);
    expect(failures[0]!.message).toMatch(/^the local store stopped: its worker ended \(exit code \d+\)$/);
    await thread.close();

    const closed: RuntimeError[] = [];
    const second = await startDynaliteThread({ path: join(dir, 'db2') }, { onFailure: (error) => closed.push(error) });
    await second.close();
    await second.close();
    expect(closed).toEqual([]);
  });

  test('answers requests in flight and later ones with the failure when the worker ends, instead of holding them', async () => {
    const thread = await startDynaliteThread(
      { path: join(dir, 'db'), createTableMs: 0 },
      { onFailure: () => undefined },
    );
    const client = new DynamoDBClient({
      region: LOCAL_REGION,
      endpoint: IN_PROCESS_ENDPOINT,
      credentials: LOCAL_CREDENTIALS,
      requestHandler: thread.handler,
      maxAttempts: 1,
    });
    expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
    const inFlight = Promise.allSettled(
      Array.from({ length: 20 }, async () => await client.send(new ListTablesCommand({}))),
    );
    await thread.worker.terminate();
    // Each settles (answered before the end, or refused); none waits for a worker that is gone.
    expect((await inFlight).length).toBe(20);
    await expect(client.send(new ListTablesCommand({}))).rejects.toThrow(/^the local store stopped: its worker ended/);
    client.destroy();
    await thread.close();
  });
});
