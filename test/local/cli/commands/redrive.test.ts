import { describe, expect, it } from 'vitest';
import { createStore, ensureTable, MessageState, type MessageStore } from '../../../../functions/store';
import { message } from '../../../functions/store/fixtures';
import { startDynalite, type Dynalite } from '../../../helpers/dynalite';
import { cli, useRunningRelay } from './running-relay';

/**
 * `sms-relay redrive --state UNKNOWN`: refused without `--accept-duplicates` (an UNKNOWN SMS may
 * already have arrived), re-queued with it, through a running runtime's `POST /_relay/redrive` and
 * through `--env` (a stack's table: here dynalite over HTTP, as the AWS SDK reaches any endpoint).
 */

const MAY_HAVE_ARRIVED = 'may already have arrived';
const running = useRunningRelay('redrive');

let made = 0;
/** A record of route `notify` left UNKNOWN, as a 503 after the request left leaves an at-most-once one. */
async function unknownRecord(store: MessageStore = running.local.store): Promise<string> {
  made += 1;
  const {
    ids: [id],
  } = await store.acceptWebhook({
    route: 'notify',
    dedupeKey: `unknown-${made}-${Date.now()}`,
    windowSeconds: 60,
    messages: [message({ to: ['255754111222'], text: `maybe sent ${made}` })],
  });
  const claimed = await store.claimMessage(id!);
  await store.settle(id!, claimed!.claimToken!, {
    state: MessageState.Unknown,
    reason: 'may have been sent: 503',
    lastError: { name: 'SmsServiceError', status: 503, delivery: 'maybe-sent', message: 'service unavailable' },
  });
  return id!;
}

async function stateOf(id: string): Promise<string | undefined> {
  return (await running.local.store.getMessage(id))?.state;
}

describe('redrive --state UNKNOWN', () => {
  it('through the running relay: refused without --accept-duplicates, saying why, and changes nothing; sent with it', async () => {
    const id = await unknownRecord();

    const refused = await cli(['redrive', '--state', 'UNKNOWN', '--route', 'notify', '--data-dir', running.dataDir]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(MAY_HAVE_ARRIVED);
    expect(refused.stderr).toContain('--accept-duplicates');
    expect(await stateOf(id)).toBe('UNKNOWN');

    const dryRun = await cli([
      'redrive',
      '--state',
      'UNKNOWN',
      '--route',
      'notify',
      '--data-dir',
      running.dataDir,
      '--dry-run',
    ]);
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain(`would re-queue ${id}`);
    expect(dryRun.stdout).toContain('needs --accept-duplicates');

    const accepted = await cli([
      'redrive',
      '--state',
      'UNKNOWN',
      '--route',
      'notify',
      '--data-dir',
      running.dataDir,
      '--accept-duplicates',
    ]);
    expect(accepted.stderr).toBe('');
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain(
      'Re-queued 1 of 1 UNKNOWN on route notify record; the running relay sends them within a few seconds.',
    );
    // The runtime sends it at once (its send queue), as it does a redriven PARKED record.
    await expect.poll(async () => await stateOf(id), { timeout: 20_000 }).toBe('SENT');
    expect(running.sandbox.messages().filter((sent) => sent.message === 'maybe sent 1')).toHaveLength(1);
  }, 60_000);

  it('POST /_relay/redrive: "from": "UNKNOWN" needs "acceptDuplicates": true (400 without, nothing changed)', async () => {
    const id = await unknownRecord();
    const post = async (body: unknown) =>
      await fetch(`${running.url}/_relay/redrive`, {
        method: 'POST',
        headers: { ...running.OPERATOR, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    for (const body of [
      { from: 'UNKNOWN', ids: [id] },
      { from: 'UNKNOWN', ids: [id], acceptDuplicates: false },
    ]) {
      const refused = await post(body);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toContain(
        `acceptDuplicates: must be true with "from": "UNKNOWN": an UNKNOWN SMS ${MAY_HAVE_ARRIVED}`,
      );
    }
    expect(await stateOf(id)).toBe('UNKNOWN');

    const accepted = await post({ from: 'UNKNOWN', ids: [id], acceptDuplicates: true });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toEqual({ requeued: [id], skipped: [] });
    await expect.poll(async () => await stateOf(id), { timeout: 20_000 }).toBe('SENT');
  }, 60_000);

  it("with --env (a stack's table): the same refusal, and the same re-queue with the flag", async () => {
    // The local store listens on no port; a stack's table is any DynamoDB endpoint: here a dynalite server.
    const db: Dynalite = await startDynalite();
    const tableName = 'SmsRelay-test-table';
    await ensureTable(db.client, tableName);
    const table = createStore({ client: db.client, tableName });
    const id = await unknownRecord(table);
    const aws = {
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_REGION: 'local',
    };
    const args = ['redrive', '--env', 'test', '--table', tableName, '--state', 'UNKNOWN', '--route', 'notify'];

    const refused = await cli(args, aws);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(MAY_HAVE_ARRIVED);
    expect((await table.getMessage(id))?.state).toBe('UNKNOWN');

    const accepted = await cli([...args, '--accept-duplicates'], aws);
    expect(accepted.stderr).toBe('');
    expect(accepted.stdout).toContain('Re-queued 1 of 1 UNKNOWN on route notify record');
    expect(accepted.code).toBe(0);
    // On AWS the stack's sender takes it from here; this table has none, so it waits PENDING.
    expect(await table.getMessage(id)).toMatchObject({ state: 'PENDING', redrives: 1, attempts: 0 });
    await db.close();
  }, 60_000);

  it('--rate 2: re-queues at most 2 records a second', async () => {
    const db: Dynalite = await startDynalite();
    const tableName = 'SmsRelay-rate-table';
    await ensureTable(db.client, tableName);
    const table = createStore({ client: db.client, tableName });
    const ids: string[] = [];
    for (let n = 0; n < 6; n += 1) ids.push(await unknownRecord(table));
    const aws = {
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_REGION: 'local',
    };

    const launchedAt = Date.now();
    const run = await cli(
      ['redrive', '--env', 'test', '--table', tableName, '--state', 'UNKNOWN', '--accept-duplicates', '--rate', '2'],
      aws,
    );
    expect(run.stdout).toContain('Re-queued 6 of 6 UNKNOWN record');
    expect(run.code).toBe(0);
    // Each requeue is stamped when it is written, and the command started after launchedAt: at 2 a
    // second, the n-th record written (from 0) cannot be stamped before launchedAt + floor(n / 2) s.
    // A lower bound from the launch, not a span between records, so a slow first write cannot fail it.
    const stamped = await Promise.all(ids.map(async (id) => Date.parse((await table.getMessage(id))!.updatedAt)));
    const secondsAfterLaunch = stamped
      .sort((a, b) => a - b)
      .map((at, n) => ({ n, earliestAllowed: launchedAt + Math.floor(n / 2) * 1_000, at }));
    expect(secondsAfterLaunch.filter(({ at, earliestAllowed }) => at < earliestAllowed)).toEqual([]);

    const refused = await cli(['redrive', '--env', 'test', '--table', tableName, '--rate', '0'], aws);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--rate');
    await db.close();
  }, 60_000);
});
