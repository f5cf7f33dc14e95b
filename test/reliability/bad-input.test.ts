import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standardRoutes } from './support/config';
import {
  brokenJsonText,
  contentTypes,
  deeplyNested,
  formBodies,
  invalidUtf8,
  junkAuthorization,
  nonObjectJson,
  notAnAlertGroup,
  oddObjects,
  printableLatin1,
  unknownRouteSegment,
} from './support/garbage';
import { call, mapConcurrent, rawExchange } from './support/http';
import { countBy, storedRecords } from './support/records';
import { runId, type Scenario, startScenario } from './support/scenario';
import { bearerHeaders, nowSeconds } from './support/signers';
import { bodyFor, type SourceRoute } from './support/webhooks';

/**
 * Bad input: RELIABILITY_BAD_INPUT_COUNT (default 10,000) generated requests (fast-check, seed
 * printed; RELIABILITY_SEED replays a run): broken JSON, invalid UTF-8, wrong shapes and types,
 * huge and empty bodies, odd content types, junk credentials, header injection and conflicting
 * framing over raw sockets, unicode edge cases, unknown routes, wrong methods. Some go to routes
 * with valid credentials (Bearer, a Stripe signature over the broken bytes) so the parsers run.
 * The runtime never answers 5xx, stays healthy, and sends nothing.
 */

