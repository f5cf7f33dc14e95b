import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { MessageState } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import { bearer, harness, type Harness, SECRETS, TestClock, useRelayServers } from './support';

// One credit per SMS to one recipient (the sandbox's default rate).
const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const NOTIFY = '255712000111';

const withBudget = (config: Parameters<NonNullable<Parameters<typeof harness>[0]['config']>>[0]) => ({
  ...config,
  balance: { threshold: 1, notify: ['0712000111'] },
  routes: {
    ...config.routes,
    shop: {
      source: 'generic' as const,
      secret: 'generic-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      limits: { creditsPerMonth: 10 },
    },
  },
});

async function accept(target: Harness, text: string): Promise<string> {
  const response = await target.ingest('shop', JSON.stringify({ message: text }), {
    headers: { ...bearer(SECRETS.genericToken), 'idempotency-key': randomUUID() },
  });
  expect(response.status).toBe(202);
  return (response.body['ids'] as string[])[0]!;
}

describe('limits.creditsPerMonth', () => {
  it('holds past the month budget, warns balance.notify once at 80 %, and starts afresh next month in the route time zone', async () => {
    // 20:00 UTC on 30 November is 23:00 in Dar es Salaam: still November there.
    const clock = new TestClock(new Date('2026-11-30T20:00:00.000Z'));
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withBudget, clock });
    const outcomes: SendOutcome[] = [];
    for (let n = 1; n <= 12; n += 1) outcomes.push(await sendMessage(relay.context, await accept(relay, `order ${n}`)));

    expect(outcomes).toEqual([...Array(10).fill(SendOutcome.Sent), SendOutcome.Held, SendOutcome.Held]);
    const records = await relay.records('shop');
    expect(records.find((record) => record.text === 'order 11')).toMatchObject({
      state: MessageState.Held,
      reason: 'route limit: more than 10 credits per month',
    });
    const warnings = records.filter((record) => record.notice === 'budget-warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      state: MessageState.Pending,
      to: [NOTIFY],
      text: "sms-relay: route 'shop' has used 8 of its 10 credits for 2026-11 (80 %); past 10 its messages are held until the month ends.",
    });
    // The warning is a notice: sent through the normal sender, never held by the budget it warns of.
    expect(await sendMessage(relay.context, warnings[0]!.id)).toBe(SendOutcome.Sent);

    // 21:00 UTC is midnight in Dar es Salaam: December.
    clock.advance(3_600_000);
    expect(await sendMessage(relay.context, await accept(relay, 'december'))).toBe(SendOutcome.Sent);
    expect(servers.sandbox.messages().map((sent) => sent.message)).toEqual([
      ...Array.from({ length: 10 }, (_, n) => `order ${n + 1}`),
      warnings[0]!.text,
      'december',
    ]);
  });

  it('holds from the first send after a restart, and two senders racing admit the budget and one warning', async () => {
    const clock = new TestClock(new Date('2026-11-10T08:00:00.000Z'));
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config: withBudget, clock });
    const ids = [];
    for (let n = 1; n <= 7; n += 1) ids.push(await accept(relay, `first ${n}`));
    for (const id of ids) expect(await sendMessage(relay.context, id)).toBe(SendOutcome.Sent);

    // Two fresh processes on the same table (a restart, two Lambda containers), racing.
    const one = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withBudget,
      clock,
      tableName: relay.tableName,
    });
    const two = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withBudget,
      clock,
      tableName: relay.tableName,
    });
    const more = [];
    for (let n = 1; n <= 8; n += 1) more.push(await accept(relay, `second ${n}`));
    const outcomes = await Promise.all(more.map((id, n) => sendMessage((n % 2 === 0 ? one : two).context, id)));

    expect(outcomes.filter((outcome) => outcome === SendOutcome.Sent)).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome === SendOutcome.Held)).toHaveLength(5);
    expect((await relay.records('shop')).filter((record) => record.notice === 'budget-warning')).toHaveLength(1);
    expect(servers.sandbox.messages()).toHaveLength(10);
  });
});
