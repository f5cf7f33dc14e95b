import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../functions/core/config/load';
import { createStore, ensureTable, type MessageStore } from '../../../functions/store';
import { createStoreApi } from '../../../local/console/api';
import type {
  AttentionAnswer,
  CreditAnswer,
  IncidentsAnswer,
  OnCallAnswer,
  RequeueOutcome,
} from '../../../local/console/contract';
import { storySmsStates } from '../../../local/console/paging-views';
import { needsAttention } from '../../../functions/relay/attention';
import { attentionText } from '../../../local/runtime/attention-line';
import type { ConsoleSource } from '../../../local/console/source';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { countRequests } from '../../helpers/requests';
import { message } from '../../functions/store/fixtures';

/**
 * The console's API when SMS wait for a person: the attention bar's summary and its Redrive,
 * Credit's "Now" after an insufficient-balance answer, and On call's incidents, Acknowledge and Override.
 */

const CONFIG = new URL('../../../config/local.yaml', import.meta.url).pathname;
const NOW = new Date('2025-03-10T12:00:00.000Z');
const PARK = 'insufficient balance (402): waiting for a top-up and redrive';

let db: Dynalite;
let store: MessageStore;
let tableName: string;
let parked: string[] = [];

const source = (): ConsoleSource => ({
  description: 'test table',
  environment: 'local',
  loaded: loadConfigFile(CONFIG),
  rawRoutes: {},
  webhookBase: undefined,
  fixturesDir: undefined,
  withStore: async (use) => await use(store),
  clock: () => NOW,
});

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const answer = await createStoreApi(source())({ method, path, query: new URLSearchParams(), body });
  if (answer.status !== 200) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as T;
}

/** Accepts one SMS on `notify` at `at` and settles it as the sender would. */
async function settled(key: string, at: Date, outcome: 'SENT' | 'PARKED'): Promise<string> {
  const {
    ids: [id],
  } = await store.acceptWebhook({ route: 'notify', dedupeKey: key, windowSeconds: 60, messages: [message()], now: at });
  const claimed = await store.claimMessage(id!, { now: at });
  await store.settle(
    id!,
    claimed!.claimToken!,
    outcome === 'SENT'
      ? {
          state: 'SENT',
          result: { deducted: 20, remainingBalance: 9_860, message: 'ok', senderId: 'X', recipients: [] },
        }
      : { state: 'PARKED', reason: PARK },
    { now: at },
  );
  return id!;
}

beforeAll(async () => {
  db = await startDynalite();
  tableName = `console-attention-${randomUUID()}`;
  await ensureTable(db.client, tableName);
  store = createStore({ client: db.client, tableName, clock: () => NOW });
}, 120_000);
afterAll(async () => {
  await db.close();
});

