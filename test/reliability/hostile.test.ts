import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startTrickle } from '../helpers/trickle';
import type { RouteInput } from './support/config';
import { call, type HttpAnswer } from './support/http';
import { liveRecords, waitForFinal, waitUntil } from './support/records';
import { runId, type Scenario, startScenario } from './support/scenario';
import { bearerHeaders, shopifyHeaders, woocommerceHeaders } from './support/signers';

/**
 * Hostile and oversized input against the local runtime: what a stranger who fills one payload
 * field can make the relay spend, and what a large customer's traffic does to the bookkeeping.
 */

// The example routes that name their recipients by number or template: a route paging `oncall:` or
// `person:` needs the config's people and schedules, which this scenario's config does not carry.
const LOCAL_ROUTES = Object.fromEntries(
  Object.entries(
    (
      parse(readFileSync(new URL('../../config/local.yaml', import.meta.url), 'utf8')) as {
        routes: Record<string, RouteInput>;
      }
    ).routes,
  ).filter(([, route]) => !route.recipients.some((entry) => /^\s*(person|oncall):/.test(entry))),
);

/** `count` distinct Tanzanian mobile numbers in `separator`-joined text, as a stuffed field holds them. */
function numbers(count: number, separator = ','): string {
  return Array.from({ length: count }, (_, index) => `07${String(20_000_000 + index).padStart(8, '0')}`).join(
    separator,
  );
}

/** Which payload field feeds each example route's templated recipient, and a signed body with it stuffed. */
const STUFFED: Record<
  string,
  (
    secrets: Readonly<Record<string, string>>,
    phones: string,
    tag: string,
  ) => { headers: Record<string, string>; body: string }
> = {
  alerts: (secrets, phones, tag) => {
    const body = JSON.stringify({
      receiver: 'sms',
      status: 'firing',
      groupKey: `{}:{alertname="${tag}"}`,
      version: '4',
      commonLabels: { alertname: tag },
      commonAnnotations: { summary: tag, oncall_phone: phones },
      alerts: [{ status: 'firing', labels: { alertname: tag }, annotations: {}, fingerprint: tag }],
    });
    return { headers: bearerHeaders(secrets['alerts-token']!), body };
  },
  orders: (secrets, phones, tag) => {
    const body = JSON.stringify({
      id: 4_000_000 + Number.parseInt(tag.slice(-6), 16),
      name: `#${tag}`,
      total_price: '10.00',
      currency: 'TZS',
      customer: { first_name: 'Eve', phone: phones },
    });
    return { headers: shopifyHeaders(secrets['shopify-secret']!, body), body };
  },
  shop: (secrets, phones, tag) => {
    const body = JSON.stringify({
      id: Number.parseInt(tag.slice(-6), 16),
      number: tag,
      status: 'processing',
      total: '10.00',
      currency: 'TZS',
      billing: { first_name: 'Eve', phone: phones },
    });
    return { headers: woocommerceHeaders(secrets['woocommerce-secret']!, body), body };
  },
  'grafana-oncall': (secrets, phones, tag) => {
    const body = JSON.stringify({
      event: { type: 'personal notification', time: '2026-11-28T07:12:03.518204+00:00', user: { phone: phones } },
      user: { id: `U${tag}`, username: 'eve' },
      alert_group: { id: `I${tag}`, alerts_count: 1, state: 'firing', title: tag },
      alert_group_id: `I${tag}`,
    });
    return { headers: bearerHeaders(secrets['grafana-oncall-token']!), body };
  },
  // notify (generic) texts one fixed number in config/local.yaml: a generic `{{ phone }}` route is
  // stuffed in bad-input.test.ts and leaks.test.ts. goalert's recipient is the URL's `?to=`, which
  // the sender who holds the route's token writes, not a payload field; its allow-list and
  // refusals are tested in test/functions/core/recipients/allow.test.ts and test/e2e/oncall-tools.test.ts.
};

const scenarios: Scenario[] = [];
afterAll(async () => {
  await Promise.all(scenarios.map((scenario) => scenario.close()));
});

