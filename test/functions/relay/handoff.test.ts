import { afterEach, describe, expect, it } from 'vitest';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import type { RelayConfigView } from '../../../functions/core/config/view';
import type { LoadedConfig } from '../../../functions/core/config/compile';
import { handoffText, recordHandoffs } from '../../../functions/relay/handoff';
import { NOTICE_ROUTE } from '../../../functions/relay/ports';
import { sweep } from '../../../functions/relay/sweeper';
import { MessageState } from '../../../functions/store';
import { expectNoLeaks } from './leaks';
import { harness, type Harness, ONCALL, OPS, TestClock, useRelayServers } from './support';

const servers = useRelayServers({});
let relay: Harness;

afterEach(() => {
  expectNoLeaks(relay.logger);
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

// Shifts of a day from 09:00 in Dar es Salaam (06:00 UTC): asha on 1 June, baraka on the 2nd, asha on the 3rd, baraka on the 4th.
const withRotation =
  (notifyHandoff: boolean) =>
  (config: RelayConfigInput): RelayConfigInput => ({
    ...config,
    people: { asha: { phone: '0712345678' }, baraka: { phone: '0754111222' } },
    schedules: {
      ops: {
        timezone: 'Africa/Dar_es_Salaam',
        rotation: { people: ['asha', 'baraka'], every: '1d', start: '2025-06-01T09:00' },
        notifyHandoff,
      },
    },
  });

const handoffs = async () => (await relay.records(NOTICE_ROUTE)).filter((record) => record.notice === 'handoff');

describe('notifyHandoff: the handoff SMS', () => {
  it('tells the incoming person once per shift, at its start (an override in force wins), and the sweep sends it', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withRotation(true),
      clock: new TestClock(new Date('2025-06-03T05:59:00Z')),
    });
    // Two hours into baraka's shift of the 2nd and a minute before asha's: nothing is due.
    expect((await recordHandoffs(relay.context, relay.clock.now)).ids).toEqual([]);

    relay.clock.advance(2 * MINUTE);
    // Two sweepers at once (and a third later in the grace): one SMS between them.
    const runs = await Promise.all([
      recordHandoffs(relay.context, relay.clock.now),
      recordHandoffs(relay.context, relay.clock.now),
    ]);
    relay.clock.advance(30 * MINUTE);
    expect((await recordHandoffs(relay.context, relay.clock.now)).ids).toEqual([]);
    const [handoff, ...more] = await handoffs();
    expect(more).toEqual([]);
    expect(runs.flatMap((run) => run.ids)).toEqual([handoff!.id]);
    expect(handoff).toMatchObject({
      to: [ONCALL],
      text: 'You are on call for ops until 2025-06-04 09:00 (Africa/Dar_es_Salaam)',
      state: MessageState.Pending,
      delivery: 'at-least-once',
      senderId: 'SMSRELAY',
    });
    await sweep(relay.context);
    expect(servers.sandbox.messages().filter((message) => message.message.startsWith('You are on call'))).toEqual([
      expect.objectContaining({ message: 'You are on call for ops until 2025-06-04 09:00 (Africa/Dar_es_Salaam)' }),
    ]);
    expect(relay.logger.text()).toContain('2557****678');

    // asha covers baraka's shift of the 4th until 16:00 local: she is the one told at its start.
    relay.clock.now = new Date('2025-06-04T05:00:00Z');
    await relay.store.overrideOnCall({
      schedule: 'ops',
      person: 'asha',
      forSeconds: 8 * 3600,
      reason: 'baraka travels',
      now: relay.clock.now,
    });
    relay.clock.advance(HOUR);
    await recordHandoffs(relay.context, relay.clock.now);
    expect((await handoffs()).map((record) => [record.to, record.text])).toEqual([
      [[ONCALL], 'You are on call for ops until 2025-06-04 09:00 (Africa/Dar_es_Salaam)'],
      [[ONCALL], 'You are on call for ops until 16:00 (Africa/Dar_es_Salaam)'],
    ]);
    // Past the grace of a shift nobody was told about (a sweeper down all morning): no late SMS.
    relay.clock.now = new Date('2025-06-05T07:01:00Z');
    expect((await recordHandoffs(relay.context, relay.clock.now)).ids).toEqual([]);
    expect(await handoffs()).toHaveLength(2);
  });

  it('sends nothing for a schedule without notifyHandoff', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withRotation(false),
      clock: new TestClock(new Date('2025-06-03T06:01:00Z')),
    });
    await sweep(relay.context);
    expect(await handoffs()).toEqual([]);
  });

  it('compiles the config on demand where the sweeper has only its view (the Lambda sweeper), and only when a handoff is due', async () => {
    relay = await harness({
      db: servers.db,
      baseUrl: servers.sandbox.baseUrl,
      config: withRotation(true),
      clock: new TestClock(new Date('2025-06-03T12:00:00Z')),
    });
    const loaded = relay.context.config as LoadedConfig;
    const view: RelayConfigView = {
      settings: loaded.settings,
      routes: loaded.routes,
      balanceNotify: loaded.balanceNotify,
    };
    let compiled = 0;
    const compile = async () => {
      compiled += 1;
      return loaded;
    };
    await sweep({ ...relay.context, config: view }, { digests: { compile } });
    expect(compiled).toBe(0);
    relay.clock.now = new Date('2025-06-04T06:00:00Z');
    await sweep({ ...relay.context, config: view }, { digests: { compile } });
    expect(compiled).toBeGreaterThan(0);
    expect((await handoffs()).map((record) => [record.to, record.text])).toEqual([
      [[OPS], 'You are on call for ops until 2025-06-05 09:00 (Africa/Dar_es_Salaam)'],
    ]);
  });

  it('says until further notice when nobody else is ever on call', () => {
    expect(handoffText({ name: 'ops', timeZone: 'Africa/Dar_es_Salaam' }, undefined, new Date())).toBe(
      'You are on call for ops until further notice',
    );
  });
});
