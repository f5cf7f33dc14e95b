import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../functions/core/config/load';
import { answerAckLink } from '../../../functions/relay/edge';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import { T0, at, newTable } from '../store/fixtures';

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const MINUTE = 60_000;
const HOST = 'abc123.execute-api.eu-west-1.amazonaws.com';

// T0 is 10:00 UTC, 13:00 on the schedule's clock (Africa/Dar_es_Salaam, UTC+3); the route's is UTC.
const CONFIG = loadConfig(`
provider: { baseUrl: "https://sms.example.co.tz" }
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
schedules:
  ops:
    timezone: Africa/Dar_es_Salaam
    rotation: { people: [asha, baraka], every: 1w, start: "2025-02-24T09:00" }
routes:
  alerts:
    source: alertmanager
    secret: alerts-token
    recipients: ["oncall:ops"]
    escalate:
      - { after: 10m, to: ["person:baraka"] }
      - { after: 30m, to: ["0754999888"] }
    ack: {}
`);

const open = {
  route: 'alerts',
  key: 'g1',
  text: '[FIRING] Disk <b>full</b> & "bad"',
  sentTo: '2557****678',
  nextDueAt: at(10 * MINUTE),
  linkOrigin: `https://${HOST}`,
  now: T0,
};

const visibleText = (html: string): string =>
  html
    .replace(/<style>.*?<\/style>/s, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');

describe('the acknowledge page', () => {
  it('shows the open incident on GET without acknowledging it: names, the schedule clock, what acknowledging stops', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const token = await store.ackToken(incident.id, '255712345678');
    const path = `/a/${token}`;

    for (const method of ['GET', 'HEAD', 'GET']) {
      const page = await answerAckLink({ method, path, receivedAt: at(2 * MINUTE) }, store, CONFIG);
      expect(page.status).toBe(200);
      expect(page.headers).toMatchObject({
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      expect(page.html).toContain('[FIRING] Disk &lt;b&gt;full&lt;/b&gt; &amp; &quot;bad&quot;');
      expect(page.html).toContain(`<form method="post" action="${path}">`);
      expect(page.html).not.toContain('<script');
      const text = visibleText(page.html);
      expect(text).toContain('Not acknowledged yet.');
      expect(text).toContain('Sent to asha (2557****678). Opened 13:00 (2 min ago), route alerts.');
      expect(text).toContain(
        'Acknowledging stops the escalation: next, baraka (2557****111) would be paged at 13:10 (in 8 min), then 1 more step.',
      );
      expect(text).toContain('13:00 (2 min ago) sent to asha (2557****678)');
      expect(text).toContain('Times in Africa/Dar_es_Salaam, 24-hour clock.');
      expect(page.html).not.toMatch(/255712345678|255754000111/);
      expect(text).not.toMatch(/T10:00:00/);
    }
    expect(await store.getIncident(incident.id)).toMatchObject({ state: 'OPEN' });
  });

  it('acknowledges on POST and then says so first, with who and when; a second press changes nothing', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const token = await store.ackToken(incident.id, '255754000111');
    const path = `/a/${token}`;

    const acknowledged = await answerAckLink({ method: 'POST', path, receivedAt: at(12 * MINUTE) }, store, CONFIG);
    expect(acknowledged.status).toBe(200);
    const text = visibleText(acknowledged.html);
    expect(text).toMatch(
      /^ Acknowledged · sms-relay Acknowledged Acknowledged\. Escalation has stopped\. Acknowledged by baraka \(2557\*\*\*\*111\) via link at 13:12 \(just now\)\. Escalation has stopped\. \[FIRING\]/,
    );
    expect(acknowledged.html).not.toContain('<form');
    expect(text).not.toContain('would be paged');
    expect(await store.getIncident(incident.id)).toMatchObject({
      state: 'ACKNOWLEDGED',
      closedBy: '2557****111 via link',
    });
    const again = await answerAckLink({ method: 'POST', path, receivedAt: at(75 * MINUTE) }, store, CONFIG);
    expect(again.html).not.toContain('class="done"');
    // Over an hour ago: the clock alone, as every time the relay shows a person (no "1 h 3 min ago").
    expect(visibleText(again.html)).toContain('Acknowledged by baraka (2557****111) via link at 13:12.');
  });

  it('says first that a resolved incident is resolved, with nothing to press', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const token = await store.ackToken(incident.id, '255712345678');
    await store.closeIncident(incident.id, { state: 'RESOLVED', by: 'an alertmanager webhook', now: at(5 * MINUTE) });
    const page = await answerAckLink({ method: 'GET', path: `/a/${token}`, receivedAt: at(6 * MINUTE) }, store, CONFIG);
    expect(visibleText(page.html)).toMatch(
      /^ Resolved · sms-relay Resolved Resolved by an alertmanager webhook at 13:05 \(1 min ago\)\. Nobody else will be paged\./,
    );
    expect(page.html).not.toContain('<form');
  });

  it('refuses a POST from another site (a foreign Origin, or Sec-Fetch-Site: cross-site) and takes its own', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const path = `/a/${await store.ackToken(incident.id, '255712345678')}`;
    const post = async (headers: Record<string, string>) =>
      await answerAckLink(
        { method: 'POST', path, receivedAt: at(MINUTE), headers: Object.entries({ host: HOST, ...headers }) },
        store,
        CONFIG,
      );

    const foreigns: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: `https://${HOST}.evil.example` },
      { 'sec-fetch-site': 'cross-site' },
      { origin: `https://${HOST}`, 'sec-fetch-site': 'cross-site' },
    ];
    for (const foreign of foreigns) {
      const refused = await post(foreign);
      expect(refused.status, JSON.stringify(foreign)).toBe(403);
      expect(refused.html).not.toContain(incident.text);
    }
    expect(await store.getIncident(incident.id)).toMatchObject({ state: 'OPEN' });

    // The page's own form: same origin, or `Origin: null` (its Referrer-Policy is no-referrer).
    expect((await post({ origin: 'null', 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect(await store.getIncident(incident.id)).toMatchObject({ state: 'ACKNOWLEDGED' });
    expect((await post({ origin: `https://${HOST}` })).status).toBe(200);
  });

  it('answers 404 without detail for unknown, malformed and expired tokens, and 405 for other methods', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const token = await store.ackToken(incident.id, '255712345678');
    await store.closeIncident(incident.id, { state: 'RESOLVED', by: 'a webhook', now: T0 });
    const answers = await Promise.all(
      [`/a/${'A'.repeat(22)}`, '/a/short', `/a/${token}/x`, `/a/${token}`].map(
        async (path) => await answerAckLink({ method: 'GET', path, receivedAt: at(25 * 3_600_000) }, store),
      ),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.html).toBe(answers[0]!.html);
    }
    expect((await answerAckLink({ method: 'DELETE', path: `/a/${token}`, receivedAt: T0 }, store)).status).toBe(405);
  });
});