describe('hostile input: recipients stuffed into every templated field of the example routes', () => {
  it('sends nothing to stuffed numbers, on every route and with every separator, and records why', async () => {
    const templated = Object.entries(LOCAL_ROUTES).filter(
      ([id, route]) => id !== 'goalert' && route.recipients.some((entry) => entry.includes('{{')),
    );
    expect(templated.map(([id]) => id).sort()).toEqual(Object.keys(STUFFED).sort());
    const scenario = await startScenario({ label: 'hostile-recipients', routes: LOCAL_ROUTES });
    scenarios.push(scenario);
    const run = runId();

    const ids: string[] = [];
    for (const [route] of templated) {
      for (const [variant, phones] of [
        ['commas', numbers(200)],
        ['semicolons', numbers(50, ';')],
        ['lines', numbers(3_000, '\n')],
        ['spaced', numbers(20, ', ')],
      ] as const) {
        const tag = `${run}${variant}${route}`.slice(0, 40);
        const { headers, body } = STUFFED[route]!(
          scenario.secrets,
          phones,
          `${run}${Buffer.from(variant + route)
            .toString('hex')
            .slice(0, 6)}`,
        );
        const answer = await call(scenario.runtime.baseUrl, {
          method: 'POST',
          path: `/hooks/${route}`,
          headers: { 'content-type': 'application/json', ...headers },
          body,
        });
        expect(answer.status, `${route} ${variant}: ${answer.text}`).toBe(200);
        expect(answer.json?.['status'], `${route} ${variant}`).toBe('dropped');
        // A route with an allow-list refuses the first number outside it before counting them.
        const refusal =
          LOCAL_ROUTES[route]?.allowRecipients === undefined
            ? /^\d+ recipients, more than maxRecipients \(\d+\)$/
            : /^no valid recipient: 2557\*{4}\d{3} is not in allowRecipients/;
        expect(String(answer.json?.['reason']), tag).toMatch(refusal);
        ids.push(...(answer.json!['ids'] as string[]));
      }
    }

    const records = await waitForFinal(scenario.runtime, ids, 60_000);
    expect([...records.values()].every((record) => record.state === 'DROPPED')).toBe(true);
    expect(scenario.sandbox.messages()).toHaveLength(0);
  });
});

