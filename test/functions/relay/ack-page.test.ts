import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const open = { route: 'alerts', key: 'g1', text: '[FIRING] Disk <b>full</b> & "bad"', sentTo: '2557****678', now: T0 };

describe('the acknowledge link', () => {
  it('shows the incident on GET without acknowledging it, acknowledges on POST, and says who', async () => {
    const { store } = await newTable(db);
    const { incident } = await store.openIncident(open);
    const token = await store.ackToken(incident.id, '255712345678');
    const path = `/a/${token}`;

    for (const method of ['GET', 'HEAD', 'GET']) {
      const page = await answerAckLink({ method, path, receivedAt: at(60_000) }, store);
      expect(page.status).toBe(200);
      expect(page.headers).toMatchObject({
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      expect(page.html).toContain('[FIRING] Disk &lt;b&gt;full&lt;/b&gt; &amp; &quot;bad&quot;');
      expect(page.html).toContain(`<form method="post" action="${path}">`);
      expect(page.html).toContain('2557****678');
      expect(page.html).not.toContain('255712345678');
    }
    expect(await store.getIncident(incident.id)).toMatchObject({ state: 'OPEN' });

    const acknowledged = await answerAckLink({ method: 'POST', path, receivedAt: at(120_000) }, store);
    expect(acknowledged.status).toBe(200);
    expect(acknowledged.html).toContain('Acknowledged. Escalation has stopped.');
    expect(acknowledged.html).toContain(`Acknowledged by 2557****678 via link at ${at(120_000).toISOString()}`);
    expect(acknowledged.html).not.toContain('<form');
    expect(await store.getIncident(incident.id)).toMatchObject({
      state: 'ACKNOWLEDGED',
      closedBy: '2557****678 via link',
    });
    // A second press changes nothing and still shows who acknowledged.
    const again = await answerAckLink({ method: 'POST', path, receivedAt: at(180_000) }, store);
    expect(again.html).not.toContain('Escalation has stopped');
    expect(again.html).toContain(`at ${at(120_000).toISOString()}`);
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
