import { describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../local/sandbox/types';
import { testWithRelay } from '../helpers/fixtures';
import { runCli, type RelayOnSandbox } from './support';

/**
 * The terminal's attention line through npm start: SMS parked at balance 0 are said once as they
 * start and again when their number changes, with the action; after a top-up and a redrive, once
 * that nothing waits any more.
 */

let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;

const test = testWithRelay({
  sandbox: {
    apiKey: 'attention-test-provider-key-41c2',
    balance: 0,
    rate: 20,
    senderIds: ['SMSRELAY'],
    defaultSenderId: 'SMSRELAY',
  },
  config: `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
routes:
  notify:
    source: generic
    secret: generic-token
    recipients: ["0712345678"]
    template: "{{ message }}"
`,
});

test.beforeAll(({ sandbox: service, relay }) => {
  sandbox = service;
  running = relay;
}, 180_000);

describe('the attention line', () => {
  it('says "2 SMS parked" with the balance and the redrive to run, once per change, and when nothing waits any more', async () => {
    const { relay, env, secrets } = running!;
    const post = async (message: string): Promise<number> =>
      (
        await fetch(`${relay.url}/hooks/notify`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secrets['generic-token']!}`, 'content-type': 'application/json' },
          body: JSON.stringify({ message }),
        })
      ).status;

    expect(await post('first')).toBe(202);
    expect(await post('second')).toBe(202);
    const [line] = await relay.waitFor(/^.*attention {2}2 SMS parked: insufficient balance.*$/m, 60_000);
    expect(line).toMatch(
      /^\d\d:\d\d:\d\d {2}attention {2}2 SMS parked: insufficient balance( \(balance 0 TZS\))?, since \d\d:\d\d/,
    );
    expect(line).toContain('. Top up, then run "npx sms-relay redrive --state PARKED"');
    // Said when it changes, not each time it is looked at.
    const saidTwice = (): number =>
      relay
        .stdout()
        .split('\n')
        .filter((each) => each.includes('attention  2 SMS parked')).length;
    expect(saidTwice()).toBe(1);

    sandbox.setBalance(100_000);
    const redrive = await runCli(['redrive', '--state', 'PARKED'], env);
    expect(redrive.code, redrive.stderr).toBe(0);
    await relay.waitFor(/attention {2}nothing waits for a person any more/, 60_000);
    expect(saidTwice()).toBe(1);
  }, 180_000);
});
