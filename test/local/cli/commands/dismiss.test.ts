import { describe, expect, it } from 'vitest';
import { createStore, ensureTable, type MessageStore } from '../../../../functions/store';
import { message } from '../../../functions/store/fixtures';
import { localOperator } from '../../../../local/shared/operator';
import { startDynalite, type Dynalite } from '../../../helpers/dynalite';
import { cli, useRunningRelay } from './running-relay';

/**
 * `sms-relay dismiss`: UNKNOWN, FAILED, HELD and PARKED records ended unsent (DISMISSED, with who,
 * when and why) by id or by state, through a running runtime's `POST /_relay/dismiss` and through
 * `--env` (a stack's table: here dynalite over HTTP, as the AWS SDK reaches any endpoint); SENT,
 * PENDING and SENDING ones refused; `logs --state DISMISSED` lists them.
 */

const running = useRunningRelay('dismiss');

let made = 0;
/** A record of `route` settled into `state`, as a send that ended so leaves it. */
async function recordIn(
  state: 'FAILED' | 'UNKNOWN' | 'PARKED' | 'HELD' | 'SENT',
  { route = 'notify', store = running.local.store }: { route?: string; store?: MessageStore } = {},
): Promise<string> {
  made += 1;
  const {
    ids: [id],
  } = await store.acceptWebhook({
    route,
    dedupeKey: `dismiss-${made}-${Date.now()}`,
    windowSeconds: 60,
    messages: [message({ to: ['255754111222'], text: `message ${made}` })],
  });
  const claimed = await store.claimMessage(id!);
  await store.settle(
    id!,
    claimed!.claimToken!,
    state === 'SENT'
      ? { state, result: { deducted: 1, remainingBalance: 99, message: 'ok', senderId: 'SMSRELAY', recipients: [] } }
      : { state, reason: `refused for 255754111222 (${state})` },
  );
  return id!;
}

async function recordOf(id: string, store: MessageStore = running.local.store) {
  return await store.getMessage(id);
}

