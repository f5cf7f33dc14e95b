import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../functions/core/config/load';
import { startRuntime } from '../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../local/runtime/secrets';
import { signWebhook } from '../../../local/runtime/signers';
import { readAnnouncement } from '../../../local/shared/discovery';
import { resolveRuntimeSettings } from '../../../local/shared/settings';
import { type Engines, type RecordedRequest, replayOf, startEngines } from '../../helpers/differential';

/**
 * A burst through the local runtime (`startRuntime` with config/local.yaml: ingest, the stream
 * stand-in, the sender, the sweeper and the balance watch on the relay's dynalite), its store's
 * requests recorded as sent and replayed to the relay's dynalite and DynamoDB Local
 * (test/helpers/differential.ts): the same answers and the same items. In `npm run test:aws` only,
 * as the other differential file.
 */

/** The commands that read or write items: the runtime's table set-up and health checks are not replayed. */
const DATA_COMMANDS = new Set([
  'GetItemCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

let engines: Engines;
beforeAll(async () => {
  engines = await startEngines();
});
afterAll(async () => {
  await engines?.close();
});

describe('a burst through the local runtime', () => {
  it('gives the same answers and items when a burst through the local runtime is replayed to each engine', {
    timeout: 300_000,
  }, async () => {
    const config = new URL('../../../config/local.yaml', import.meta.url).pathname;
    const dir = mkdtempSync(join(tmpdir(), 'sms-relay-differential-burst-'));
    const settings = resolveRuntimeSettings(
      { config, secrets: join(dir, 'secrets.json'), dataDir: join(dir, 'data'), port: '0' },
      {},
    );
    const secrets = ensureSecretsFile(settings.secretsPath, loadConfigFile(config)).values;
    const example = (path: string): Record<string, unknown> =>
      JSON.parse(readFileSync(new URL(`../../../examples/${path}`, import.meta.url), 'utf8')) as Record<
        string,
        unknown
      >;
    const order = example('shopify/orders-create.json');
    const alert = example('alertmanager/firing-single.json') as {
      alerts: { labels: Record<string, string> }[];
      groupKey: string;
    };
    // config/local.yaml's routes of three kinds: a plain one, one with a message limit (at-least-once)
    // and one with a monthly credit limit; the balance reserve applies to every send.
    const webhooks = Array.from({ length: 50 }, (_, index) => {
      if (index % 5 === 3)
        return {
          route: 'orders',
          source: 'shopify',
          secret: secrets['shopify-secret']!,
          body: { ...order, id: 7_000 + index, name: `#${7_000 + index}` },
        };
      if (index % 5 === 4) {
        const labels = { ...alert.alerts[0]!.labels, instance: `db-${index}.internal:9100` };
        return {
          route: 'alerts',
          source: 'alertmanager',
          secret: secrets['alerts-token']!,
          body: { ...alert, groupKey: `{}:{instance="${labels.instance}"}`, alerts: [{ ...alert.alerts[0]!, labels }] },
        };
      }
      return {
        route: 'notify',
        source: 'generic',
        secret: secrets['generic-token']!,
        body: { message: `burst ${index}` },
      };
    });
    const post = async ({
      route,
      source,
      secret,
      body,
    }: (typeof webhooks)[number]): Promise<{
      readonly status: number;
      readonly body: { readonly status?: string; readonly ids?: string[] };
    }> => {
      const bytes = Buffer.from(JSON.stringify(body));
      const response = await fetch(`${runtime.url}/hooks/${route}`, {
        method: 'POST',
        headers: signWebhook(source, { body: bytes, secret }),
        body: bytes,
      });
      return { status: response.status, body: (await response.json()) as { status?: string; ids?: string[] } };
    };

    // Every data request of the runtime's store, as sent: its client is the runtime's own, so the
    // recording sits on the client class for the burst's time (nothing else in this process sends then).
    const requests: RecordedRequest[] = [];
    const send = DynamoDBClient.prototype.send;
    const runtime = await startRuntime(settings);
    DynamoDBClient.prototype.send = function (
      this: DynamoDBClient,
      command: { constructor: { name: string }; input: unknown },
      ...rest: unknown[]
    ) {
      if (DATA_COMMANDS.has(command.constructor.name))
        requests.push({
          command: command.constructor.name,
          input: structuredClone(command.input as Record<string, unknown>),
        });
      return (send as (...args: unknown[]) => unknown).call(this, command, ...rest);
    } as typeof send;
    try {
      const answers = await Promise.all(webhooks.map(post));
      expect(answers.map((answer) => answer.status)).toEqual(webhooks.map(() => 202));
      const ids = answers.flatMap((answer) => answer.body.ids ?? []);
      expect(ids.length).toBeGreaterThanOrEqual(webhooks.length);
      // The same deliveries again: the accept's transaction refuses each on its guard.
      const again = await Promise.all(webhooks.slice(0, 5).map(post));
      expect(again.map((answer) => answer.body.status)).toEqual(webhooks.slice(0, 5).map(() => 'duplicate'));
      const secret = readAnnouncement(settings.dataDir)!.consoleSecret;
      for (;;) {
        const response = await fetch(`${runtime.url}/_relay/records?limit=500`, {
          headers: { authorization: `Bearer ${secret}` },
        });
        const states = new Map(
          ((await response.json()) as { records: { id: string; state: string }[] }).records.map((record) => [
            record.id,
            record.state,
          ]),
        );
        if (ids.every((id) => states.get(id) === 'SENT')) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      DynamoDBClient.prototype.send = send;
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
    }

    const commands = new Set(requests.map((request) => request.command));
    expect([...commands].sort()).toEqual(
      expect.arrayContaining(['ScanCommand', 'TransactWriteItemsCommand', 'UpdateItemCommand']),
    );
    const replayed = await engines.sameEverywhere(replayOf(requests, settings.tableName));
    expect(
      replayed.filter((answer) => 'error' in answer && answer.error === 'TransactionCanceledException').length,
      'the duplicates refused on replay too',
    ).toBeGreaterThanOrEqual(5);
  });
});
