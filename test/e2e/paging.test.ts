import { describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../local/sandbox/types';
import { type PostWebhook, testWithRelay } from '../helpers/fixtures';
import { eventually, fixture, moveClockAhead, runCli, type RelayOnSandbox } from './support';

const API_KEY = 'paging-test-provider-key-7c1e';
const ASHA = '255712345678';
const BARAKA = '255754000111';

let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;
let postWebhook: PostWebhook;

const test = testWithRelay({
  sandbox: {
    apiKey: API_KEY,
    balance: 100_000,
    rate: 20,
    senderIds: ['SMSRELAY'],
    defaultSenderId: 'SMSRELAY',
  },
  movableClock: true,
  config: `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
routes:
  alerts:
    source: alertmanager
    secret: alerts-token
    recipients: ["person:asha"]
    escalate:
      - after: 1m
        to: ["person:baraka"]
    ack: {}
`,
});
test.beforeAll(({ sandbox: service, relay, postWebhook: poster }) => {
  postWebhook = poster;
  sandbox = service;
  running = relay;
}, 180_000);

/** The Alertmanager fixture as sent, with its status and fingerprint set (each a new delivery of one group). */
const alert = (status: 'firing' | 'resolved', fingerprint: string, startsAt?: string): string => {
  const body = JSON.parse(fixture('alertmanager/firing-single.json').toString('utf8')) as {
    status: string;
    alerts: { status: string; fingerprint: string; startsAt: string }[];
  };
  body.status = status;
  for (const each of body.alerts)
    Object.assign(each, { status, fingerprint }, startsAt === undefined ? {} : { startsAt });
  return JSON.stringify(body);
};

describe("paging through npm start (escalation after 1m: the runtime's clock is moved past it)", () => {
  it('sends the alert with a link, escalates after a minute, a GET does not acknowledge, a POST does, a repeat while acknowledged opens nothing, a resolve closes the next, sms-relay ack the third, and a re-firing inside the dedupe window pages again', async () => {
    const { relay, env } = running!;
    const post = async (body: string): Promise<number> => (await postWebhook('alerts', Buffer.from(body))).status;
    const link = new RegExp(`^(.+) ${relay.url.replace(/[.]/g, '\\.')}/a/([A-Za-z0-9_-]{22})$`);
    const incidents = async (): Promise<{ id: string; level: number }[]> => {
      const listed = await runCli(['incidents', '--json'], env);
      expect(listed.stderr).toBe('');
      return JSON.parse(listed.stdout) as { id: string; level: number }[];
    };

    expect(await post(alert('firing', 'f1'))).toBe(202);
    const first = await eventually(async () => sandbox.messages().find((sent) => sent.phoneNumbers.includes(ASHA)), {
      what: 'the alert SMS to asha',
    });
    const [, text, ashaToken] = link.exec(first.message) ?? [];
    expect(text).toContain('DiskAlmostFull');
    const [open] = await incidents();
    expect(open).toMatchObject({ level: 0 });

    // Nothing escalates before its minute; then the runtime's clock is moved past it instead of waiting.
    expect(sandbox.messages().filter((sent) => sent.phoneNumbers.includes(BARAKA))).toEqual([]);
    moveClockAhead(running!, 61_000);
    const escalation = await eventually(
      async () => sandbox.messages().find((sent) => sent.phoneNumbers.includes(BARAKA)),
      { what: 'the escalation SMS to baraka', timeoutMs: 60_000, intervalMs: 500 },
    );
    const barakaToken = link.exec(escalation.message)?.[2];
    expect(barakaToken).toBeDefined();
    expect(barakaToken).not.toBe(ashaToken);
    expect(await incidents()).toEqual([expect.objectContaining({ id: open!.id, level: 1 })]);

    // A link previewer opens asha's link: the page shows the incident and acknowledges nothing.
    const page = await fetch(`${relay.url}/a/${ashaToken!}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('DiskAlmostFull');
    expect(html).toContain('2557****678');
    expect(html).toContain('<button type="submit">Acknowledge</button>');
    expect(await incidents()).toHaveLength(1);
    expect((await fetch(`${relay.url}/a/${'x'.repeat(22)}`)).status).toBe(404);

    // A form on another site posting to the link acknowledges nothing.
    const forged = await fetch(`${relay.url}/a/${barakaToken!}`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(forged.status).toBe(403);
    expect(await incidents()).toHaveLength(1);

    const acknowledged = await fetch(`${relay.url}/a/${barakaToken!}`, { method: 'POST' });
    expect(acknowledged.status).toBe(200);
    expect(await acknowledged.text()).toContain('Acknowledged by baraka (2557****111) via link');
    expect(await incidents()).toEqual([]);

    // Alertmanager sends the still-firing group again (another alert joined it): the acknowledgement
    // holds, no new incident; the group's resolve then ends the acknowledged incident.
    expect(await post(alert('firing', 'f1b'))).toBe(202);
    expect(await incidents()).toEqual([]);
    expect(await post(alert('resolved', 'f1b'))).toBe(202);
    expect(await (await fetch(`${relay.url}/a/${barakaToken!}`)).text()).toContain(
      'Resolved by a alertmanager webhook',
    );

    // The group fires again (a new incident), then resolves: the resolve closes it.
    expect(await post(alert('firing', 'f2'))).toBe(202);
    await eventually(async () => ((await incidents()).length === 1 ? true : undefined), { what: 'a new incident' });
    expect(await post(alert('resolved', 'f2'))).toBe(202);
    expect(await incidents()).toEqual([]);

    // And once more, acknowledged from the terminal.
    expect(await post(alert('firing', 'f3'))).toBe(202);
    const [third] = await eventually(
      async () => {
        const listed = await incidents();
        return listed.length === 1 ? listed : undefined;
      },
      { what: 'a third incident' },
    );
    const ack = await runCli(['ack', third!.id], env);
    expect(ack.stderr).toBe('');
    expect(ack.stdout).toMatch(
      new RegExp(
        `^Incident ${third!.id} of route alerts acknowledged; its escalation has stopped \\(the running relay`,
      ),
    );
    expect(await incidents()).toEqual([]);
    expect((await runCli(['ack', third!.id], env)).stdout).toMatch(/was already acknowledged by sms-relay ack at /);
    const sentToBaraka = sandbox.messages().filter((sent) => sent.phoneNumbers.includes(BARAKA));
    expect(sentToBaraka).toHaveLength(1);

    // The alert resolves and fires again at once (a flapping disk): a new firing, not a retry, pages.
    expect(await post(alert('resolved', 'f3'))).toBe(202);
    expect(await post(alert('firing', 'f3', '2025-11-21T06:14:05.000Z'))).toBe(202);
    expect(await incidents()).toEqual([expect.objectContaining({ level: 0 })]);
  }, 300_000);

  it("tells in sms-relay incidents what each step's SMS became and what is pending: an escalation at balance 0 is PARKED, not 'escalated'", async () => {
    const { relay, env, secrets } = running!;
    const post = async (body: string): Promise<number> =>
      (
        await fetch(`${relay.url}/hooks/alerts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secrets['alerts-token']!}`, 'content-type': 'application/json' },
          body,
        })
      ).status;
    // Another alert group: an incident of its own, whatever the first story left open.
    const other = JSON.parse(alert('firing', 'f4')) as { groupKey: string };
    other.groupKey = '{}/{severity="critical"}:{alertname="DiskFull"}';
    const sentBefore = sandbox.messages().length;
    expect(await post(JSON.stringify(other))).toBe(202);
    await eventually(async () => (sandbox.messages().length > sentBefore ? true : undefined), {
      what: 'the alert SMS to asha',
    });
    sandbox.setBalance(0);
    // The offset is from the real clock: the first story already moved it 61 s.
    moveClockAhead(running!, 122_000);
    type Listed = {
      id: string;
      key: string;
      story: { event: string; sms: { state: string }[] | null }[];
      pending: string;
    };
    const [parked] = await eventually(
      async () => {
        const listed = (JSON.parse((await runCli(['incidents', '--json'], env)).stdout) as Listed[]).filter(
          (incident) => incident.key === other.groupKey,
        );
        const escalated = listed[0]?.story.find((entry) => entry.event === 'escalated');
        return escalated?.sms?.[0]?.state === 'PARKED' ? listed : undefined;
      },
      { what: 'the escalation SMS parked at balance 0', timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(parked!.story[0]).toMatchObject({ event: 'opened', sms: null });
    expect(parked!.pending).toMatch(
      /^1 SMS not delivered: PARKED \(escalated to 2557\*{4}111\): insufficient balance: top up/,
    );
    expect(parked!.pending).toMatch(/no escalation step left: it stays open until acknowledged/);

    const text = await runCli(['incidents', '--tz', 'Europe/Berlin'], env);
    expect(text.stderr).toBe('');
    // The runtime's clock runs a minute ahead of this one: the step reads "in 1 min" or "just now".
    expect(text.stdout).toMatch(/\n {2}\d\d:\d\d( \([^)]+\))? {2}escalated to 2557\*{4}111 {2}PARKED\n/);
    expect(text.stdout).toContain(`${parked!.id}  alerts  level 1  opened `);
    expect(text.stdout).toContain('  pending: 1 SMS not delivered: PARKED');
    expect(text.stdout).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/);

    sandbox.setBalance(100_000);
    expect((await runCli(['ack', parked!.id], env)).stderr).toBe('');
  }, 180_000);
});
