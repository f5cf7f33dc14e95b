import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IncidentState } from '../../../functions/core/paging/incident';
import { PAGING } from '../../../functions/core/defaults';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, newTable } from './fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const open = {
  route: 'alerts',
  key: '{}:{alertname="DiskFull"}',
  text: '[FIRING] DiskFull',
  sentTo: '2557****678',
  nextDueAt: at(10 * MINUTE),
  now: T0,
};

describe('incidents in the store', () => {
  it('opens one incident per key: a repeated firing gets the open one, unchanged', async () => {
    const { store } = await newTable(db);
    const first = await store.openIncident(open);
    expect(first.opened).toBe(true);
    expect(first.incident).toMatchObject({
      route: 'alerts',
      state: 'OPEN',
      actions: 0,
      level: 0,
      nextDueAt: at(10 * MINUTE).toISOString(),
      timeline: [{ event: 'opened', detail: 'sent to 2557****678' }],
    });
    const repeat = await store.openIncident({ ...open, nextDueAt: at(20 * MINUTE), now: at(4 * HOUR) });
    expect(repeat).toEqual({ opened: false, incident: first.incident });
    expect(await store.listOpenIncidents()).toEqual([first.incident]);
    // Another key of the same route is another incident.
    expect((await store.openIncident({ ...open, key: 'other' })).opened).toBe(true);
    expect(await store.listOpenIncidents()).toHaveLength(2);
  });

  it('opens one incident for two first webhooks of a key at once', async () => {
    const { store, storeWith } = await newTable(db);
    const other = storeWith(db.client);
    const outcomes = await Promise.all([store.openIncident(open), other.openIncident(open), store.openIncident(open)]);
    expect(outcomes.filter((outcome) => outcome.opened)).toHaveLength(1);
    expect(new Set(outcomes.map((outcome) => outcome.incident.id)).size).toBe(1);
  });

  it('closes on a resolve; the next firing of the key opens a new incident', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const resolved = await store.closeIncident(incident.id, {
      state: IncidentState.Resolved,
      by: 'alertmanager',
      now: at(5 * MINUTE),
    });
    expect(resolved).toMatchObject({
      closed: true,
      incident: { state: 'RESOLVED', closedAt: at(5 * MINUTE).toISOString(), closedBy: 'alertmanager' },
    });
    expect(resolved.incident).not.toHaveProperty('nextDueAt');
    expect(await store.listOpenIncidents()).toEqual([]);
    expect(await store.openIncidentOf('alerts', open.key)).toBeUndefined();
    const again = await store.openIncident({ ...open, now: at(HOUR) });
    expect(again.opened).toBe(true);
    expect(again.incident.id).not.toBe(incident.id);
  });

  it('lets one of concurrent acknowledgements win; the others see it acknowledged', async () => {
    const { store, storeWith } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const other = storeWith(db.client);
    const outcomes = await Promise.all(
      ['2557****678', '2557****111', 'cli'].map(
        async (by, index) =>
          await (index % 2 === 0 ? store : other).closeIncident(incident.id, {
            state: IncidentState.Acknowledged,
            by,
            now: at(MINUTE),
          }),
      ),
    );
    const winners = outcomes.filter((outcome) => outcome.closed);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!.incident!;
    for (const outcome of outcomes.filter((each) => !each.closed))
      expect(outcome.incident).toMatchObject({ state: 'ACKNOWLEDGED', closedBy: winner.closedBy });
    expect(winner.timeline.filter((entry) => entry.event === 'acknowledged')).toHaveLength(1);
    // Acknowledged: a second acknowledgement changes nothing; the resolve still closes it.
    expect((await store.closeIncident(incident.id, { state: IncidentState.Acknowledged, by: 'cli' })).closed).toBe(
      false,
    );
    const resolved = await store.closeIncident(incident.id, { state: IncidentState.Resolved, by: 'alertmanager' });
    expect(resolved).toMatchObject({ closed: true, incident: { state: 'RESOLVED', closedBy: 'alertmanager' } });
    expect(resolved.incident!.timeline.map((entry) => entry.event)).toEqual(['opened', 'acknowledged', 'resolved']);
  });

  it('keeps the key of an acknowledged incident until it resolves: a firing meanwhile gets it, still acknowledged', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    await store.closeIncident(incident.id, { state: IncidentState.Acknowledged, by: 'cli', now: at(MINUTE) });
    const repeat = await store.openIncident({ ...open, now: at(4 * HOUR) });
    expect(repeat).toMatchObject({ opened: false, incident: { id: incident.id, state: 'ACKNOWLEDGED' } });
    expect(await store.listOpenIncidents()).toEqual([]);
    expect(await store.openIncidentOf('alerts', open.key)).toMatchObject({ id: incident.id });
    await store.closeIncident(incident.id, { state: IncidentState.Resolved, by: 'alertmanager', now: at(5 * HOUR) });
    expect(await store.openIncidentOf('alerts', open.key)).toBeUndefined();
    const again = await store.openIncident({ ...open, now: at(6 * HOUR) });
    expect(again.opened).toBe(true);
    expect(again.incident.id).not.toBe(incident.id);
  });

  it('lists the open incidents oldest first, whatever their keys, leaving out acknowledged and resolved ones', async () => {
    const { store } = await newTable(db);
    // Opened in this order, an hour apart; their keys' markers sort in another order.
    const keys = ['zeta', 'alpha', 'mu', 'beta', 'omega', 'gamma'];
    const opened = [];
    for (const [index, key] of keys.entries())
      opened.push((await store.openIncident({ ...open, key, now: at(index * HOUR) })).incident);
    await store.closeIncident(opened[2]!.id, { state: IncidentState.Acknowledged, by: 'cli', now: at(7 * HOUR) });
    await store.closeIncident(opened[4]!.id, { state: IncidentState.Resolved, by: 'alertmanager', now: at(7 * HOUR) });

    expect((await store.listOpenIncidents()).map((incident) => incident.key)).toEqual([
      'zeta',
      'alpha',
      'beta',
      'gamma',
    ]);
  });

  it('lists more open incidents than one batch read takes (100)', async () => {
    const { store } = await newTable(db);
    const keys = Array.from({ length: 130 }, (_, index) => `alert-${index}`);
    for (let start = 0; start < keys.length; start += 10)
      await Promise.all(
        keys
          .slice(start, start + 10)
          .map(async (key, index) => await store.openIncident({ ...open, key, now: at((start + index) * MINUTE) })),
      );

    expect((await store.listOpenIncidents()).map((incident) => incident.key)).toEqual(keys);
  });

  it('does not take a resolved incident for the open one when a crash left its key naming it', async () => {
    const { store, scan, tableName } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const marker = (await scan()).find(
      (item) => item['incidentId']?.S === incident.id && item['sk']?.S?.startsWith('OPEN#'),
    );
    expect(marker).toBeDefined();
    await store.closeIncident(incident.id, { state: IncidentState.Resolved, by: 'alertmanager', now: at(MINUTE) });
    // The resolve's second write (emptying the key) never happened.
    await db.client.send(new PutItemCommand({ TableName: tableName, Item: marker! }));

    expect(await store.openIncidentOf('alerts', open.key)).toBeUndefined();
    expect(await store.listOpenIncidents()).toEqual([]);
    const again = await store.openIncident({ ...open, now: at(HOUR) });
    expect(again.opened).toBe(true);
    expect(again.incident.id).not.toBe(incident.id);
  });

  it('claims each escalation once: advancing from a stale count is refused', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const entry = { event: 'escalated', detail: 'escalated to baraka (2557****111)' } as const;
    const claims = await Promise.all(
      [0, 0].map(
        async (fromActions) =>
          await store.advanceIncident(incident.id, {
            fromActions,
            level: 1,
            nextDueAt: at(30 * MINUTE),
            entry,
            now: at(10 * MINUTE),
          }),
      ),
    );
    expect(claims.sort()).toEqual([false, true]);
    const advanced = await store.getIncident(incident.id);
    expect(advanced).toMatchObject({ actions: 1, level: 1, nextDueAt: at(30 * MINUTE).toISOString() });
    // The claim writes the step's line into the story, once.
    expect(advanced!.timeline.map((line) => [line.event, line.detail])).toEqual([
      ['opened', 'sent to 2557****678'],
      ['escalated', 'escalated to baraka (2557****111)'],
    ]);
    expect(await store.advanceIncident(incident.id, { fromActions: 1, level: 2, entry, now: at(30 * MINUTE) })).toBe(
      true,
    );
    expect(await store.getIncident(incident.id)).not.toHaveProperty('nextDueAt');
    await store.closeIncident(incident.id, { state: IncidentState.Acknowledged, by: 'cli' });
    expect(await store.advanceIncident(incident.id, { fromActions: 2, level: 2, entry })).toBe(false);
  });
});

