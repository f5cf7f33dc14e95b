import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { checkBalance } from '../../../functions/relay/balance';
import { ingestWebhook } from '../../../functions/relay/ingest';
import { answerOpsgenieApi } from '../../../functions/relay/opsgenie-api';
import { sendMessage, SendOutcome } from '../../../functions/relay/sender';
import { sweep } from '../../../functions/relay/sweeper';
import type { HandlerName } from '../../../infra/bundle';
import { TABLE_ACCESS, type TableGrant } from '../../../infra/permissions';
import { expectNoLeaks } from './leaks';
import { bearer, harness, type Harness, SECRETS, secretValues, useRelayServers } from './support';

/*
 * The partition keys each function writes, as its code paths write them against a real store,
 * checked against the `dynamodb:LeadingKeys` its IAM grant allows (infra/permissions.ts): dynalite
 * checks no IAM, so a kind missing from a grant would only show as AccessDenied on AWS.
 */

const servers = useRelayServers({ rate: 1 });
let relay: Harness;
afterEach(() => expectNoLeaks(relay.logger));

/** Every partition key written through `client`, puts of transactions included, under the current label. */
function recordWrites(client: DynamoDBClient): {
  as: (fn: HandlerName) => void;
  written: Map<HandlerName, Set<string>>;
  /** The indexes each function queried. */
  queried: Map<HandlerName, Set<string>>;
} {
  const written = new Map<HandlerName, Set<string>>();
  const queried = new Map<HandlerName, Set<string>>();
  let current: HandlerName = 'ingest';
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context.commandName ?? '').replace(/Command$/, '');
      const input = args.input as {
        Key?: { pk?: { S?: string } };
        Item?: { pk?: { S?: string } };
        TransactItems?: { Put?: { Item: { pk?: { S?: string } } }; Update?: { Key: { pk?: { S?: string } } } }[];
        IndexName?: string;
      };
      if (command === 'Query' && input.IndexName !== undefined)
        queried.set(current, (queried.get(current) ?? new Set()).add(input.IndexName));
      const keys =
        command === 'PutItem'
          ? [input.Item?.pk?.S]
          : command === 'UpdateItem'
            ? [input.Key?.pk?.S]
            : command === 'TransactWriteItems'
              ? (input.TransactItems ?? []).map((item) => item.Put?.Item.pk?.S ?? item.Update?.Key.pk?.S)
              : [];
      for (const key of keys) if (key !== undefined) written.set(current, (written.get(current) ?? new Set()).add(key));
      return await next(args);
    },
    { step: 'initialize', name: 'recordWrites' },
  );
  return { as: (fn) => (current = fn), written, queried };
}

/** Whether an IAM `StringLike` pattern (`*` any characters) of the function's write grant matches `pk`. */
const allowed = (fn: HandlerName, pk: string): boolean =>
  (TABLE_ACCESS[fn] as readonly TableGrant[]).some((grant) =>
    (grant.writes ?? []).some((pattern) => new RegExp(`^${pattern.replace(/\*/g, '.*')}$`).test(pk)),
  );

/** Whether the function's grant allows it to query `index`. */
const mayQuery = (fn: HandlerName, index: string): boolean =>
  (TABLE_ACCESS[fn] as readonly TableGrant[]).some(
    (grant) =>
      (grant.actions as readonly string[]).includes('dynamodb:Query') &&
      ((grant.indexes ?? []) as readonly string[]).includes(index),
  );