describe('the daily credit cap over restarts', () => {
  it('never lets more than creditsPerDay through, however often the runtime restarts', async () => {
    const ten = Array.from({ length: 10 }, (_, index) => `0713${String(200_000 + index)}`);
    const routes: Record<string, RouteInput> = {
      capped: {
        source: 'generic',
        secret: 'generic-token',
        recipients: ten,
        template: '{{ tag }}',
        limits: { creditsPerDay: 35 },
      },
    };
    const scenario = await startScenario({ label: 'hostile-cap', routes });
    scenarios.push(scenario);
    const run = runId();
    const ids: string[] = [];

    // Five starts, two webhooks each: 10 credits a send at the sandbox's rate of 1.
    for (let start = 0; start < 5; start += 1) {
      if (start > 0) await scenario.restart();
      for (let n = 0; n < 2; n += 1) {
        const answer = await call(scenario.runtime.baseUrl, {
          method: 'POST',
          path: '/hooks/capped',
          headers: {
            ...bearerHeaders(scenario.secrets['generic-token']!),
            'idempotency-key': `${run}-${start}-${n}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ tag: `cap ${run} ${start} ${n}` }),
        });
        expect(answer.status, answer.text).toBe(202);
        ids.push(...(answer.json!['ids'] as string[]));
      }
      await waitForFinal(scenario.runtime, ids, 60_000);
      await scenario.runtime.kill();
    }
    await scenario.restart();

    const spent = scenario.sandbox.messages().reduce((sum, message) => sum + message.deducted, 0);
    expect(spent).toBe(30);
    const states = [...(await liveRecords(scenario.runtime, 'capped')).values()].map((record) => record.state).sort();
    expect(states).toEqual([...Array(7).fill('HELD'), ...Array(3).fill('SENT')]);
  });
});

describe('an oversized answer from the SMS service', () => {
  /** A SENDING record older than this belongs to a dead sender: the restart comes after it. */
  const STALE_SENDING_MS = 6_000;

  it('is recorded SENT once, and stays so across a kill and a restart past the stale-sending age', async () => {
    const routes: Record<string, RouteInput> = {
      bulk: {
        source: 'generic',
        secret: 'generic-token',
        recipients: ['{{ phones }}'],
        template: '{{ tag }}',
        maxRecipients: 9_000,
        delivery: 'at-least-once',
      },
    };
    const scenario = await startScenario({
      label: 'hostile-answer',
      routes,
      timeoutMs: 5_000,
      env: { STALE_SENDING_MS: String(STALE_SENDING_MS) },
    });
    scenarios.push(scenario);
    const tag = `bulk ${runId()}`;
    const answer = await call(scenario.runtime.baseUrl, {
      method: 'POST',
      path: '/hooks/bulk',
      headers: { ...bearerHeaders(scenario.secrets['generic-token']!), 'content-type': 'application/json' },
      body: JSON.stringify({ tag, phones: numbers(9_000) }),
    });
    expect(answer.status, answer.text).toBe(202);
    const ids = answer.json?.['ids'] as string[];
    const sent = (await waitForFinal(scenario.runtime, ids, 60_000)).get(ids[0]!);
    expect(sent?.state).toBe('SENT');

    await scenario.runtime.kill();
    await waitUntil(
      'the record to be older than the stale-sending age',
      () => Date.now() - Date.parse(sent!.updatedAt) > STALE_SENDING_MS,
      { timeoutMs: STALE_SENDING_MS + 5_000, intervalMs: 100 },
    );
    await scenario.restart();
    // "Nothing more happens": a second send would come from the restarted runtime's first sweeps
    // (one a second), so it is given three of them; no state marks a send that did not happen.
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    expect(scenario.sandbox.messages().filter((message) => message.message === tag)).toHaveLength(1);
    expect((await liveRecords(scenario.runtime, 'bulk')).get(ids[0]!)?.state).toBe('SENT');
  });
});

describe('slow clients holding every connection (slow-loris through a tunnel)', () => {
  it('keeps webhooks, /health and the console coming in: 256 trickling connections, 40 genuine webhooks', async () => {
    const routes: Record<string, RouteInput> = {
      notify: { source: 'generic', secret: 'generic-token', recipients: ['0713200000'], template: '{{ tag }}' },
    };
    const scenario = await startScenario({ label: 'hostile-trickle', routes });
    scenarios.push(scenario);
    const { port } = new URL(scenario.runtime.baseUrl);
    const run = runId();
    // Headers, then one body byte a second on each of 256 connections, each replaced when closed;
    // through a tunnel they all come from 127.0.0.1 like everyone else.
    const trickle = startTrickle({
      port: Number(port),
      count: 256,
      head: `POST /hooks/notify HTTP/1.1\r\nHost: tunnel.example\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"tag":"`,
    });
    try {
      await waitUntil('the trickling connections to open', () => trickle.connected() >= 256, {
        timeoutMs: 60_000,
        intervalMs: 50,
      });
      const outcome = async (request: Promise<HttpAnswer>): Promise<string> =>
        await request.then(
          ({ status }) => String(status),
          (error: NodeJS.ErrnoException) => error.code ?? error.message,
        );

      const outcomes: string[] = [];
      const ids: string[] = [];
      for (let n = 0; n < 40; n += 1) {
        // One at a time on a fresh connection each, as senders post; spread over a few seconds.
        const answer = call(scenario.runtime.baseUrl, {
          method: 'POST',
          path: '/hooks/notify',
          headers: {
            ...bearerHeaders(scenario.secrets['generic-token']!),
            'idempotency-key': `${run}-${n}`,
            connection: 'close',
          },
          body: JSON.stringify({ tag: `genuine ${run} ${n}` }),
        });
        outcomes.push(await outcome(answer));
        const body = await answer.catch(() => undefined);
        ids.push(...((body?.json?.['ids'] as string[] | undefined) ?? []));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const health = await outcome(
        call(scenario.runtime.baseUrl, { path: '/health', headers: { connection: 'close' } }),
      );
      const console_ = await outcome(
        call(scenario.runtime.baseUrl, { path: '/console', headers: { connection: 'close' } }),
      );

      const accepted = outcomes.filter((status) => status === '202').length;
      expect(accepted, `answers: ${outcomes.join(' ')}`).toBeGreaterThanOrEqual(36);
      expect(health).toBe('200');
      // Answered, whatever the answer (the page, or how to get in): not refused at the door.
      expect(console_).toMatch(/^\d{3}$/);
      // The slow ones were cut or pushed out, not left to hold their slots.
      expect(trickle.closed()).toBeGreaterThan(0);
      expect((await waitForFinal(scenario.runtime, ids, 60_000)).size).toBe(accepted);
      expect(
        scenario.sandbox.messages().filter((message) => message.message.startsWith(`genuine ${run} `)),
      ).toHaveLength(accepted);
    } finally {
      trickle.stop();
    }
  });
});