describe("the console's API when SMS wait for a person", () => {
  it('needs no attention while every SMS went out', async () => {
    await settled('sent', new Date(NOW.getTime() - 2 * 3_600_000), 'SENT');
    expect(await call<AttentionAnswer>('GET', '/attention')).toEqual({ items: [] });
  });

  it('counts the parked SMS, since the oldest, with the balance the refusal taught, and Credit says the same', async () => {
    const first = new Date(NOW.getTime() - 30 * 60_000);
    parked = [await settled('p1', first, 'PARKED'), await settled('p2', new Date(NOW.getTime() - 60_000), 'PARKED')];
    // After a 402 the sender reads the balance (0 when that read fails too): newer than the last send's answer.
    await store.updateBalanceState({ balance: 0, threshold: 100, now: new Date(NOW.getTime() - 60_000) });
    const { items } = await call<AttentionAnswer>('GET', '/attention');
    expect(items).toEqual([
      {
        kind: 'parked',
        count: 2,
        more: false,
        since: first.toISOString(),
        ids: parked,
        what: '2 SMS parked',
        why: 'insufficient balance (balance 0 TZS)',
        action: 'Top up, then',
        redrive: 'PARKED',
      },
    ]);
    const credit = await call<CreditAnswer>('GET', '/credit');
    expect({ balance: credit.balance, balanceAt: credit.balanceAt, parked: credit.parked }).toEqual({
      balance: 0,
      balanceAt: new Date(NOW.getTime() - 60_000).toISOString(),
      parked: { count: 2, more: false },
    });
  });

  it('reads the state index, not the table, on the local store that otherwise scans (the bar polls from every page)', async () => {
    const client = db.newClient();
    const requests = countRequests(client);
    const scanning = createStore({ client, tableName, clock: () => NOW, readIndexes: false });
    const answer = await createStoreApi({ ...source(), withStore: async (use) => await use(scanning) })({
      method: 'GET',
      path: '/attention',
      query: new URLSearchParams(),
      body: undefined,
    });
    expect(answer.body).toMatchObject({ items: [{ kind: 'parked', count: 2, ids: parked }] });
    expect(requests.byCommand()['Scan']).toBeUndefined();
  });

  it('lists each muted route until its mute ends', async () => {
    await store.muteRoute({ route: 'alerts', forSeconds: 7_200, reason: 'db upgrade', now: NOW });
    await store.muteRoute({ route: 'notify', forSeconds: 600, reason: '', now: NOW });
    const muted = (await call<AttentionAnswer>('GET', '/attention')).items.filter((item) => item.kind === 'muted');
    expect(muted).toEqual([
      expect.objectContaining({
        what: 'Route alerts muted',
        route: 'alerts',
        why: 'db upgrade',
        until: '2025-03-10T14:00:00.000Z',
      }),
      expect.objectContaining({ what: 'Route notify muted', route: 'notify', why: 'no reason given' }),
    ]);
    await store.unmuteRoute({ route: 'alerts', now: NOW });
    await store.unmuteRoute({ route: 'notify', now: NOW });
  });

  it("says what the terminal's attention line says: one summary, its counts and words", async () => {
    const { items } = await call<AttentionAnswer>('GET', '/attention');
    const terminal = (await needsAttention(store, NOW, { currency: 'TZS' })).map((item) => attentionText(item, NOW));
    expect(terminal).toEqual([
      expect.stringMatching(
        /^2 SMS parked: insufficient balance \(balance 0 TZS\), since .*\. Top up, then run "npx sms-relay redrive --state PARKED"$/,
      ),
    ]);
    expect(items.map((item) => `${item.what}: ${item.why}`)).toEqual(
      terminal.map((line) => line.slice(0, line.indexOf(', since'))),
    );
  });

  it("leaves the SMS service's unreachability to the console's own banner; the terminal says it", async () => {
    await store.circuit.open({ until: new Date(NOW.getTime() + 600_000), by: 'test', now: NOW });
    try {
      expect((await call<AttentionAnswer>('GET', '/attention')).items.map((item) => item.kind)).toEqual(['parked']);
      expect((await needsAttention(store, NOW)).map((item) => item.kind)).toEqual(['parked', 'unreachable']);
    } finally {
      await store.circuit.close();
    }
  });

  it("redrives the bar's ids, each only if still in the state, and then needs no attention", async () => {
    const outcome = await call<RequeueOutcome>('POST', '/redrive', { from: 'PARKED', ids: [...parked, 'NOSUCHID'] });
    expect(outcome).toEqual({ requeued: parked, skipped: ['NOSUCHID'] });
    expect(await call<AttentionAnswer>('GET', '/attention')).toEqual({ items: [] });
  });

  it("lists the open incidents and acknowledges one, once; overrides a schedule's rotation", async () => {
    const { incident } = await store.openIncident({
      route: 'paging',
      key: 'disk-full',
      text: 'DiskAlmostFull on db-1',
      sentTo: '2557****678',
      now: NOW,
    });
    const { incidents } = await call<IncidentsAnswer>('GET', '/incidents');
    expect(incidents.map((open) => [open.id, open.state, open.story[0]?.line])).toEqual([
      [incident.id, 'OPEN', 'sent to asha (2557****678)'],
    ]);
    const acknowledged = await call<{ acknowledged: boolean }>('POST', `/incidents/${incident.id}/ack`);
    expect(acknowledged.acknowledged).toBe(true);
    expect((await call<{ acknowledged: boolean }>('POST', `/incidents/${incident.id}/ack`)).acknowledged).toBe(false);
    expect(await call<IncidentsAnswer>('GET', '/incidents')).toEqual({ incidents: [] });

    const oncall = await call<OnCallAnswer>('POST', '/oncall/ops/override', {
      person: 'baraka',
      for: '8h',
      reason: 'asha travels',
    });
    expect(oncall.schedules.find((schedule) => schedule.name === 'ops')?.now).toMatchObject({
      person: { name: 'baraka' },
      override: { reason: 'asha travels' },
    });
    const refused = await createStoreApi(source())({
      method: 'POST',
      path: '/oncall/ops/override',
      query: new URLSearchParams(),
      body: { person: 'nobody', for: '8h' },
    });
    expect(refused.status).toBe(400);
  });

  it("tells each step of an incident's story the state of the SMS it sent", async () => {
    const openedAt = new Date(NOW.getTime() + 3_600_000);
    const escalatedAt = new Date(openedAt.getTime() + 600_000);
    await store.acceptWebhook({
      route: 'paging',
      dedupeKey: 'alert-group-1',
      windowSeconds: 60,
      messages: [message()],
      now: openedAt,
    });
    const {
      ids: [escalation],
    } = await store.acceptWebhook({
      route: 'paging',
      dedupeKey: 'incident:INC1:0',
      windowSeconds: 60,
      messages: [message()],
      now: escalatedAt,
    });
    const claimed = await store.claimMessage(escalation!, { now: escalatedAt });
    await store.settle(escalation!, claimed!.claimToken!, { state: 'PARKED', reason: PARK }, { now: escalatedAt });
    const states = await storySmsStates(store, {
      id: 'INC1',
      route: 'paging',
      openedAt: openedAt.toISOString(),
      timeline: [
        { at: openedAt.toISOString(), event: 'opened', detail: 'sent to asha' },
        { at: escalatedAt.toISOString(), event: 'escalated', detail: 'escalated to baraka' },
        { at: escalatedAt.toISOString(), event: 'acknowledged', detail: 'acknowledged by cli' },
      ],
    });
    expect(states).toEqual([['PENDING'], ['PARKED'], []]);
  });
});
