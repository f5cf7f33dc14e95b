import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { MAX_JSON_DEPTH } from '../../../../functions/core/defaults';
import { evaluateWebhook, MAX_MESSAGES_PER_WEBHOOK } from '../../../../functions/core/pipeline/evaluate';
import { webhookOf } from '../sources/helpers';

const secret = 'generic-token-for-tests';

function routeWith(options: string) {
  const loaded = loadConfig(`provider: { baseUrl: "https://sms.example.co.tz" }
secrets: s
routes:
  r:
    source: generic
    secret: token
${options.replace(/^/gm, '    ')}
`);
  return loaded.routes.get('r')!;
}

function post(body: unknown, headers: Record<string, string> = {}) {
  return webhookOf({
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
  });
}

describe('evaluateWebhook', () => {
  it('authenticates before anything else', () => {
    const route = routeWith('recipients: ["0712345678"]');
    const evaluation = evaluateWebhook(route, post({ message: 'hi' }, { authorization: 'Bearer wrong' }), { secret });
    expect(evaluation).toMatchObject({ verdict: 'unauthorized', messages: [] });
    expect(evaluation.dedupeKey).toBeUndefined();
  });

  it('skips authentication only when no secret is given (preview)', () => {
    const route = routeWith('recipients: ["0712345678"]');
    expect(
      evaluateWebhook(route, post({ message: 'hi' }, { authorization: 'Bearer wrong' }), { secret: undefined }).verdict,
    ).toBe('send');
  });

  it('answers a bad body with bad-request', () => {
    const route = routeWith('recipients: ["0712345678"]');
    const webhook = webhookOf({ body: '{"message": ', headers: { authorization: `Bearer ${secret}` } });
    expect(evaluateWebhook(route, webhook, { secret })).toMatchObject({
      verdict: 'bad-request',
      reason: 'body is not valid JSON',
    });
  });

  it('renders, resolves and normalises recipients, and reports encoding and segments', () => {
    const route = routeWith(
      'recipients: ["+255 712 345 678", "{{ phone }}", "0712345678"]\ntemplate: "Hello {{ name }}"\nsenderId: ACME',
    );
    const evaluation = evaluateWebhook(route, post({ name: 'Asha', phone: '0754 111 222' }), { secret });
    expect(evaluation.verdict).toBe('send');
    expect(evaluation.messages).toEqual([
      {
        item: 0,
        part: 1,
        parts: 1,
        to: ['255712345678', '255754111222'],
        text: 'Hello Asha',
        senderId: 'ACME',
        encoding: 'GSM-7',
        characters: 10,
        segments: 1,
      },
    ]);
    expect(evaluation.dedupeWindowSeconds).toBeGreaterThan(0);
  });

  it('drops invalid recipients with a reason and sends to the rest', () => {
    const route = routeWith('recipients: ["0712345678", "{{ phone }}"]');
    const evaluation = evaluateWebhook(route, post({ message: 'x', phone: '+254712345678' }), { secret });
    expect(evaluation.messages[0]!.to).toEqual(['255712345678']);
    expect(evaluation.dropped).toHaveLength(1);
    expect(evaluation.dropped[0]!.reason).toBe('no provider for +2547****678');
  });

  it('records why nothing is sent when no valid recipient is left', () => {
    const route = routeWith('recipients: ["{{ phone }}"]');
    const evaluation = evaluateWebhook(route, post({ message: 'x', phone: 'call me' }), { secret });
    expect(evaluation).toMatchObject({ verdict: 'dropped', reason: 'no valid recipient', messages: [] });
    expect(evaluation.skipped).toEqual([{ item: 0, verdict: 'dropped', reason: 'no valid recipient', text: 'x' }]);
  });

  it('filters with `when` and says why', () => {
    const route = routeWith(`recipients: ["0712345678"]\nwhen: "level == 'critical'"`);
    expect(evaluateWebhook(route, post({ level: 'info', message: 'x' }), { secret })).toMatchObject({
      verdict: 'filtered',
      reason: `when "level == 'critical'" is false`,
    });
    expect(evaluateWebhook(route, post({ level: 'critical', message: 'x' }), { secret }).verdict).toBe('send');
  });

  it('fans out one SMS per array element, with `item` in scope and `when` per item', () => {
    const route = routeWith(
      `recipients: ["0712345678"]\nfanOut: alerts\nwhen: "item.status == 'firing'"\ntemplate: "{{ item.name }} is {{ item.status }} ({{ group }})"`,
    );
    const evaluation = evaluateWebhook(
      route,
      post({
        group: 'db',
        alerts: [
          { name: 'a', status: 'firing' },
          { name: 'b', status: 'resolved' },
          { name: 'c', status: 'firing' },
        ],
      }),
      { secret },
    );
    expect(evaluation.messages.map((message) => [message.item, message.text])).toEqual([
      [0, 'a is firing (db)'],
      [2, 'c is firing (db)'],
    ]);
    expect(evaluation.skipped).toEqual([
      { item: 1, verdict: 'filtered', reason: `when "item.status == 'firing'" is false` },
    ]);
  });

  it('drops a webhook whose fan-out path is not an array', () => {
    const route = routeWith('recipients: ["0712345678"]\nfanOut: alerts');
    expect(evaluateWebhook(route, post({ alerts: 'none' }), { secret })).toMatchObject({
      verdict: 'dropped',
      reason: 'fanOut "alerts" is not an array in this payload',
    });
  });

  it('drops an item whose template hits a limit, with the reason', () => {
    const route = routeWith('recipients: ["0712345678"]\ntemplate: "{% for i in (1..30000000) %}x{% endfor %}"');
    const evaluation = evaluateWebhook(route, post({ message: 'x' }), { secret });
    expect(evaluation.verdict).toBe('dropped');
    expect(evaluation.reason).toMatch(
      /^the template cannot be rendered on this payload: memory limit exceeded: the template built more than 10000000 characters or items/,
    );
  });

  it('gives all the renders of one webhook one time budget, fan-out items included', () => {
    // Each item loops 9 million times: seconds apiece with a budget per render, one budget for all.
    const route = routeWith(
      'recipients: ["0712345678"]\nfanOut: items\ntemplate: "{% for a in payload.big %}{% for b in payload.big %}{% endfor %}{% endfor %}{{ item }}"',
    );
    const big = Array.from({ length: 3_000 }, (_, index) => index);
    const evaluation = evaluateWebhook(route, post({ big, items: Array.from({ length: 100 }, (_, index) => index) }), {
      secret,
    });
    expect(evaluation.verdict).toBe('dropped');
    expect(evaluation.skipped).toHaveLength(100);
    for (const skip of evaluation.skipped)
      expect(skip.reason).toMatch(
        /^the template cannot be rendered on this payload: render limit exceeded: the template ran longer than 1000 ms/,
      );
  }, 30_000);

  it('caps the messages of one webhook at whole items, and says how many items were left out', () => {
    const route = routeWith('recipients: ["0712345678"]\nfanOut: items\ntemplate: "{{ item }}"');
    const evaluation = evaluateWebhook(route, post({ items: Array.from({ length: 70 }, (_, index) => `n${index}`) }), {
      secret,
    });
    expect(evaluation.messages).toHaveLength(MAX_MESSAGES_PER_WEBHOOK);
    expect(evaluation.overCap).toEqual({
      item: 50,
      items: 20,
      reason: '20 items not sent: beyond the cap of 50 SMS per webhook',
    });
    expect(evaluation.warnings).toContain('20 items not sent: beyond the cap of 50 SMS per webhook');
  });

  it("never cuts an item's parts at the cap", () => {
    const long = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
    const route = routeWith('recipients: ["0712345678"]\nfanOut: items\ntemplate: "{{ item }}"\nlength: split');
    const evaluation = evaluateWebhook(route, post({ items: Array.from({ length: 30 }, () => long) }), { secret });
    const parts = evaluation.messages.filter((message) => message.item === 0).length;
    expect(parts).toBeGreaterThan(1);
    const whole = Math.floor(MAX_MESSAGES_PER_WEBHOOK / parts);
    expect(evaluation.messages).toHaveLength(whole * parts);
    expect(evaluation.overCap).toMatchObject({ item: whole, items: 30 - whole });
  });

  describe('maxRecipients', () => {
    const numbers = (count: number) =>
      Array.from({ length: count }, (_, index) => `07${String(12_000_000 + index).padStart(8, '0')}`).join(',');

    it('drops a message whose templated recipients number more than the cap (10 by default), naming the count', () => {
      const route = routeWith('recipients: ["0712345678", "{{ phone }}"]');
      const evaluation = evaluateWebhook(route, post({ message: 'Order paid', phone: numbers(200) }), { secret });
      expect(evaluation).toMatchObject({
        verdict: 'dropped',
        reason: '201 recipients, more than maxRecipients (10)',
        messages: [],
      });
      expect(evaluation.skipped).toEqual([
        { item: 0, verdict: 'dropped', reason: '201 recipients, more than maxRecipients (10)', text: 'Order paid' },
      ]);
    });

    it('counts numbers after normalisation and de-duplication', () => {
      const route = routeWith('recipients: ["0712345678", "{{ phone }}"]');
      const same = Array.from({ length: 30 }, () => '+255 712 345 678').join(';');
      const evaluation = evaluateWebhook(route, post({ message: 'x', phone: `${same},${numbers(9)}` }), { secret });
      expect(evaluation.verdict).toBe('send');
      expect(evaluation.messages[0]!.to).toHaveLength(10);
    });

    it("takes a route's own cap", () => {
      const route = routeWith('recipients: ["{{ phone }}"]\nmaxRecipients: 250');
      expect(
        evaluateWebhook(route, post({ message: 'x', phone: numbers(200) }), { secret }).messages[0]!.to,
      ).toHaveLength(200);
    });

    it('refuses a config whose literal recipients are more than the cap', () => {
      expect(() => routeWith(`recipients: ["${numbers(11)}"]`)).toThrow(
        /routes\.r\.recipients: 11 numbers, more than maxRecipients \(10\)/,
      );
    });
  });

  describe('payloads no retry can fix', () => {
    it('drops an item whose template fails on the data, with the reason', () => {
      const route = routeWith('recipients: ["0712345678"]\ntemplate: "{{ message | upcase }}"');
      const evaluation = evaluateWebhook(route, post({ message: { toString: 'x' } }), { secret });
      expect(evaluation).toMatchObject({ verdict: 'dropped', messages: [] });
      expect(evaluation.reason).toMatch(/^the template cannot be rendered on this payload: /);
      expect(evaluation.dedupeKey).toMatch(/^generic:body:/);
    });

    it('keeps the other items of a fan-out when one fails to render', () => {
      const route = routeWith('recipients: ["0712345678"]\nfanOut: items\ntemplate: "{{ item.name | upcase }}"');
      const evaluation = evaluateWebhook(
        route,
        post({ items: [{ name: 'a' }, { name: { toString: 1 } }, { name: 'c' }] }),
        { secret },
      );
      expect(evaluation.messages.map((message) => message.text)).toEqual(['A', 'C']);
      expect(evaluation.skipped).toEqual([
        { item: 1, verdict: 'dropped', reason: expect.stringMatching(/^the template cannot be rendered/) },
      ]);
    });

    it(`drops JSON nested deeper than ${MAX_JSON_DEPTH} levels before anything recurses over it`, () => {
      const route = routeWith('recipients: ["0712345678"]');
      const deep = `{"message":${'['.repeat(60_000)}${']'.repeat(60_000)}}`;
      const webhook = webhookOf({
        body: deep,
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      });
      const evaluation = evaluateWebhook(route, webhook, { secret });
      expect(evaluation).toMatchObject({
        verdict: 'dropped',
        reason: `the payload cannot be read: JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
        messages: [],
      });
      expect(evaluation.dedupeKey).toMatch(/^generic:unreadable:[0-9a-f]{64}$/);
      expect(evaluation.dedupeWindowSeconds).toBe(86_400);
    });

    it('still answers broken JSON that opens many brackets as a bad request', () => {
      const route = routeWith('recipients: ["0712345678"]');
      const webhook = webhookOf({
        body: `{"message":${'['.repeat(500)}`,
        headers: { authorization: `Bearer ${secret}` },
      });
      expect(evaluateWebhook(route, webhook, { secret })).toMatchObject({
        verdict: 'bad-request',
        reason: 'body is not valid JSON',
      });
    });

    it(`reads JSON nested ${MAX_JSON_DEPTH} levels, and brackets inside strings do not count`, () => {
      const route = routeWith('recipients: ["0712345678"]\ntemplate: "{{ note }}"');
      const nested = `${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}`;
      const body = `{"note":"[[[[{{{{ \\" ]]]]","deep":${nested}}`;
      const webhook = webhookOf({
        body: `${'{"a":'.repeat(0)}${body}`,
        headers: { authorization: `Bearer ${secret}` },
      });
      expect(evaluateWebhook(route, webhook, { secret }).messages[0]!.text).toBe('[[[[{{{{ " ]]]]');
    });
  });

  it('splits long texts into numbered parts under the split policy', () => {
    const route = routeWith('recipients: ["0712345678"]\nlength: split\nmaxParts: 3');
    const long = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
    const evaluation = evaluateWebhook(route, post({ message: long }), { secret });
    expect(evaluation.messages.length).toBeGreaterThan(1);
    for (const message of evaluation.messages) {
      expect(message.characters).toBeLessThanOrEqual(160);
      expect(message.parts).toBe(evaluation.messages.length);
    }
  });

  it('truncates by default and rejects under the reject policy', () => {
    const long = 'x '.repeat(200);
    const truncated = evaluateWebhook(routeWith('recipients: ["0712345678"]'), post({ message: long }), { secret });
    expect(truncated.messages).toHaveLength(1);
    expect(truncated.messages[0]!.characters).toBeLessThanOrEqual(160);
    expect(truncated.warnings.join()).toMatch(/truncated/);

    const rejected = evaluateWebhook(routeWith('recipients: ["0712345678"]\nlength: reject'), post({ message: long }), {
      secret,
    });
    expect(rejected.verdict).toBe('dropped');
    expect(rejected.messages).toHaveLength(0);
    expect(rejected.reason).toBe('too-long: The message is 399 characters; the limit is 160.');
    expect(rejected.skipped[0]!.text).toBe(long);
  });

  it('drops a message that renders empty', () => {
    const evaluation = evaluateWebhook(
      routeWith('recipients: ["0712345678"]\ntemplate: "{{ nothing }}"'),
      post({ message: 'x' }),
      { secret },
    );
    expect(evaluation).toMatchObject({ verdict: 'dropped', reason: expect.stringMatching(/^empty-message: /) });
  });

  it('keeps integers beyond 2^53 exact in the text', () => {
    const route = routeWith('recipients: ["0712345678"]\ntemplate: "Order {{ id }}"');
    const webhook = webhookOf({ body: '{"id": 820982911946154508}', headers: { authorization: `Bearer ${secret}` } });
    expect(evaluateWebhook(route, webhook, { secret }).messages[0]!.text).toBe('Order 820982911946154508');
  });

  it('uses the route dedupe window over the source default', () => {
    const route = routeWith('recipients: ["0712345678"]\ndedupeWindow: 2h');
    expect(evaluateWebhook(route, post({ message: 'x' }), { secret }).dedupeWindowSeconds).toBe(7200);
  });

  it('returns its fields in a fixed order (records and logs serialise them as they come)', () => {
    const route = routeWith(`recipients: ["0712345678"]\nwhen: "level == 'critical'"`);
    const fields = ['dedupeKey', 'dedupeWindowSeconds', 'messages', 'skipped', 'dropped', 'warnings'];
    expect(Object.keys(evaluateWebhook(route, post({ level: 'critical', message: 'x' }), { secret }))).toEqual([
      'verdict',
      ...fields,
    ]);
    expect(Object.keys(evaluateWebhook(route, post({ level: 'info', message: 'x' }), { secret }))).toEqual([
      'verdict',
      'reason',
      ...fields,
    ]);
  });
});

