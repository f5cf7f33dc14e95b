import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileOnCall, onCallAt } from '../../../functions/core/oncall';
import { StoreError } from '../../../functions/store';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const HOUR = 3_600_000;

describe('overrideOnCall, activeOverrides', () => {
  it('keeps each override as its own item until its TTL, and lists those in force', async () => {
    const { store, rawItem } = await newTable(db);
    const first = await store.overrideOnCall({
      schedule: 'ops',
      person: 'baraka',
      forSeconds: 8 * 3600,
      reason: ' asha travels ',
      now: T0,
    });
    expect(first).toMatchObject({
      schedule: 'ops',
      person: 'baraka',
      from: T0.toISOString(),
      until: at(8 * HOUR).toISOString(),
      reason: 'asha travels',
      createdAt: T0.toISOString(),
    });
    const second = await store.overrideOnCall({
      schedule: 'ops',
      person: 'chuma',
      forSeconds: 3600,
      reason: '',
      now: at(HOUR),
    });
    await store.overrideOnCall({ schedule: 'db', person: 'asha', forSeconds: 3600, reason: '', now: T0 });

    expect(await store.activeOverrides({ schedules: ['ops'], now: at(HOUR + 1) })).toEqual([first, second]);
    expect(await store.activeOverrides({ schedules: ['ops'], now: at(2 * HOUR) })).toEqual([first]);
    expect(await store.activeOverrides({ schedules: ['ops', 'db', 'ops'], now: at(30 * 60_000) })).toHaveLength(3);
    expect(await store.activeOverrides({ schedules: ['ops'], now: at(8 * HOUR) })).toEqual([]);
    expect(await store.activeOverrides({ schedules: [], now: T0 })).toEqual([]);

    const item = await rawItem(`ONCALL#ops`, `OVERRIDE#${first.createdAt}#${first.id}`);
    expect(item?.kind?.S).toBe('oncall-override');
    // Kept 35 days after it ends: who covered last month can still be read.
    expect(item?.expiresAt?.N).toBe(String(T0.getTime() / 1000 + 8 * 3600 + 35 * 86_400));
  });

  it('lets the newest override win when who is on call is worked out from the table', async () => {
    const { store } = await newTable(db);
    const problems: string[] = [];
    const directory = compileOnCall(
      { asha: { phone: '0712345678' }, baraka: { phone: '0754000111' }, chuma: { phone: '0765000222' } },
      {
        ops: {
          timezone: 'Africa/Dar_es_Salaam',
          rotation: { people: ['asha'], every: 86_400, start: '2020-01-01T00:00' },
          notifyHandoff: false,
        },
      },
      problems,
    );
    await store.overrideOnCall({ schedule: 'ops', person: 'baraka', forSeconds: 8 * 3600, reason: '', now: T0 });
    await store.overrideOnCall({ schedule: 'ops', person: 'chuma', forSeconds: 3600, reason: '', now: at(1000) });
    const now = at(60_000);
    const found = onCallAt(
      directory.schedules.get('ops')!,
      await store.activeOverrides({ schedules: ['ops'], now }),
      directory.people,
      now,
    );
    expect({ person: found.person.name, until: found.until }).toEqual({ person: 'chuma', until: at(HOUR + 1000) });
  });

  it('refuses a length or a reason out of bounds and writes nothing', async () => {
    const { store } = await newTable(db);
    await expect(
      store.overrideOnCall({ schedule: 'ops', person: 'baraka', forSeconds: 0, reason: '', now: T0 }),
    ).rejects.toThrow(StoreError);
    await expect(
      store.overrideOnCall({ schedule: 'ops', person: 'baraka', forSeconds: 31 * 86_400, reason: '', now: T0 }),
    ).rejects.toThrow('from 1 s to 30 days');
    await expect(
      store.overrideOnCall({ schedule: 'ops', person: 'baraka', forSeconds: 60, reason: 'x'.repeat(201), now: T0 }),
    ).rejects.toThrow('at most 200 characters');
    expect(await store.activeOverrides({ schedules: ['ops'], now: T0 })).toEqual([]);
  });
});
