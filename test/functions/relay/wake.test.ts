import { describe, expect, it } from 'vitest';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState, type MessageStore } from '../../../functions/store';
import { message } from '../store/fixtures';
import { harness, useRelayServers } from './support';

/**
 * The sweep's wake (`wake: true`, as on AWS): while the circuit is held open nothing is woken; once
 * it is closed every waiting record is, the critical lane's before any bulk one, and a record
 * already woken is not woken again (it is in the stream).
 */
const servers = useRelayServers({});

describe('the sweep wakes waiting records for the stream-fed sender', () => {
  it('wakes none while the circuit is open, then every one once it closes, every critical record before any bulk one', async () => {
    const relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl });
    const record = async (route: string, text: string, critical: boolean): Promise<string> => {
      const { ids } = await relay.store.acceptWebhook({
        route,
        dedupeKey: text,
        windowSeconds: 60,
        ...(critical ? { priority: 'critical' as const } : {}),
        messages: [message({ text })],
        now: new Date(relay.clock.read().getTime() - 60_000),
      });
      return ids[0]!;
    };
    // Bulk records first (oldest), the critical ones last: a listing oldest first meets them last.
    const bulk = [await record('ops', 'order 1', false), await record('ops', 'order 2', false)];
    const critical = [await record('alerts', 'alert 1', true), await record('alerts', 'alert 2', true)];
    await relay.store.circuit.open({ until: new Date(relay.clock.read().getTime() + 3_600_000), by: 'test' });

    const held = await sweep(relay.context, { wake: true, limit: 1 });
    expect(held.woken ?? 0).toBe(0);
    for (const id of [...bulk, ...critical]) expect((await relay.store.getMessage(id))?.wokenAt).toBeUndefined();

    await relay.store.circuit.close();
    const order: string[] = [];
    const watched: MessageStore = {
      ...relay.store,
      wake: async (id, options) => {
        order.push(id);
        return await relay.store.wake(id, options);
      },
    };
    const report = await sweep({ ...relay.context, store: watched }, { wake: true, limit: 1 });
    expect(report.woken).toBe(4);
    expect(new Set(order.slice(0, 2))).toEqual(new Set(critical));
    expect(new Set(order.slice(2))).toEqual(new Set(bulk));
    for (const id of [...bulk, ...critical])
      expect(await relay.store.getMessage(id)).toMatchObject({
        state: MessageState.Pending,
        wokenAt: expect.any(String),
      });

    expect((await sweep(relay.context, { wake: true })).woken).toBe(0);
  });
});
