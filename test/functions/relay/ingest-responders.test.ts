import { describe, expect, it } from 'vitest';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import { harness, SECRETS, TestClock, useRelayServers } from './support';

const servers = useRelayServers({});

const ASHA = '255712345678';
const BARAKA = '255754111222';

/** An opsgenie route paging asha unless the alert names someone the config knows; schedule db puts asha on call. */
const withOpsgenie = (config: RelayConfigInput): RelayConfigInput => ({
  ...config,
  people: { asha: { phone: '0712345678' }, baraka: { phone: '0754111222', email: 'baraka@example.com' } },
  schedules: {
    db: { timezone: 'Africa/Dar_es_Salaam', rotation: { people: ['asha'], every: '1w', start: '2025-06-01T09:00' } },
  },
  routes: { ...config.routes, og: { source: 'opsgenie', secret: 'generic-token', recipients: ['person:asha'] } },
});

describe("an Opsgenie create's responders, through ingest", () => {
  it("page the schedule they name with its override in force (a schedule the route's recipients do not name), or the route's recipients", async () => {
    const relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withOpsgenie,
      clock: new TestClock(new Date('2025-06-03T08:00:00Z')),
    });
    await relay.store.overrideOnCall({
      schedule: 'db',
      person: 'baraka',
      forSeconds: 3600,
      reason: 'asha is away',
      now: relay.clock.now,
    });
    const create = async (alias: string, responders: unknown): Promise<readonly string[]> => {
      const response = await relay.ingest('og', JSON.stringify({ message: `disk ${alias}`, alias, responders }), {
        headers: { authorization: `GenieKey ${SECRETS.genericToken}`, 'content-type': 'application/json' },
      });
      expect(response.status).toBe(202);
      const id = (response.body['ids'] as string[])[0]!;
      return (await relay.store.getMessage(id))!.to;
    };
    expect(await create('a1', [{ type: 'schedule', name: 'db' }])).toEqual([BARAKA]);
    expect(
      await create('a2', [
        { type: 'user', username: 'Baraka@Example.com' },
        { type: 'team', name: 'db' },
      ]),
    ).toEqual([BARAKA]);
    expect(
      await create('a3', [
        { type: 'team', name: 'payments' },
        { type: 'user', id: 'u-1' },
      ]),
    ).toEqual([ASHA]);
    expect(await create('a4', [null, 'db', 7, { type: 'schedule', name: ['db'] }])).toEqual([ASHA]);
  });
});
