import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../functions/core/config/load';
import { createStore, ensureTable, type MessageStore } from '../../../functions/store';
import type { ConsoleSource } from '../../../local/console/source';
import { creditView, routeSummaries } from '../../../local/console/views';
import { recordsPage } from '../../../local/records';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { message } from '../../functions/store/fixtures';

const CONFIG = new URL('../../../config/local.yaml', import.meta.url).pathname;
const NOW = new Date('2025-03-10T12:00:00.000Z');
const SENDS = 30;

let db: Dynalite;
let tableName: string;
beforeAll(async () => {
  db = await startDynalite();
  tableName = `console-reads-${randomUUID()}`;
  await ensureTable(db.client, tableName);
  const store = createStore({ client: db.client, tableName, clock: () => NOW });
  // 30 sends an hour apart, each leaving the balance 20 lower, and one record still waiting.
  const counted: Promise<void>[] = [];
  for (let n = 0; n < SENDS; n += 1) {
    const at = new Date(NOW.getTime() - (SENDS - n) * 3_600_000);
    const {
      ids: [id],
    } = await store.acceptWebhook({
      route: 'notify',
      dedupeKey: `s${n}`,
      windowSeconds: 60,
      messages: [message()],
      now: at,
    });
    const claimed = await store.claimMessage(id!, { now: at });
    await store.settle(
      id!,
      claimed!.claimToken!,
      {
        state: 'SENT',
        result: { deducted: 20, remainingBalance: 10_000 - 20 * (n + 1), message: 'ok', senderId: 'X', recipients: [] },
      },
      { now: at },
    );
    // Counted as a sender counts it, written per window: the flush below writes them all.
    counted.push(store.recordSpend({ deducted: 20, route: 'notify', now: at }));
  }
  await store.flushSpend();
  await Promise.all(counted);
  await store.acceptWebhook({
    route: 'notify',
    dedupeKey: 'waiting',
    windowSeconds: 60,
    messages: [message()],
    now: NOW,
  });
}, 120_000);
afterAll(async () => {
  await db.close();
});

/** A store on the test table whose client notes every message record it reads: by key, or `(scan)`. */
const watchedStore = (readIndexes: boolean): { store: MessageStore; recordsRead: string[] } => {
  const client: DynamoDBClient = db.newClient();
  const recordsRead: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        readonly RequestItems?: Record<string, { readonly Keys: readonly { readonly pk?: { readonly S?: string } }[] }>;
        readonly Key?: { readonly pk?: { readonly S?: string } };
      };
      const keys = [
        ...Object.values(input.RequestItems ?? {}).flatMap((request) => request.Keys),
        ...(input.Key === undefined ? [] : [input.Key]),
      ];
      recordsRead.push(...keys.map((key) => key.pk?.S ?? '').filter((pk) => pk.startsWith('MSG#')));
      if (context.commandName === 'ScanCommand') recordsRead.push('(scan)');
      return await next(args);
    },
    { step: 'initialize', name: 'watchRecordReads' },
  );
  return { store: createStore({ client, tableName, clock: () => NOW, readIndexes }), recordsRead };
};

const source = (store: MessageStore): ConsoleSource => ({
  description: 'test table',
  environment: 'local',
  loaded: loadConfigFile(CONFIG),
  rawRoutes: {},
  webhookBase: undefined,
  fixturesDir: undefined,
  withStore: async (use) => await use(store),
  clock: () => NOW,
});

describe("the console's views read a bounded number of items whatever the volume", () => {
  for (const readIndexes of [true, false]) {
    it(`Credit draws the sends from the state index's entries, reading no record (readIndexes: ${readIndexes})`, async () => {
      const { store, recordsRead } = watchedStore(readIndexes);
      const credit = await creditView(source(store), store, 7, NOW);
      expect(recordsRead).toEqual([]);
      const sends = credit.points.filter((point) => point.kind === 'send');
      expect(sends.map((point) => point.balance)).toEqual(
        Array.from({ length: SENDS }, (_, n) => 10_000 - 20 * (n + 1)),
      );
      expect(credit.balance).toBe(10_000 - 20 * SENDS);
      expect(credit.spend.reduce((sum, day) => sum + day.credits, 0)).toBe(20 * SENDS);
    });
  }

  for (const readIndexes of [true, false]) {
    it(`Routes counts the day by state from the state index, scanning no table (readIndexes: ${readIndexes})`, async () => {
      const { store, recordsRead } = watchedStore(readIndexes);
      const routes = await routeSummaries(source(store), store, NOW);
      expect(recordsRead).not.toContain('(scan)');
      // The sends of the last 24 hours (one an hour, the oldest 30 hours ago) and the waiting one.
      expect(routes.find((route) => route.id === 'notify')?.last24h).toEqual({ SENT: 24, PENDING: 1 });
    });
  }

  for (const readIndexes of [true, false]) {
    it(`Activity's first page reads its rows and one record more, and the pages after it list every record once (readIndexes: ${readIndexes})`, async () => {
      const { store, recordsRead } = watchedStore(readIndexes);
      const first = await recordsPage(store, { limit: 10 });
      expect(first.records).toHaveLength(10);
      expect(recordsRead).toHaveLength(11);
      const listed = first.records.map((record) => record.id);
      for (let cursor = first.cursor; cursor !== undefined; ) {
        const next = await recordsPage(store, { limit: 10, cursor });
        listed.push(...next.records.map((record) => record.id));
        cursor = next.cursor;
      }
      expect(listed).toHaveLength(SENDS + 1);
      expect(new Set(listed).size).toBe(SENDS + 1);
    });
  }
});
