import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createStore, createTableInput, ensureTable } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { acceptEach, at, T0 } from '../../functions/store/fixtures';

/**
 * A local data directory made before the state index was replaced: dynalite cannot add an index to a
 * table, so the store reads the index it replaced. Local only: on AWS the stack adds indexes (and
 * DynamoDB Local, which `ensureTable` can add them to, is not such a directory).
 */
let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

describe('a local table made before the state index was replaced', () => {
  it('is read under its old name on a table made before it replaced byState (a local data directory)', async () => {
    const tableName = `store-old-${Date.now()}`;
    const input = createTableInput(tableName);
    // As that version made it: byState with every attribute, and no byDue (nor its dueAt key).
    await db.client.send(
      new CreateTableCommand({
        ...input,
        AttributeDefinitions: input.AttributeDefinitions?.filter((definition) => definition.AttributeName !== 'dueAt'),
        GlobalSecondaryIndexes: input.GlobalSecondaryIndexes?.filter((index) => index.IndexName !== 'byDue').map(
          (index) =>
            index.IndexName === 'byStateSummary'
              ? { ...index, IndexName: 'byState', Projection: { ProjectionType: 'ALL' } }
              : index,
        ),
      }),
    );
    await ensureTable(db.client, tableName);
    const store = createStore({ client: db.client, tableName, clock: () => T0 });
    const ids = await acceptEach(store, ['a', 'b']);
    // An index is eventually consistent (DynamoDB Local on a busy machine showed one record late).
    await vi.waitFor(
      async () => expect((await store.listByState('PENDING')).items.map((record) => record.id)).toEqual(ids),
      { timeout: 15_000, interval: 200 },
    );
    // Without byDue, the due records of the state index it had.
    expect((await store.findDuePending({ now: at(10_000) })).items.map((record) => record.id)).toEqual(ids);
    expect((await store.summarizeRecords({ since: T0 })).map((record) => record.id).sort()).toEqual([...ids].sort());
  });
});
