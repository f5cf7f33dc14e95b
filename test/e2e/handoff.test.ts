import { describe, expect, it } from 'vitest';
import { localTime } from '../../functions/core/local-time';
import type { RunningSandbox } from '../../local/sandbox/types';
import { testWithRelay } from '../helpers/fixtures';
import { eventually, moveClockAhead, type RelayOnSandbox } from './support';

const API_KEY = 'handoff-test-provider-key-93ab';
const ASHA = '255712345678';
const ZONE = 'Africa/Dar_es_Salaam';

let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;
/** The rotation's first shift: five minutes from now on the zone's clock, to the minute. */
let start: string;

const pad = (n: number): string => String(n).padStart(2, '0');

const test = testWithRelay({
  sandbox: {
    apiKey: API_KEY,
    balance: 100_000,
    rate: 20,
    senderIds: ['SMSRELAY'],
    defaultSenderId: 'SMSRELAY',
  },
  movableClock: true,
  config: () => {
    const at = localTime(new Date(Date.now() + 5 * 60_000), ZONE);
    start = `${at.year}-${pad(at.month)}-${pad(at.day)}T${pad(at.hour)}:${pad(at.minute)}`;
    return `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
schedules:
  ops:
    timezone: ${ZONE}
    rotation: { people: [asha, baraka], every: 1d, start: "${start}" }
    notifyHandoff: true
routes:
  alerts:
    source: alertmanager
    secret: alerts-token
    recipients: ["oncall:ops"]
`;
  },
});
test.beforeAll(({ sandbox: service, relay }) => {
  sandbox = service;
  running = relay;
}, 180_000);

describe("notifyHandoff through npm start (the runtime's clock moved past the first shift's start)", () => {
  it('texts the incoming person when the shift begins', async () => {
    expect((await fetch(`${running!.relay.url}/health`)).ok).toBe(true);
    moveClockAhead(running!, 6 * 60_000);
    const handoff = await eventually(async () => sandbox.messages().find((sent) => sent.phoneNumbers.includes(ASHA)), {
      what: 'the handoff SMS to asha',
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    const [, time] = start.split('T');
    expect(handoff.message).toMatch(
      new RegExp(`^You are on call for ops until \\d{4}-\\d\\d-\\d\\d ${time} \\(${ZONE}\\)$`),
    );
  });
});
