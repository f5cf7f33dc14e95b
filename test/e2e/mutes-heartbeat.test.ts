import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../local/sandbox/types';
import { type PostWebhook, testWithRelay } from '../helpers/fixtures';
import {
  eventually,
  moveClockAhead,
  post,
  records,
  REPO_ROOT,
  runCli,
  signedRequest,
  type RelayOnSandbox,
} from './support';

const API_KEY = 'mutes-test-provider-key-7c1e';

let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;
let postWebhook: PostWebhook;
/** What the sandbox received, for the note. */
const received: string[] = [];

// config/local.yaml as it is: the test moves the runtime's clock past its heartbeat's 5m + 2m.
const config = readFileSync(join(REPO_ROOT, 'config/local.yaml'), 'utf8');
const test = testWithRelay({
  sandbox: {
    apiKey: API_KEY,
    balance: 100_000,
    rate: 1,
    senderIds: ['SMSRELAY', 'ALERTS', 'DUKA'],
    defaultSenderId: 'SMSRELAY',
  },
  config: config,
  movableClock: true,
});
test.beforeAll(({ sandbox: service, relay, postWebhook: post }) => {
  postWebhook = post;
  expect(config).toContain('heartbeat: { every: 5m, grace: 2m }');
  sandbox = service;
  running = relay;
}, 180_000);

test.afterAll(() => {
  received.push(...sandbox.messages().map((message) => message.message));
  if (process.env['MUTES_E2E_INBOX'] !== undefined)
    writeFileSync(process.env['MUTES_E2E_INBOX'], `${received.join('\n')}\n`);
});

describe('a mute set from the CLI (npm start)', () => {
  it('drops the route messages with its reason until unmute, then sends again', async () => {
    const { relay, env } = running!;
    const notify = async (message: string) => await postWebhook('notify', { message });
    const muted = await runCli(['mute', 'notify', '--for', '2h', '--reason', 'db upgrade'], env);
    expect(muted.stderr).toBe('');
    expect(muted.stdout).toMatch(
      /^Muted route notify until (\d\d:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d) Africa\/Dar_es_Salaam: db upgrade \(the running relay \(pid \d+, http:\/\/127\.0\.0\.1:\d+\)\)\.\n$/,
    );
    const listed = await runCli(['mutes', '--json'], env);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ route: 'notify', reason: 'db upgrade' })]);

    const answer = await notify('disk full on db-01');
    expect(answer).toMatchObject({
      status: 200,
      body: {
        status: 'dropped',
        reason: expect.stringMatching(/^muted until (\d{4}-\d\d-\d\d )?\d\d:\d\d(?: [A-Z][\w/+-]*)?: db upgrade$/),
      },
    });
    const [record] = await records(relay.url, 'route=notify&state=DROPPED');
    expect(record?.reason).toBe(answer.body['reason']);

    const unmuted = await runCli(['unmute', 'notify'], env);
    expect(unmuted.stdout).toBe('Unmuted route notify: its messages are sent again.\n');
    expect((await runCli(['mutes'], env)).stdout).toMatch(/^No route is muted/);
    const after = await notify('db-01 upgraded');
    expect(after.status).toBe(202);
    await eventually(
      async () => ((await records(relay.url, 'route=notify&state=SENT')).length === 1 ? true : undefined),
      { what: 'the message after unmute SENT' },
    );
    // The muted message never went out; a sweep later, still only the one after unmute.
    const texts = sandbox.messages().map((message) => message.message);
    expect(texts).toContain('db-01 upgraded');
    expect(texts).not.toContain('disk full on db-01');
  }, 180_000);
});

describe("the dead-man's switch (npm start)", () => {
  it('sends one SMS when the Watchdog stops, none for the Watchdog itself, and one when it is back', async () => {
    const { relay, secrets } = running!;
    const watchdog = () =>
      post(
        relay.url,
        signedRequest('watchdog', 'alertmanager', 'alertmanager/firing-single.json', secrets['alerts-token']!),
      );
    const first = await watchdog();
    expect(first).toMatchObject({ status: 200, body: { status: 'filtered' } });

    // 8 minutes on the runtime's clock, past every 5m + grace 2m: the sweeper (every second locally) records one SMS.
    moveClockAhead(running!, 8 * 60_000);
    const silent = await eventually(
      async () =>
        sandbox.messages().find((message) => message.message.startsWith("sms-relay: nothing from route 'watchdog'")),
      { what: 'the silence SMS', timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(silent.message).toMatch(/^sms-relay: nothing from route 'watchdog' since \d\d:\d\d, expected every 5m$/);
    expect(silent.phoneNumbers).toEqual(['255712345678']);

    expect((await watchdog()).status).toBe(200);
    const back = await eventually(
      async () =>
        sandbox.messages().find((message) => message.message.startsWith("sms-relay: route 'watchdog' is back")),
      { what: 'the back SMS', timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(back.message).toMatch(
      /^sms-relay: route 'watchdog' is back after \d+ min \(nothing from \d\d:\d\d to \d\d:\d\d\)$/,
    );
    // The SMS reaches the service before its record is settled SENT: wait for the state.
    await eventually(
      async () =>
        (await records(relay.url, 'route=watchdog')).filter((record) => record.state === 'SENT').length === 2
          ? true
          : undefined,
      {
        what: 'both notices SENT',
      },
    );
    expect(sandbox.messages().filter((message) => message.message.includes("route 'watchdog'"))).toHaveLength(2);
  }, 300_000);
});