describe('sms-relay dismiss through the running relay', () => {
  it('dismisses named records with the reason and --by, refuses a SENT one (exit 1, left as it is), and logs lists them', async () => {
    const failed = await recordIn('FAILED');
    const unknown = await recordIn('UNKNOWN');
    const sent = await recordIn('SENT');
    const sentBefore = await recordOf(sent);

    const run = await cli([
      'dismiss',
      failed,
      unknown,
      sent,
      '--reason',
      'customer number 255754111222 disconnected',
      '--by',
      'asha',
      '--data-dir',
      running.dataDir,
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`dismissed ${failed}\ndismissed ${unknown}\n`);
    expect(run.stdout).toContain('Dismissed 2 of 3 records (by asha)');
    expect(run.stderr).toContain(
      `not dismissed: ${sent} is SENT: only UNKNOWN, FAILED, HELD, PARKED records can be dismissed; left as it is`,
    );
    expect(await recordOf(sent)).toEqual(sentBefore);
    for (const [id, from] of [
      [failed, 'FAILED'],
      [unknown, 'UNKNOWN'],
    ] as const) {
      expect(await recordOf(id)).toMatchObject({
        state: 'DISMISSED',
        reason: `refused for 255754111222 (${from})`,
        dismissal: { by: 'asha', reason: 'customer number 255754111222 disconnected', from },
      });
    }

    const logs = await cli(['logs', '--state', 'DISMISSED', '--route', 'notify', '--data-dir', running.dataDir]);
    expect(logs.code).toBe(0);
    const line = logs.stdout.split('\n').find((text) => text.includes(failed));
    // Who, when and why, numbers masked, then what it was.
    expect(line).toMatch(
      /DISMISSED .* dismissed by asha (\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}( \([^)]+\))?: customer number 2557\*\*\*\*222 disconnected \(was FAILED: refused for 2557\*\*\*\*222 \(FAILED\)\)$/,
    );
    const json = await cli(['logs', '--state', 'DISMISSED', '--json', '--data-dir', running.dataDir]);
    const listed = JSON.parse(json.stdout) as { id: string; dismissal: unknown }[];
    expect(listed.find((record) => record.id === unknown)?.dismissal).toEqual({
      by: 'asha',
      at: expect.stringMatching(/^\d{4}-/),
      reason: 'customer number 2557****222 disconnected',
      from: 'UNKNOWN',
    });
  }, 120_000);

  it('refuses to run without --reason, changing nothing', async () => {
    const failed = await recordIn('FAILED');
    const run = await cli(['dismiss', failed, '--data-dir', running.dataDir]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('--reason is required');
    expect((await recordOf(failed))?.state).toBe('FAILED');
  }, 120_000);

  it('--state with --route: --dry-run lists and changes nothing; then dismisses them as the OS user', async () => {
    const parked = [await recordIn('PARKED', { route: 'alerts' }), await recordIn('PARKED', { route: 'alerts' })];
    const elsewhere = await recordIn('PARKED', { route: 'notify' });
    const args = [
      'dismiss',
      '--state',
      'parked',
      '--route',
      'alerts',
      '--reason',
      'superseded',
      '--data-dir',
      running.dataDir,
    ];

    const dry = await cli([...args, '--dry-run']);
    expect(dry.code).toBe(0);
    for (const id of parked) expect(dry.stdout).toContain(`would dismiss ${id}  alerts  to 2557****222`);
    expect(dry.stdout).toContain(
      '2 PARKED on route alerts records would be dismissed (dry run): MessagesParked would no longer count them.',
    );
    for (const id of parked) expect((await recordOf(id))?.state).toBe('PARKED');

    const run = await cli(args);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Dismissed 2 of 2 PARKED on route alerts records (by ${localOperator()})`);
    for (const id of parked)
      expect(await recordOf(id)).toMatchObject({
        state: 'DISMISSED',
        dismissal: { by: localOperator(), from: 'PARKED' },
      });
    expect((await recordOf(elsewhere))?.state).toBe('PARKED');
  }, 120_000);
});

describe('POST /_relay/dismiss', () => {
  const post = async (body: unknown, headers: Record<string, string> = running.OPERATOR) =>
    await fetch(`${running.url}/_relay/dismiss`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('dismisses {"ids"} and {"state","route","since"} with a reason, by the relay\'s OS user unless "by" says', async () => {
    const held = await recordIn('HELD', { route: 'alerts' });
    const failed = await recordIn('FAILED', { route: 'alerts' });
    const pending = (
      await running.local.store.acceptWebhook({
        route: 'alerts',
        dedupeKey: `pending-${Date.now()}`,
        windowSeconds: 60,
        // Far in the future: the relay's queue is not fed it, so it stays PENDING.
        messages: [message({ text: 'on its way' })],
      })
    ).ids[0]!;

    const byIds = await post({ ids: [held, pending], reason: 'limit was wrong', by: 'baraka' });
    expect(byIds.status).toBe(200);
    expect(await byIds.json()).toEqual({
      dismissed: [held],
      refused: [
        {
          id: pending,
          state: 'PENDING',
          why: 'is PENDING: only UNKNOWN, FAILED, HELD, PARKED records can be dismissed; left as it is',
        },
      ],
    });
    expect(await recordOf(held)).toMatchObject({ state: 'DISMISSED', dismissal: { by: 'baraka', from: 'HELD' } });
    expect((await recordOf(pending))?.state).toBe('PENDING');

    const byState = await post({ state: 'FAILED', route: 'alerts', since: '1h', reason: 'test route' });
    expect(byState.status).toBe(200);
    expect(await byState.json()).toEqual({ dismissed: [failed], refused: [] });
    expect(await recordOf(failed)).toMatchObject({
      state: 'DISMISSED',
      dismissal: { by: localOperator(), reason: 'test route', from: 'FAILED' },
    });
  });

  it('refuses a request without a reason or without a selection (400), and anyone without the secret (401), changing nothing', async () => {
    const failed = await recordIn('FAILED');
    const noReason = await post({ ids: [failed] });
    expect(noReason.status).toBe(400);
    expect(((await noReason.json()) as { error: string }).error).toContain('reason');
    const blankReason = await post({ ids: [failed], reason: '   ' });
    expect(blankReason.status).toBe(400);
    const nothing = await post({ reason: 'why' });
    expect(nothing.status).toBe(400);
    expect(((await nothing.json()) as { error: string }).error).toContain('send "ids", or "state"');
    const sentState = await post({ state: 'SENT', reason: 'why' });
    expect(sentState.status).toBe(400);
    const stranger = await post({ ids: [failed], reason: 'why' }, {});
    expect(stranger.status).toBe(401);
    expect((await recordOf(failed))?.state).toBe('FAILED');
  });
});

describe('sms-relay dismiss --env', () => {
  it("clears a FAILED record of a stack's table from the FailedNow count", async () => {
    // The local store listens on no port; a stack's table is any DynamoDB endpoint: here a dynalite server.
    const db: Dynalite = await startDynalite();
    try {
      const tableName = 'SmsRelay-test-table';
      await ensureTable(db.client, tableName);
      const table = createStore({ client: db.client, tableName });
      const failed = await recordIn('FAILED', { store: table });
      const aws = {
        AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_REGION: 'local',
      };
      const failedNow = async () => (await table.countStuck({ overdueBefore: new Date() })).failed;
      expect(await failedNow()).toBe(1);

      const run = await cli(
        [
          'dismiss',
          '--env',
          'test',
          '--table',
          tableName,
          '--state',
          'FAILED',
          '--reason',
          'invalid number',
          '--by',
          'asha',
        ],
        aws,
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`dismissed ${failed}  notify  to 2557****222`);
      expect(run.stdout).toContain(
        `Dismissed 1 of 1 FAILED record (by asha); the sweeper's next count (every minute) drops them`,
      );
      expect(await failedNow()).toBe(0);
      expect(await table.getMessage(failed)).toMatchObject({ state: 'DISMISSED', dismissal: { by: 'asha' } });
    } finally {
      await db.close();
    }
  }, 120_000);
});
