import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { messageItem } from '../../../../functions/store/codec';
import type { MessageRecord } from '../../../../functions/store/types';
import { message } from '../../../functions/store/fixtures';
import { cli, useRunningRelay } from './running-relay';

/** `sms-relay logs` through a running relay: what it prints, in which order. */

const running = useRunningRelay('logs');

/** A record of `notify` parked by a refused send, created `at`. */
async function parkedAt(at: Date, text: string): Promise<string> {
  const store = running.local.store;
  const {
    ids: [id],
  } = await store.acceptWebhook({
    route: 'notify',
    dedupeKey: `logs-${text}`,
    windowSeconds: 60,
    messages: [message({ to: ['255754111222'], text })],
    now: at,
  });
  const claimed = await store.claimMessage(id!, { now: at });
  await store.settle(id!, claimed!.claimToken!, { state: 'PARKED', reason: 'insufficient balance' }, { now: at });
  return id!;
}

describe('sms-relay logs', () => {
  it('prints newest last by the time it shows, also after the oldest record was redriven (changed last)', async () => {
    const start = Date.now() - 10 * 60_000;
    const first = await parkedAt(new Date(start), 'first');
    const second = await parkedAt(new Date(start + 60_000), 'second');
    const third = await parkedAt(new Date(start + 120_000), 'third');
    // The oldest changes last: a listing by last change puts it after the other two.
    await running.local.store.requeue(first, { from: 'PARKED', now: new Date(start + 180_000) });

    const run = await cli(['logs', '--data-dir', running.dataDir]);
    expect(run.code).toBe(0);
    const order = run.stdout
      .split('\n')
      .map((line) => [first, second, third].find((id) => line.includes(id)))
      .filter((id) => id !== undefined);
    expect(order).toEqual([first, second, third]);

    const json = await cli(['logs', '--json', '--data-dir', running.dataDir]);
    const ids = (JSON.parse(json.stdout) as { id: string }[]).map((record) => record.id);
    expect(ids.filter((id) => [first, second, third].includes(id))).toEqual([first, second, third]);
  });

  it('shows the provider of the last attempt, and the failover it came from', async () => {
    const id = await parkedAt(new Date(), 'failed over');
    const parked = (await running.local.store.getMessage(id))!;
    // As the sender records a send that moved from main (unreachable) to at.
    const sentByAt: MessageRecord = {
      ...parked,
      state: 'SENT',
      reason: undefined,
      provider: 'at',
      failoverFrom: 'main',
      failoverReason: 'unreachable',
      history: [...parked.history, { at: new Date().toISOString(), state: 'SENT', provider: 'at' }],
    };
    await running.local.client.send(
      new PutItemCommand({ TableName: running.local.tableName, Item: messageItem(sentByAt) }),
    );

    const json = await cli(['logs', '--json', '--data-dir', running.dataDir]);
    expect(json.code).toBe(0);
    const shown = (JSON.parse(json.stdout) as Record<string, unknown>[]).find((record) => record['id'] === id);
    expect(shown).toMatchObject({ state: 'SENT', provider: 'at', failoverFrom: 'main', failoverReason: 'unreachable' });
    // A record no attempt has named a provider for shows null, so every key is there for scripts.
    const other = await parkedAt(new Date(), 'no provider');
    const again = JSON.parse((await cli(['logs', '--json', '--data-dir', running.dataDir])).stdout) as Record<
      string,
      unknown
    >[];
    expect(again.find((record) => record['id'] === other)).toMatchObject({
      provider: null,
      failoverFrom: null,
      failoverReason: null,
    });
  });
});