describe('the incident timeline', () => {
  it('counts repeats on one line, ten times as many as the timeline holds lines: the timeline stays short and the item a few KB', async () => {
    const { store, rawItem } = await newTable(db);
    const { incident } = await store.openIncident({
      ...open,
      linkOrigin: 'https://abc123.execute-api.eu-west-1.amazonaws.com',
    });
    // Ten times the lines a timeline keeps, 100 at once: appended, they would fill it; counted, the
    // count is exact under concurrent writes and the item does not grow with it.
    const repeats = 10 * PAGING.maxTimelineEntries;
    for (let done = 0; done < repeats; done += 100)
      await Promise.all(
        Array.from(
          { length: 100 },
          async (_, index) =>
            await store.noteIncident(
              incident.id,
              { event: 'repeated', detail: 'fired again; escalation unchanged' },
              at((done + index + 1) * MINUTE),
            ),
        ),
      );
    const after = (await store.getIncident(incident.id))!;
    expect(after.timeline).toEqual([
      expect.objectContaining({ event: 'opened' }),
      {
        at: expect.any(String),
        event: 'repeated',
        detail: `fired again ${repeats} times; escalation unchanged`,
        count: repeats,
        lastAt: expect.any(String),
      },
    ]);
    expect(after.linkOrigin).toBe('https://abc123.execute-api.eu-west-1.amazonaws.com');
    const item = (await rawItem(`INCIDENT#${incident.id}`, 'INCIDENT'))!;
    const bytes = Buffer.byteLength(JSON.stringify(item));
    console.log(`incident item after ${repeats} repeats: ${after.timeline.length} timeline entries, ${bytes} bytes`);
    expect(bytes).toBeLessThan(4_000);
    // 500 conditional writes, 100 at once on one item.
  }, 300_000);

  it('keeps at most 50 lines: a line past them is left out', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    for (let step = 0; step < 60; step += 1)
      await store.noteIncident(incident.id, { event: 'exhausted', detail: `line ${step}` }, at(step * MINUTE));
    const full = (await store.getIncident(incident.id))!;
    expect(full.timeline).toHaveLength(50);
    expect(full.timeline.at(-1)).toMatchObject({ detail: 'line 48' });
    // A repeat cannot add its line to a full timeline either.
    await store.noteIncident(incident.id, { event: 'repeated', detail: 'fired again; escalation unchanged' });
    expect((await store.getIncident(incident.id))!.timeline).toHaveLength(50);
  });
});