describe("evaluateWebhook with a pack's recipients and critical hooks (Opsgenie's responders and priority)", () => {
  const people = `people:
  asha: { phone: "0712345678" }
  baraka: { phone: "0754000111" }
schedules:
  ops: { timezone: Africa/Dar_es_Salaam, rotation: { people: [baraka], every: 1w, start: "2026-11-30T09:00" } }`;
  /** A generic route whose pack also reads `to` (names of the config) and `urgent` from the body. */
  function hooked(priority = 'normal') {
    const loaded = loadConfig(`provider: { baseUrl: "https://sms.example.co.tz" }
${people}
routes:
  r:
    source: generic
    secret: token
    recipients: ["person:asha"]
    priority: ${priority}
`);
    const route = loaded.routes.get('r')!;
    const pack = {
      ...route.pack,
      recipients: (body: unknown) => ((body as { to?: string[] }).to ?? []).filter((entry) => entry !== 'person:x'),
      critical: (body: unknown) => (body as { urgent?: boolean }).urgent === true,
    };
    return { ...route, pack };
  }

  it("sends to the entries the webhook names instead of the route's, and says which it used", () => {
    const evaluation = evaluateWebhook(hooked(), post({ message: 'hi', to: ['oncall:ops', 'person:asha'] }), {
      secret,
    });
    expect(evaluation.messages.map((message) => message.to)).toEqual([['255754000111', '255712345678']]);
    expect(evaluation.recipients?.entries.map((entry) => entry.display)).toEqual(['oncall:ops', 'person:asha']);
  });

  it("sends to the route's recipients when the webhook names no one", () => {
    const evaluation = evaluateWebhook(hooked(), post({ message: 'hi', to: ['person:x'] }), { secret });
    expect(evaluation.messages.map((message) => message.to)).toEqual([['255712345678']]);
    expect(evaluation.recipients).toBeUndefined();
  });

  it('marks the SMS critical when the pack says so on a normal route, and only then', () => {
    const urgent = evaluateWebhook(hooked(), post({ message: 'hi', urgent: true }), { secret });
    expect(urgent.messages.map((message) => message.critical)).toEqual([true]);
    const calm = evaluateWebhook(hooked(), post({ message: 'hi', urgent: false }), { secret });
    expect(calm.messages[0]).not.toHaveProperty('critical');
    // A critical route's SMS are critical already: nothing to mark.
    const onCritical = evaluateWebhook(hooked('critical'), post({ message: 'hi', urgent: true }), { secret });
    expect(onCritical.messages[0]).not.toHaveProperty('critical');
  });
});
