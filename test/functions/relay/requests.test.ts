import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { countRequests } from '../../helpers/requests';
import { bearer, harness, type HarnessOptions, SECRETS, useRelayServers } from './support';

/*
 * The DynamoDB requests of one SMS, as the client sends them: one webhook of one SMS accepted by
 * `ingestWebhook`, then sent by `sendMessage`. Counted on a warm process (the second SMS), as the
 * bench counts them: the first send of a process also writes the price it has not seen yet.
 */
const servers = useRelayServers({ balance: 1_000_000 });

type Config = Parameters<NonNullable<HarnessOptions['config']>>[0];

const withRoutes = (config: Config): Config => ({
  ...config,
  routes: {
    ...config.routes,
    plain: { source: 'generic', secret: 'generic-token', recipients: ['0754111222'], senderId: 'OPS' },
    counted: {
      source: 'generic',
      secret: 'generic-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      limits: { messages: 1000, window: 3600 },
    },
    capped: {
      source: 'generic',
      secret: 'generic-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      limits: { creditsPerDay: 1000 },
    },
    monthly: {
      source: 'generic',
      secret: 'generic-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      limits: { creditsPerMonth: 100_000 },
    },
    watched: {
      source: 'generic',
      secret: 'generic-token',
      recipients: ['0754111222'],
      senderId: 'OPS',
      heartbeat: { every: '5m', grace: '2m' },
    },
  },
});

async function requestsPerSms(
  route: string,
  config: (config: Config) => Config = withRoutes,
): Promise<Readonly<Record<string, number>>> {
  const client = servers.db.newClient();
  const requests = countRequests(client);
  const relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, config, client });
  const once = async (): Promise<void> => {
    const response = await relay.ingest(route, JSON.stringify({ message: `requests ${randomUUID()}` }), {
      headers: bearer(SECRETS.genericToken),
    });
    expect(response.status).toBe(202);
    expect(await sendMessage(relay.context, (response.body['ids'] as string[])[0]!)).toBe(SendOutcome.Sent);
    // The day's spend counter is written per window: a lone SMS's window holds only its own.
    await relay.store.flushSpend();
  };
  await once();
  requests.reset();
  await once();
  return requests.byCommand();
}

describe('DynamoDB requests per SMS', () => {
  it("a plain route: 4, the accept (the guard and the record in one transaction), the claim, the settle and the day's spend counter; the circuit is not written by a send that went through while its process knows of no failure; no price item, the mute read by the first webhook of a process kept for a while", async () => {
    const counted = await requestsPerSms('plain');
    expect(counted).toEqual({ TransactWriteItems: 1, UpdateItem: 3 });
  });

  it("a trickle of SMS one after another within a spend window: 3 each and one write of the day's spend counter for all of them", async () => {
    const client = servers.db.newClient();
    const requests = countRequests(client);
    // A window that does not end during the test, however slow the machine: the flush writes it.
    const relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withRoutes,
      client,
      spendWindowMs: 600_000,
    });
    const trickle = async (count: number): Promise<void> => {
      for (let index = 0; index < count; index += 1) {
        const response = await relay.ingest('plain', JSON.stringify({ message: `trickle ${randomUUID()}` }), {
          headers: bearer(SECRETS.genericToken),
        });
        expect(response.status).toBe(202);
        expect(await sendMessage(relay.context, (response.body['ids'] as string[])[0]!)).toBe(SendOutcome.Sent);
      }
    };
    await trickle(1);
    await relay.store.flushSpend();
    requests.reset();
    await trickle(5);
    // Counted, not written yet: the window is open until its time or a flush.
    expect(requests.byCommand()).toEqual({ TransactWriteItems: 5, UpdateItem: 10 });
    await relay.store.flushSpend();
    expect(requests.byCommand()).toEqual({ TransactWriteItems: 5, UpdateItem: 11 });
    expect(await relay.store.spendLastDays(1, relay.clock.now)).toBe(6);
  });

  it('a route with a messages limit adds its window counter', async () => {
    expect(await requestsPerSms('counted')).toEqual({ TransactWriteItems: 1, UpdateItem: 4 });
  });

  it('a route with a credits limit adds the balance read for its estimate, its day reservation and its spend', async () => {
    expect(await requestsPerSms('capped')).toEqual({ GetItem: 1, TransactWriteItems: 1, UpdateItem: 5 });
  });

  it('a balance reserve adds the read of the projected balance, its reservation, its settlement and the projection set to the balance the service reported; the alert state, unchanged, is not written', async () => {
    const reserved = (config: Config): Config => ({ ...withRoutes(config), balance: { threshold: 500, reserve: 100 } });
    expect(await requestsPerSms('plain', reserved)).toEqual({ GetItem: 1, TransactWriteItems: 1, UpdateItem: 6 });
  });

  it('a route with a monthly budget adds its month reservation and its month spend, not the day', async () => {
    expect(await requestsPerSms('monthly')).toEqual({ GetItem: 1, TransactWriteItems: 1, UpdateItem: 5 });
  });

  it('a route with a heartbeat adds nothing to a webhook within the touch interval (its last-seen write is at most one a minute)', async () => {
    expect(await requestsPerSms('watched')).toEqual({ TransactWriteItems: 1, UpdateItem: 3 });
  });
});