describe("each function's writes stay within the item kinds its IAM grant allows", () => {
  it('ingest, the sender (limits, reserve, spend, a low-balance notice), the sweeper and the balance watch', async () => {
    const client = servers.db.newClient();
    const writes = recordWrites(client);
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      client,
      config: (config) => ({
        ...config,
        // A per-second send counter (RATE#…) written by every send.
        provider: { ...config.provider, maxPerSecond: 50 },
        balance: { threshold: 100, reserve: 10, notify: ['0712345678'] },
        routes: {
          ...config.routes,
          capped: {
            source: 'generic',
            secret: 'generic-token',
            recipients: ['0754111222'],
            limits: { messages: 100, window: 3600, creditsPerDay: 1000, creditsPerMonth: 10_000 },
          },
        },
      }),
    });
    servers.sandbox.setBalance(102);
    const ids: string[] = [];
    for (const route of ['capped', 'ops', 'capped']) {
      writes.as('ingest');
      relay.clock.advance(1_000);
      const response = await relay.ingest(route, JSON.stringify({ message: `write kinds ${randomUUID()}` }), {
        headers: bearer(SECRETS.genericToken),
      });
      expect(response.status).toBe(202);
      ids.push(...(response.body['ids'] as string[]));
      writes.as('sender');
      expect(await sendMessage(relay.context, ids.at(-1)!)).toBe(SendOutcome.Sent);
      // The sender's spend window, written before its invocation returns (`invoke`).
      await relay.store.flushSpend();
    }
    writes.as('balance-watch');
    relay.clock.advance(1_000);
    await checkBalance(relay.context);
    writes.as('sweeper');
    relay.clock.advance(600_000);
    await sweep(relay.context);
    await relay.store.flushSpend();

    for (const [fn, keys] of writes.written) {
      const outside = [...keys].filter((pk) => !allowed(fn, pk));
      expect(outside, fn).toEqual([]);
    }
    // The scenario reached the kinds it is about.
    const prefixes = (fn: HandlerName) => [...(writes.written.get(fn) ?? [])].map((pk) => pk.replace(/#.*/, '#'));
    expect(prefixes('sender')).toEqual(expect.arrayContaining(['MSG#', 'LIMIT#', 'BALANCE', 'SPEND', 'DEDUPE#']));
    expect(prefixes('balance-watch')).toEqual(expect.arrayContaining(['BALANCE', 'BALANCE#']));
  });

  it("ingest answering Opsgenie's alert API: its alerts, references and request statuses", async () => {
    const client = servers.db.newClient();
    const writes = recordWrites(client);
    const key = `genie-${randomUUID()}`;
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      client,
      secrets: secretValues({ 'opsgenie-key': key }),
      config: (config) => ({
        ...config,
        routes: { ...config.routes, og: { source: 'opsgenie', secret: 'opsgenie-key', recipients: ['0754111222'] } },
      }),
    });
    const api = async (method: string, subPath: string, body: unknown, query: Record<string, string> = {}) =>
      await answerOpsgenieApi(
        relay.context,
        {
          method,
          subPath,
          request: {
            routeId: 'og',
            body: new TextEncoder().encode(JSON.stringify(body)),
            headers: { authorization: `GenieKey ${key}`, 'content-type': 'application/json' },
            query,
            receivedAt: relay.clock.now,
          },
        },
        async (webhook) => await ingestWebhook(relay.context, webhook),
      );
    writes.as('ingest');
    expect((await api('POST', 'v2/alerts', { message: 'Disk full', alias: 'disk' }))?.status).toBe(202);
    const alias = { identifierType: 'alias' };
    expect((await api('POST', 'v2/alerts/disk/notes', { note: 'seen' }, alias))?.status).toBe(202);
    expect((await api('POST', 'v2/alerts/disk/close', {}, alias))?.status).toBe(202);
    const keys = [...(writes.written.get('ingest') ?? [])];
    expect(keys.filter((pk) => !allowed('ingest', pk))).toEqual([]);
    const prefixes = keys.map((pk) => pk.replace(/#.*/, '#'));
    expect(prefixes).toEqual(expect.arrayContaining(['ALERT#', 'ALERTREF#', 'ALERTREQ#', 'INCIDENT#', 'INCIDENTS']));
  });

  it("the sender's failures in a row ask the state index for a send since, which its grant allows", async () => {
    const client = servers.db.newClient();
    const requests = recordWrites(client);
    relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl, client });
    servers.sandbox.injectFault({ kind: 'status', status: 503, count: 2 });
    for (let count = 0; count < 2; count += 1) {
      requests.as('ingest');
      relay.clock.advance(1_000);
      const response = await relay.ingest('ops', JSON.stringify({ message: `failing ${randomUUID()}` }), {
        headers: bearer(SECRETS.genericToken),
      });
      expect(response.status).toBe(202);
      requests.as('sender');
      await sendMessage(relay.context, (response.body['ids'] as string[])[0]!);
    }
    expect((await relay.store.getCircuit()).failures).toBe(2);
    const indexes = [...(requests.queried.get('sender') ?? [])];
    expect(indexes).not.toEqual([]);
    expect(indexes.filter((index) => !mayQuery('sender', index))).toEqual([]);
  });
});