describe('acknowledge tokens', () => {
  it('gives each recipient one unguessable token of 128 bits that opens only its incident', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const { incident: other } = await store.openIncident({ ...open, key: 'other' });
    const asha = await store.ackToken(incident.id, '255712345678');
    expect(asha).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(asha, 'base64url')).toHaveLength(16);
    expect(await store.ackToken(incident.id, '255712345678')).toBe(asha);
    const baraka = await store.ackToken(incident.id, '255754000111');
    const elsewhere = await store.ackToken(other.id, '255712345678');
    expect(new Set([asha, baraka, elsewhere]).size).toBe(3);
    expect(await store.findAckToken(asha)).toMatchObject({ number: '255712345678', incident: { id: incident.id } });
    expect(await store.findAckToken(elsewhere)).toMatchObject({ incident: { id: other.id } });
  });

  it('names the same token to concurrent callers for one recipient', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const tokens = await Promise.all(
      Array.from({ length: 4 }, async () => await store.ackToken(incident.id, '255712345678')),
    );
    expect(new Set(tokens).size).toBe(1);
  });

  it('answers while open and 24 h after the close, then nothing; unknown and malformed tokens answer nothing', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const token = await store.ackToken(incident.id, '255712345678');
    expect(await store.findAckToken(token, at(30 * 86_400_000))).toBeDefined();
    await store.closeIncident(incident.id, { state: IncidentState.Resolved, by: 'alertmanager', now: at(HOUR) });
    expect(await store.findAckToken(token, at(25 * HOUR))).toMatchObject({ incident: { state: 'RESOLVED' } });
    expect(await store.findAckToken(token, at(25 * HOUR + 1))).toBeUndefined();
    const flipped = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    expect(await store.findAckToken(flipped)).toBeUndefined();
    expect(await store.findAckToken('short')).toBeUndefined();
    expect(await store.findAckToken(`${token}/../x`)).toBeUndefined();
  });
});