const COUNT = Number(process.env['RELIABILITY_BAD_INPUT_COUNT'] ?? '10000');
const SEED = Number(process.env['RELIABILITY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const LIMIT = 262_144;
const CONCURRENCY = 16;

interface Probe {
  readonly kind: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array;
  /** Sent as is over a fresh socket instead of through the HTTP client. */
  readonly raw?: Uint8Array;
  /** The answers that are right for this probe (beyond "not 5xx"), as text for the report. */
  readonly expected: string;
  readonly accepts: (status: number, json: Record<string, unknown> | undefined) => boolean;
}

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const is =
  (...statuses: number[]) =>
  (status: number): boolean =>
    statuses.includes(status);

const SOURCE_ROUTES: readonly SourceRoute[] = [
  'amo',
  'alo',
  'alerts',
  'grafana',
  'github',
  'shopify',
  'woo',
  'stripe',
  'standard',
];

/** Signature-looking headers of every source, with junk values. */
const junkSignatureHeaders = fc.dictionary(
  fc.constantFrom(
    'x-hub-signature-256',
    'x-shopify-hmac-sha256',
    'x-wc-webhook-signature',
    'stripe-signature',
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
    'x-grafana-alerting-signature',
    'x-grafana-alerting-timestamp',
    'idempotency-key',
    'x-github-event',
    'content-encoding',
    'transfer-encoding-x',
    'x-forwarded-for',
  ),
  fc.oneof(
    printableLatin1(100),
    fc.constantFrom(
      'sha256=',
      `sha256=${'0'.repeat(64)}`,
      't=0,v1=00',
      'v1,AAAA',
      '0',
      '-1',
      '99999999999999',
      `t=${Math.floor(Date.now() / 1000)},v1=${'a'.repeat(64)}`,
    ),
  ),
  { maxKeys: 4 },
);

const junkQuery = fc.oneof(
  fc.constant(''),
  fc.constantFrom(
    '?token=',
    '?token',
    '?token=a&token=b',
    '?%zz',
    '?token=%00',
    `?token=${'x'.repeat(3000)}`,
    '?__proto__=1&constructor=2',
  ),
  printableLatin1(30).map((value) => `?token=${encodeURIComponent(value)}`),
);

const anyBody: fc.Arbitrary<Uint8Array> = fc.oneof(
  brokenJsonText.map(bytes),
  invalidUtf8,
  nonObjectJson.map(bytes),
  oddObjects.map(bytes),
  formBodies.map(bytes),
  fc.constant(new Uint8Array(0)),
);

function probes(scenario: Scenario, run: string): fc.Arbitrary<Probe>[] {
  const token = scenario.secrets['generic-token']!;
  const alertsToken = scenario.secrets['alerts-token']!;
  const stripeSecret = scenario.secrets['stripe-secret']!;
  const known = new Set([...Object.keys(standardRoutes()), 'phone']);
  let genuine = 0;

  /** A: no valid credential, any body (genuine payloads too), junk auth and signature headers: 401. */
  const unauthenticated = fc
    .record({
      route: fc.constantFrom(...SOURCE_ROUTES),
      body: fc.oneof(anyBody, fc.constant(undefined)),
      contentType: contentTypes,
      authorization: junkAuthorization,
      signatures: junkSignatureHeaders,
      query: junkQuery,
    })
    .map(({ route, body, contentType, authorization, signatures, query }): Probe => {
      // undefined body: a genuine payload of the source, only the credential is wrong.
      const payload = body ?? bytes(bodyFor(route, `bad ${run} genuine ${++genuine}`));
      return {
        kind: 'unauthenticated',
        method: 'POST',
        path: `/hooks/${route}${query}`,
        headers: {
          ...signatures,
          ...(contentType === undefined ? {} : { 'content-type': contentType }),
          ...(authorization === undefined ? {} : { authorization }),
        },
        body: /^webhook_id=\d{1,20}$/.test(Buffer.from(payload).toString('latin1')) ? bytes('{}') : payload,
        expected: '401',
        accepts: is(401),
      };
    });

  /** B: valid Bearer on an Alertmanager route, bodies that are no notification: 400. */
  const alertmanagerBroken = fc
    .record({
      body: fc.oneof(
        brokenJsonText.map(bytes),
        invalidUtf8,
        nonObjectJson.map(bytes),
        notAnAlertGroup.map(bytes),
        fc.constant(new Uint8Array(0)),
      ),
      contentType: contentTypes,
    })
    .map(
      ({ body, contentType }): Probe => ({
        kind: 'authenticated alertmanager, broken body',
        method: 'POST',
        path: '/hooks/alerts',
        headers: {
          ...bearerHeaders(alertsToken),
          ...(contentType === undefined ? {} : { 'content-type': contentType }),
        },
        body,
        expected: '400',
        accepts: is(400),
      }),
    );

  /**
   * B2: valid Bearer, valid JSON nested far too deep: no retry can make it an SMS, so it is
   * recorded and answered 200 dropped (a 4xx or 5xx would have Alertmanager retry it for hours).
   */
  const alertmanagerTooDeep = fc.record({ body: deeplyNested.map(bytes), contentType: contentTypes }).map(
    ({ body, contentType }): Probe => ({
      kind: 'authenticated alertmanager, too deep',
      method: 'POST',
      path: '/hooks/alerts',
      headers: { ...bearerHeaders(alertsToken), ...(contentType === undefined ? {} : { 'content-type': contentType }) },
      body,
      expected: '200 dropped (too deep), or duplicate; 400 when labelled as a form',
      accepts: (status, json) =>
        (status === 200 &&
          (json?.['status'] === 'duplicate' ||
            String(json?.['reason']).startsWith('the payload cannot be read: JSON nested deeper than'))) ||
        (status === 400 && String(json?.['error']).startsWith('form-encoded bodies are not accepted')),
    }),
  );

  /** C: a valid Stripe signature over bytes that are not JSON: 400. */
  const stripeBroken = fc
    .record({
      body: fc.oneof(brokenJsonText.map(bytes), invalidUtf8, fc.constant(new Uint8Array(0))),
      contentType: contentTypes,
    })
    .map(({ body, contentType }): Probe => {
      // Signed over the exact bytes sent, as Stripe signs: HMAC of "<t>.<raw body>".
      const t = nowSeconds();
      const v1 = createHmac('sha256', stripeSecret).update(`${t}.`).update(body).digest('hex');
      return {
        kind: 'signed stripe, broken body',
        method: 'POST',
        path: '/hooks/stripe',
        headers: {
          'stripe-signature': `t=${t},v1=${v1}`,
          ...(contentType === undefined ? {} : { 'content-type': contentType }),
        },
        body,
        expected: '400',
        accepts: is(400),
      };
    });

  /** D: valid Bearer on a generic route whose only recipient is `{{ phone }}`; the bodies name none. */
  const genericOdd = fc
    .record({
      body: fc.oneof(
        { weight: 6, arbitrary: oddObjects.map(bytes) },
        { weight: 2, arbitrary: nonObjectJson.map(bytes) },
        { weight: 1, arbitrary: deeplyNested.map(bytes) },
        { weight: 2, arbitrary: brokenJsonText.map(bytes) },
        { weight: 1, arbitrary: invalidUtf8 },
        { weight: 2, arbitrary: formBodies.map(bytes) },
      ),
      contentType: contentTypes,
      idempotencyKey: fc.option(fc.oneof(printableLatin1(60), fc.constant('k'.repeat(5000))), { nil: undefined }),
    })
    .map(
      ({ body, contentType, idempotencyKey }): Probe => ({
        kind: 'authenticated generic, odd body',
        method: 'POST',
        path: '/hooks/phone',
        headers: {
          ...bearerHeaders(token),
          ...(contentType === undefined ? {} : { 'content-type': contentType }),
          ...(idempotencyKey === undefined || idempotencyKey === '' ? {} : { 'idempotency-key': idempotencyKey }),
        },
        body,
        expected: '400, or 200 dropped/filtered/duplicate',
        accepts: (status, json) =>
          status === 400 || (status === 200 && ['dropped', 'filtered', 'duplicate'].includes(String(json?.['status']))),
      }),
    );

  /** E: routes that do not exist (and paths beside /hooks/<route>): 404. */
  const unknownRoutes = fc
    .record({
      path: fc.oneof(
        unknownRouteSegment(known).map((segment) => `/hooks/${segment}`),
        fc.constantFrom(
          '/hooks/amo/extra',
          '/hooks/',
          '/hooks',
          '//hooks/amo',
          '/hooks//amo',
          '/HOOKS/amo',
          '/hooks/amo%2Fx',
          '/',
          '/favicon.ico',
          '/hooks/amo/..',
          '/.env',
          '/hooks/%00',
        ),
      ),
      body: anyBody,
      authorization: junkAuthorization,
    })
    .map(
      ({ path, body, authorization }): Probe => ({
        kind: 'unknown route',
        method: 'POST',
        path,
        headers: authorization === undefined ? {} : { authorization },
        body,
        expected: '404',
        accepts: is(404),
      }),
    );

  /** F: methods other than POST on webhook routes, and other than GET on /health: 405. */
  const wrongMethods = fc
    .record({
      method: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
      route: fc.constantFrom(...SOURCE_ROUTES, 'phone'),
      health: fc.boolean(),
    })
    .map(
      ({ method, route, health }): Probe => ({
        kind: 'wrong method',
        method: health ? (method === 'GET' || method === 'HEAD' ? 'POST' : method) : method,
        path: health ? '/health' : `/hooks/${route}`,
        headers: bearerHeaders(token),
        ...(method === 'GET' || method === 'HEAD' ? {} : { body: bytes('{"tag":"x"}') }),
        expected: '405',
        accepts: is(405),
      }),
    );

  /** G: what Node's client will not send: bare CR/LF/NUL in headers, conflicting framing, junk request lines. */
  const raw = fc
    .record({
      shape: fc.constantFrom(
        'injected header',
        'CL+TE',
        'two CL',
        'negative CL',
        'truncated body',
        'bad chunk',
        'junk request line',
        'bad version',
        'absolute URL',
        'no Host',
        'no colon',
        'space in name',
        'obs-fold',
        'huge header',
        'many headers',
        'pipelined',
        'NUL in path',
        'latin1 header',
      ),
      separator: fc.constantFrom('\n', '\r', '\0', '\r\n ', '\n\t', '\u0085'),
      junk: printableLatin1(40),
      line: fc.string({ unit: 'binary', maxLength: 80 }),
    })
    .map(({ shape, separator, junk, line }): Probe => {
      const body = bodyFor('amo', `bad ${run} raw ${++genuine}`);
      const wrong = `Bearer wrong-${junk.replace(/\s/g, '')}`;
      const request = rawRequest(shape, { body, wrong, separator, junk, line });
      return {
        kind: `raw: ${shape}`,
        method: 'RAW',
        path: '/hooks/amo',
        headers: {},
        raw: Buffer.from(request, 'latin1'),
        expected: 'no 2xx (any 4xx, or the connection closed)',
        accepts: (status) => status === 0 || (status >= 400 && status < 500),
      };
    });

  return [
    unauthenticated,
    alertmanagerBroken,
    alertmanagerTooDeep,
    stripeBroken,
    genericOdd,
    unknownRoutes,
    wrongMethods,
    raw,
  ];
}

function rawRequest(
  shape: string,
  {
    body,
    wrong,
    separator,
    junk,
    line,
  }: { body: string; wrong: string; separator: string; junk: string; line: string },
): string {
  const head = (lines: string[]): string => `${lines.join('\r\n')}\r\n\r\n`;
  const length = Buffer.byteLength(body);
  const base = ['POST /hooks/amo HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', 'Connection: close'];
  switch (shape) {
    case 'injected header':
      return head([...base, `X-Note: a${separator}Authorization: ${wrong}`, `Content-Length: ${length}`]) + body;
    case 'CL+TE':
      return `${head([...base, `Authorization: ${wrong}`, `Content-Length: ${length}`, 'Transfer-Encoding: chunked'])}${length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    case 'two CL':
      return (
        head([...base, `Authorization: ${wrong}`, `Content-Length: ${length}`, `Content-Length: ${length + 5}`]) + body
      );
    case 'negative CL':
      return head([...base, `Authorization: ${wrong}`, 'Content-Length: -1']) + body;
    case 'truncated body':
      return head([...base, `Authorization: ${wrong}`, `Content-Length: ${length + 1000}`]) + body;
    case 'bad chunk':
      return `${head([...base, `Authorization: ${wrong}`, 'Transfer-Encoding: chunked'])}zz;${junk}\r\n${body}\r\n0\r\n\r\n`;
    case 'junk request line':
      return `${line.replace(/\r?\n/g, ' ')}\r\n\r\n`;
    case 'bad version':
      return (
        head(['POST /hooks/amo HTTP/9.9', 'Host: 127.0.0.1', `Authorization: ${wrong}`, `Content-Length: ${length}`]) +
        body
      );
    case 'absolute URL':
      return (
        head([
          'POST http://evil.example/hooks/amo HTTP/1.1',
          'Host: evil.example',
          `Authorization: ${wrong}`,
          'Connection: close',
          `Content-Length: ${length}`,
        ]) + body
      );
    case 'no Host':
      return (
        head([
          'POST /hooks/amo HTTP/1.1',
          `Authorization: ${wrong}`,
          'Connection: close',
          `Content-Length: ${length}`,
        ]) + body
      );
    case 'no colon':
      return head([...base, `Authorization ${wrong}`, `Content-Length: ${length}`]) + body;
    case 'space in name':
      return head([...base, `Author ization: ${wrong}`, `Content-Length: ${length}`]) + body;
    case 'obs-fold':
      return (
        head([...base, 'Authorization: Bearer', ` ${wrong.slice('Bearer '.length)}`, `Content-Length: ${length}`]) +
        body
      );
    case 'huge header':
      return head([...base, `X-Big: ${'a'.repeat(20_000)}`, `Content-Length: ${length}`]) + body;
    case 'many headers':
      return (
        head([
          ...base,
          ...Array.from({ length: 3_000 }, (_, index) => `X-H${index}: ${index}`),
          `Content-Length: ${length}`,
        ]) + body
      );
    case 'pipelined':
      return (
        head([
          ...base.filter((each) => each !== 'Connection: close'),
          `Authorization: ${wrong}`,
          `Content-Length: ${length}`,
        ]) +
        body +
        head([...base, `Authorization: ${wrong}x`, `Content-Length: ${length}`]) +
        body
      );
    case 'NUL in path':
      return (
        head(['POST /hooks/amo\0x HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close', `Content-Length: ${length}`]) +
        body
      );
    case 'latin1 header':
      return head([...base, `Authorization: Bearer \u00e9\u00ff${junk}`, `Content-Length: ${length}`]) + body;
    default:
      throw new Error(`unknown raw shape ${shape}`);
  }
}

/** Oversized bodies (and one exactly at the limit), with and without a valid credential. */
function hugeProbes(scenario: Scenario): Probe[] {
  const token = scenario.secrets['alerts-token']!;
  const sizes = [LIMIT + 1, LIMIT + 1_000, 1_048_576, 3 * 1_048_576];
  const list: Probe[] = [];
  for (const size of sizes) {
    for (const authorized of [true, false]) {
      for (const fill of ['{', 'a', '\u00e9']) {
        const body = Buffer.alloc(size, fill, 'utf8');
        list.push({
          kind: 'huge body',
          method: 'POST',
          path: '/hooks/alerts',
          headers: { 'content-type': 'application/json', ...(authorized ? { authorization: `Bearer ${token}` } : {}) },
          body,
          expected: '413',
          accepts: is(413),
        });
      }
    }
  }
  // Exactly at the limit: read and parsed (and refused as broken JSON), not 413.
  list.push({
    kind: 'body at the limit',
    method: 'POST',
    path: '/hooks/alerts',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: Buffer.alloc(LIMIT, '[', 'utf8'),
    expected: '400',
    accepts: is(400),
  });
  // Empty with a valid credential.
  list.push({
    kind: 'empty body',
    method: 'POST',
    path: '/hooks/alerts',
    headers: { authorization: `Bearer ${token}` },
    body: new Uint8Array(0),
    expected: '400',
    accepts: is(400),
  });
  return list;
}

describe(`bad input: ${COUNT} generated malformed requests`, () => {
  let scenario: Scenario;
  const run = runId();
  const failures: string[] = [];
  const statuses: string[] = [];

  beforeAll(async () => {
    if (!Number.isInteger(COUNT) || COUNT < 100)
      throw new Error(
        `RELIABILITY_BAD_INPUT_COUNT must be a whole number ≥ 100, got "${process.env['RELIABILITY_BAD_INPUT_COUNT']}"`,
      );
    scenario = await startScenario({
      label: 'bad-input',
      routes: {
        ...standardRoutes(),
        // A generic route that can only send to a number the body names: no generated body names one.
        phone: { source: 'generic', secret: 'generic-token', recipients: ['{{ phone }}'], template: '{{ message }}' },
      },
    });
  });

  afterAll(async () => {
    await scenario?.close();
  });

  it('never answers 5xx, and answers each kind of bad request as it should', async () => {
    console.log(`bad input: fast-check seed ${SEED} (RELIABILITY_SEED=${SEED} replays this run)`);
    const huge = hugeProbes(scenario);
    const generators = probes(scenario, run);
    // Shares of the generated requests per kind, in the order of `probes`.
    const shares = [0.35, 0.11, 0.02, 0.1, 0.16, 0.1, 0.06, 0.1];
    const remaining = COUNT - huge.length;
    const counts = shares.map((share) => Math.floor(remaining * share));
    counts[0]! += remaining - counts.reduce((sum, count) => sum + count, 0);
    const all: Probe[] = [...huge];
    for (const [index, generator] of generators.entries())
      all.push(...fc.sample(generator, { numRuns: counts[index]!, seed: SEED + index }));
    expect(all.length).toBe(COUNT);

    const started = Date.now();
    await mapConcurrent(all, CONCURRENCY, async (probe) => {
      let status: number;
      let json: Record<string, unknown> | undefined;
      try {
        if (probe.raw !== undefined) {
          ({ status } = await rawExchange(scenario.runtime.baseUrl, probe.raw));
          json = undefined;
        } else {
          const answer = await call(scenario.runtime.baseUrl, {
            method: probe.method,
            path: probe.path,
            headers: probe.headers,
            ...(probe.body === undefined ? {} : { body: probe.body }),
          });
          ({ status, json } = answer);
        }
      } catch (error) {
        failures.push(
          `${probe.kind} ${probe.method} ${probe.path.slice(0, 80)}: no answer (${(error as Error).message.slice(0, 120)})`,
        );
        return;
      }
      statuses.push(`${probe.kind} ${status}`);
      if (status >= 500 || !probe.accepts(status, json)) {
        failures.push(
          `${probe.kind} ${probe.method} ${probe.path.slice(0, 80)} (${probe.body?.byteLength ?? probe.raw?.byteLength ?? 0} bytes, ${JSON.stringify(probe.headers['content-type'] ?? null)}): ${status}, expected ${probe.expected}; ${JSON.stringify(json ?? null).slice(0, 160)}`,
        );
      }
    });
    console.log(
      `bad input: ${all.length} requests in ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(countBy(statuses))}`,
    );
    expect(failures.slice(0, 15)).toEqual([]);
    expect(failures.length).toBe(0);
  });

  it('is still healthy, alive, and sent nothing', async () => {
    expect(scenario.runtime.alive()).toBe(true);
    const health = await call(scenario.runtime.baseUrl, { path: '/health' });
    expect(health.status).toBe(200);
    expect(scenario.sandbox.messages()).toEqual([]);
    expect(scenario.sandbox.requests().filter((request) => request.path === '/v1/sms/send')).toEqual([]);
    // No internal error at all: a client that hung up mid-body is not one.
    const internal = scenario.runtime.run
      .output()
      .split('\n')
      .filter((line) => /\berror\s+(internal error|the ingest handler failed)/.test(line));
    expect(internal.slice(0, 5)).toEqual([]);
  });

  it('stops cleanly, leaving no message to send in the store', async () => {
    expect(await scenario.runtime.stop()).toEqual({ code: 0, signal: null });
    const records = await storedRecords(scenario.files.dataDir);
    expect(
      records
        .filter((record) => record.state !== 'DROPPED')
        .map((record) => `${record.route} ${record.state} ${record.reason ?? ''}`),
    ).toEqual([]);
    // Only the generic route's odd bodies and the too-deep alert groups were ever recorded.
    expect(
      records.every(
        (record) => record.route === 'phone' || (record.route === 'alerts' && record.reason?.includes('nested deeper')),
      ),
    ).toBe(true);
    expect(scenario.sandbox.messages()).toEqual([]);
  });
});
