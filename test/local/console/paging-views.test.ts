import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../functions/core/config/load';
import { createStore, ensureTable, type MessageStore } from '../../../functions/store';
import { incidentOfRecord, incidentView, onCallView } from '../../../local/console/paging-views';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';

const LOADED = loadConfig(`
provider: { baseUrl: https://sms.example.co.tz }
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
schedules:
  ops:
    timezone: Africa/Dar_es_Salaam
    rotation: { people: [asha, baraka], every: 1d, start: "2026-11-30T09:00" }
    notifyHandoff: true
routes:
  alerts:
    source: alertmanager
    secret: alerts
    recipients: ["oncall:ops"]
    escalate: [{ after: 10m, to: ["person:baraka"] }]
    ack: { baseUrl: "https://sms.example.co.tz" }
`);
// Tuesday 1 December 12:00 in Dar es Salaam: baraka's shift (09:00 to 09:00).
const NOW = new Date('2026-12-01T09:00:00Z');

let db: Dynalite;
let store: MessageStore;
/** The store's clock: moved days ahead to see the story outlive the link. */
let clock = NOW;

beforeAll(async () => {
  db = await startDynalite();
  const tableName = `console-paging-${randomUUID()}`;
  await ensureTable(db.client, tableName);
  store = createStore({ client: db.client, tableName, clock: () => clock });
});

afterAll(async () => {
  await db?.close();
});

describe("the console's On call view", () => {
  it('shows who is on call until when, the next handoffs and an override that wins, numbers masked', async () => {
    expect(await onCallView(LOADED, store, NOW)).toEqual({
      schedules: [
        {
          name: 'ops',
          timeZone: 'Africa/Dar_es_Salaam',
          rotation: ['asha', 'baraka'],
          every: 86_400,
          notifyHandoff: true,
          now: {
            person: { name: 'baraka', number: '2557****111' },
            until: '2026-12-02T06:00:00.000Z',
            untilLocal: '2026-12-02 09:00',
            override: null,
          },
          overrides: [],
          handoffs: [
            {
              at: '2026-12-02T06:00:00.000Z',
              atLocal: '2026-12-02 09:00',
              person: { name: 'asha', number: '2557****678' },
            },
            {
              at: '2026-12-03T06:00:00.000Z',
              atLocal: '2026-12-03 09:00',
              person: { name: 'baraka', number: '2557****111' },
            },
            {
              at: '2026-12-04T06:00:00.000Z',
              atLocal: '2026-12-04 09:00',
              person: { name: 'asha', number: '2557****678' },
            },
          ],
        },
      ],
    });
    await store.overrideOnCall({
      schedule: 'ops',
      person: 'asha',
      forSeconds: 4 * 3600,
      reason: 'baraka at the dentist',
      now: NOW,
    });
    const [ops] = (await onCallView(LOADED, store, NOW)).schedules;
    expect(ops!.now).toEqual({
      person: { name: 'asha', number: '2557****678' },
      until: '2026-12-01T13:00:00.000Z',
      untilLocal: '16:00',
      override: { reason: 'baraka at the dentist', until: '2026-12-01T13:00:00.000Z' },
    });
    expect(ops!.handoffs[0]).toEqual({
      at: '2026-12-01T13:00:00.000Z',
      atLocal: '16:00',
      person: { name: 'baraka', number: '2557****111' },
    });
    expect(ops!.overrides).toEqual([
      {
        person: { name: 'asha', number: '2557****678' },
        from: NOW.toISOString(),
        until: '2026-12-01T13:00:00.000Z',
        fromLocal: '12:00',
        untilLocal: '16:00',
        reason: 'baraka at the dentist',
      },
    ]);
  });
});

describe("an incident's story on its records", () => {
  it('finds the incident of an escalation (its dedupe key) and of an SMS with a link (its token), and names the people', async () => {
    const { incident } = await store.openIncident({
      route: 'alerts',
      key: 'g1',
      text: '[FIRING] DiskFull',
      sentTo: '2557****678',
      now: NOW,
    });
    const token = await store.ackToken(incident.id, '255754000111', NOW);
    await store.advanceIncident(incident.id, {
      fromActions: 0,
      level: 1,
      entry: { event: 'escalated', detail: 'escalated to 2557****111' },
      now: new Date(NOW.getTime() + 600_000),
    });
    await store.closeIncident(incident.id, {
      state: 'ACKNOWLEDGED',
      by: '2557****111 via link',
      now: new Date(NOW.getTime() + 780_000),
    });

    expect(
      (
        await incidentOfRecord(store, {
          dedupeKey: `incident:${incident.id}:0`,
          text: 'x',
          createdAt: NOW.toISOString(),
        })
      )?.id,
    ).toBe(incident.id);
    // Three days on, the link itself answers 404 (24 h after the close); the record's story is read as of its creation.
    clock = new Date(NOW.getTime() + 3 * 86_400_000);
    expect(await store.findAckToken(token)).toBeUndefined();
    const linked = await incidentOfRecord(store, {
      dedupeKey: 'webhook-key',
      text: `[FIRING] DiskFull https://sms.example.co.tz/a/${token}`,
      createdAt: NOW.toISOString(),
    });
    expect(linked?.id).toBe(incident.id);
    expect(
      await incidentOfRecord(store, { dedupeKey: 'webhook-key', text: 'no link here', createdAt: NOW.toISOString() }),
    ).toBeUndefined();

    const view = incidentView(linked!, LOADED, NOW);
    expect(view.story.map((entry) => `${entry.atLocal} ${entry.line}`)).toEqual([
      '12:00 sent to asha (2557****678)',
      '12:10 escalated to baraka (2557****111)',
      '12:13 acknowledged by baraka (2557****111) via link',
    ]);
    expect(view).toMatchObject({
      state: 'ACKNOWLEDGED',
      level: 1,
      text: '[FIRING] DiskFull',
      timeZone: 'Africa/Dar_es_Salaam',
    });
  });
});
