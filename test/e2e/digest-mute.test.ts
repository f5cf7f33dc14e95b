import { describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../local/sandbox/types';
import { type PostWebhook, testWithRelay } from '../helpers/fixtures';
import { eventually, moveClockAhead, records, runCli, type RelayOnSandbox } from './support';

const API_KEY = 'digest-mute-test-provider-key-3b9d';
/**
 * Longer than any machine takes for three webhooks and one `sms-relay mute`: the test ends the
 * window by moving the runtime's clock past it, not by waiting.
 */
const WINDOW_MINUTES = 5;

const CONFIG = `
provider:
  baseUrl: http://127.0.0.1:1
  defaultSenderId: SMSRELAY
routes:
  dig:
    source: generic
    secret: generic-token
    recipients: ["0754111222"]
    digest: { window: ${WINDOW_MINUTES}m }
`;

let sandbox: RunningSandbox;
let started: RelayOnSandbox | undefined;
let postWebhook: PostWebhook;

const test = testWithRelay({
  sandbox: { apiKey: API_KEY, balance: 10_000, rate: 1, senderIds: ['SMSRELAY'], defaultSenderId: 'SMSRELAY' },
  config: CONFIG,
  movableClock: true,
});
test.beforeAll(({ sandbox: service, relay, postWebhook: post }) => {
  postWebhook = post;
  sandbox = service;
  started = relay;
}, 180_000);

describe('a digest due while its route is muted (npm start)', () => {
  it('sends no digest: the window records are DROPPED with the mute reason', async () => {
    const { relay, env } = started!;
    const deferred: { ids: string[]; deferredUntil: string }[] = [];
    for (const message of ['backup db-1 ok', 'backup db-2 FAILED', 'backup db-3 ok']) {
      const answer = await postWebhook('dig', { message });
      expect(answer.status).toBe(202);
      deferred.push(answer.body as { ids: string[]; deferredUntil: string });
    }
    const windowEnd = deferred[0]!.deferredUntil;
    expect(deferred.map((answer) => answer.deferredUntil)).toEqual([windowEnd, windowEnd, windowEnd]);

    const muted = await runCli(['mute', 'dig', '--for', '1h', '--reason', 'db upgrade'], env);
    expect(muted.stdout).toMatch(/^Muted route dig until /);
    // What this test is about: a mute set while the window is open (a machine too busy to mute in time proves nothing).
    const [mute] = JSON.parse((await runCli(['mutes', '--json'], env)).stdout) as { mutedAt: string }[];
    expect(Date.parse(mute!.mutedAt), `muted at ${mute!.mutedAt}, after the window ended at ${windowEnd}`).toBeLessThan(
      Date.parse(windowEnd),
    );

    // The window ends during the mute (the runtime's clock moved past it); wait until the sweeper
    // has dealt with every record of the route.
    moveClockAhead(started!, (WINDOW_MINUTES + 1) * 60_000);
    const settled = await eventually(
      async () => {
        const all = await records(relay.url, 'route=dig');
        return all.length > 0 && all.every((record) => !['DEFERRED', 'PENDING', 'SENDING'].includes(record.state))
          ? all
          : undefined;
      },
      { what: 'the window records settled' },
    );
    expect(sandbox.messages().map((message) => message.message)).toEqual([]);
    const ids = deferred.flatMap((answer) => answer.ids);
    expect(settled.map((record) => record.id).sort()).toEqual([...ids].sort());
    for (const record of settled)
      expect(record).toMatchObject({
        state: 'DROPPED',
        reason: expect.stringMatching(/^muted until \d\d:\d\d(?: [A-Z][\w/+-]*)?: db upgrade$/),
      });
  });
});
