import { localTime } from '../../functions/core/local-time';
import { describe, expect, testWithRelay } from '../helpers/fixtures';
import { eventually, runCli } from './support';

const API_KEY = 'oncall-test-provider-key-3b9d';
const ZONE = 'Africa/Dar_es_Salaam';
const ASHA = '255712345678';
const BARAKA = '255754000111';

const pad = (value: number): string => String(value).padStart(2, '0');
const hourAgo = localTime(new Date(Date.now() - 3_600_000), ZONE);
/** The rotation's start: the hour before this one began, on the zone's wall clock, so asha's first week runs now. */
const start = `${hourAgo.year}-${pad(hourAgo.month)}-${pad(hourAgo.day)}T${pad(hourAgo.hour)}:00`;

const test = testWithRelay({
  sandbox: { apiKey: API_KEY, balance: 100_000, rate: 20, senderIds: ['SMSRELAY'], defaultSenderId: 'SMSRELAY' },
  config: `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
schedules:
  ops:
    timezone: ${ZONE}
    rotation: { people: [asha, baraka], every: 1w, start: "${start}" }
routes:
  paging:
    source: generic
    secret: generic-token
    recipients: ["oncall:ops"]
    template: "{{ message }}"
`,
});

describe('who is on call (npm start, sms-relay oncall)', () => {
  test("pages the rotation's person, then the person an override from the CLI puts on call", async ({
    relay: { env },
    sandbox,
    postWebhook,
  }) => {
    const page = async (message: string): Promise<void> => {
      expect((await postWebhook('paging', { message })).status).toBe(202);
      await eventually(async () => sandbox.messages().find((sent) => sent.message === message), {
        what: `"${message}" at the SMS service`,
      });
    };
    const onCall = async (): Promise<unknown> => {
      const listed = await runCli(['oncall', '--json'], env);
      expect(listed.stderr).toBe('');
      return JSON.parse(listed.stdout);
    };

    // asha's first week began an hour ago (local wall clock); it ends a week after its start.
    const [day, time] = start.split('T') as [string, string];
    const weekLater = new Date(Date.parse(`${day}T${time}:00+03:00`) + 7 * 86_400_000).toISOString();
    expect(await onCall()).toEqual([{ schedule: 'ops', person: 'asha', until: weekLater }]);
    await page('disk full on db-01');
    expect(sandbox.messages().find((sent) => sent.message === 'disk full on db-01')?.phoneNumbers).toEqual([ASHA]);

    const before = Date.now();
    const override = await runCli(
      ['oncall', 'override', 'ops', '--person', 'baraka', '--for', '8h', '--reason', 'asha travels'],
      env,
    );
    expect(override.stderr).toBe('');
    expect(override.stdout).toMatch(
      /^baraka is on call for ops until (\d{4}-\d\d-\d\d )?\d\d:\d\d Africa\/Dar_es_Salaam: asha travels \(the running relay \(pid \d+, http:\/\/127\.0\.0\.1:\d+\)\)\.\n$/,
    );
    const after = Date.now();
    const [line] = (await onCall()) as [{ schedule: string; person: string; until: string }];
    expect(Object.keys(line)).toEqual(['schedule', 'person', 'until']);
    expect(line).toMatchObject({ schedule: 'ops', person: 'baraka' });
    expect(Date.parse(line.until)).toBeGreaterThanOrEqual(before + 8 * 3_600_000);
    expect(Date.parse(line.until)).toBeLessThanOrEqual(after + 8 * 3_600_000);
    expect((await runCli(['oncall'], env)).stdout).toMatch(
      /^ops {2}baraka {2}until (\d{4}-\d\d-\d\d )?\d\d:\d\d Africa\/Dar_es_Salaam {2}override: asha travels\n$/,
    );

    await page('disk full on db-02');
    expect(sandbox.messages().find((sent) => sent.message === 'disk full on db-02')?.phoneNumbers).toEqual([BARAKA]);

    const refused = await runCli(['oncall', 'override', 'ops', '--person', 'carol', '--for', '8h'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('unknown person "carol"; the config\'s people: asha, baraka');
  }, 180_000);
});
