import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { DeleteItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { messageItem } from '../../../functions/store/codec';
import type { Server } from 'node:http';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../functions/core/config/load';
import { machineZone } from '../../../functions/core/time-format';
import { ingestWebhook } from '../../../functions/relay/ingest';
import { checkBalance } from '../../../functions/relay/balance';
import { sendMessage } from '../../../functions/relay/sender';
import type { RelayContext } from '../../../functions/relay/ports';
import { MessageState } from '../../../functions/store';
import { createStoreApi } from '../../../local/console/api';
import { createConsoleAccess, type ConsoleAccess } from '../../../local/console/access';
import {
  CONSOLE_REQUEST_HEADER,
  type CreditAnswer,
  type MuteAnswer,
  type PayloadsAnswer,
  type PreviewAnswer,
  type RecordDetail,
  type RecordsPage,
  type RoutesAnswer,
  type ServiceStatus,
} from '../../../local/console/contract';
import type { CircuitChange } from '../../../local/records/circuit-contract';
import { createConsoleHandler } from '../../../local/console/http';
import { FIXTURES_DIR, rawRoutesOf } from '../../../local/console/standalone';
import { createGuardedServer } from '../../../local/http';
import { openLocalStore, type LocalStore } from '../../../local/shared/local-store';
import { openConsoleLink } from '../../helpers/console-session';
import { createLocalContext } from '../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../local/runtime/secrets';
import { listen } from '../../../local/shared/listen';
import { localOperator } from '../../../local/shared/operator';
import { resolveRuntimeSettings } from '../../../local/shared/settings';
import { signWebhook } from '../../../local/runtime/signers';
import { startSandbox } from '../../../local/sandbox/server';
import type { RunningSandbox } from '../../../local/sandbox/types';

const CONFIG = new URL('../../../config/local.yaml', import.meta.url).pathname;
const FORWARD_SECRET = 'test-console-forward-secret-0123456789';

let dir: string;
let local: LocalStore;
let sandbox: RunningSandbox;
let context: RelayContext;
let server: Server;
let port: number;
let base: string;
let secrets: Record<string, string>;
let access: ConsoleAccess;
/** The `Cookie` header of a browser signed in through a one-time link (beforeAll). */
/** The session cookie of the test's signed-in tab (`name=value`). */
let session: string;
/** The page token that tab sends as CONSOLE_REQUEST_HEADER with every API request. */
let pageToken: string;
let signIns = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-console-'));
  const settings = resolveRuntimeSettings(
    { config: CONFIG, secrets: join(dir, 'secrets.json'), dataDir: join(dir, 'data') },
    {},
  );
  const loaded = loadConfigFile(CONFIG);
  secrets = ensureSecretsFile(settings.secretsPath, loaded).values;
  local = await openLocalStore({ dataDir: settings.dataDir, tableName: settings.tableName });
  sandbox = await startSandbox({
    apiKey: secrets['providerApiKey']!,
    senderIds: ['SMSRELAY', 'ALERTS', 'DUKA'],
    defaultSenderId: 'SMSRELAY',
    balance: 100_000,
    rate: 20,
  });
  const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  context = createLocalContext({
    loaded,
    store: local.store,
    secretsPath: settings.secretsPath,
    providerBaseUrl: sandbox.baseUrl,
    providerApiKey: secrets['providerApiKey']!,
    logger: silent,
    policy: settings.policy,
  });
  access = createConsoleAccess({ forwardSecret: FORWARD_SECRET });
  const handle = createConsoleHandler({
    access,
    onSignIn: () => (signIns += 1),
    api: createStoreApi({
      description: 'test store',
      environment: 'local',
      loaded,
      rawRoutes: rawRoutesOf(readFileSync(CONFIG, 'utf8')),
      webhookBase: 'http://127.0.0.1:3000',
      fixturesDir: FIXTURES_DIR,
      withStore: async (use) => await use(local.store),
    }),
  });
  server = createGuardedServer(
    (request, response) => void handle(request, response, new URL(request.url ?? '/', 'http://x').pathname),
  );
  port = await listen(server, 0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
  ({ cookie: session, pageToken } = await openConsoleLink(access.newLink(base)));
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => {
    server?.close(() => resolve());
    server?.closeAllConnections();
  });
  await sandbox?.close();
  await local?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Posts a signed webhook to a route through the relay's ingest, then sends what it accepted. */
async function deliver(
  route: string,
  source: string,
  payload: unknown,
  secretName: string,
  { send = true } = {},
): Promise<string[]> {
  const body = Buffer.from(JSON.stringify(payload));
  const headers = Object.fromEntries(
    Object.entries(
      signWebhook(source, { body, secret: secrets[secretName]!, headers: { 'content-type': 'application/json' } }),
    ).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const answer = await ingestWebhook(context, { routeId: route, body, headers, query: {}, receivedAt: new Date() });
  const ids = (answer.body['ids'] as string[] | undefined) ?? [];
  if (send && answer.status === 202) for (const id of ids) await sendMessage(context, id);
  return ids;
}

async function getJson<T>(
  path: string,
  headers: Record<string, string> = { cookie: session, [CONSOLE_REQUEST_HEADER]: pageToken },
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, { headers });
  return { status: response.status, body: (await response.json()) as T };
}

async function postJson<T>(
  path: string,
  body: unknown,
  headers: Record<string, string> = { cookie: session, [CONSOLE_REQUEST_HEADER]: pageToken },
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** A raw request (signed in unless `cookie` is given), so the test sets Host and Origin as a hostile page or a rebinding DNS would. */
async function raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { cookie: session, [CONSOLE_REQUEST_HEADER]: pageToken, ...headers },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

let parkedCount = 0;

async function parkedRecord(): Promise<string> {
  parkedCount += 1;
  const [id] = await deliver('notify', 'generic', { message: `parked ${parkedCount}` }, 'generic-token', {
    send: false,
  });
  const claimed = await local.store.claimMessage(id!);
  await local.store.settle(id!, claimed!.claimToken!, {
    state: MessageState.Parked,
    reason: 'insufficient balance (402)',
    lastError: { name: 'SmsServiceError', status: 402, delivery: 'not-sent', message: 'insufficient balance' },
  });
  return id!;
}

describe('the page', () => {
  it('serves the page to a signed-in browser, without any token, with a strict CSP and no framing', async () => {
    const response = await fetch(`${base}/console`, { headers: { cookie: session } });
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(html).toContain('/console/app.js');
    expect(html).not.toContain('token');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });

  it('serves the bundled script and stylesheet from itself', async () => {
    const js = await fetch(`${base}/console/app.js`, { headers: { cookie: session } });
    const css = await fetch(`${base}/console/app.css`, { headers: { cookie: session } });
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(js.headers.get('cache-control')).toBe('no-store');
    expect(await js.text()).toContain('sms-relay console');
    expect(css.status).toBe(200);
    expect(await css.text()).toContain('.uplot');
  });

  it("serves the entry's chunks by the names it imports, kept by the browser since a name is its contents", async () => {
    const entry = await (await fetch(`${base}/console/app.js`, { headers: { cookie: session } })).text();
    const html = await (await fetch(`${base}/console`, { headers: { cookie: session } })).text();
    const names = new Set([...entry.matchAll(/"\.\/(chunk-[A-Z0-9]+\.js)"/g)].map(([, name]) => name!));
    const preloaded = [...html.matchAll(/<link rel="modulepreload" href="\/console\/(chunk-[A-Z0-9]+\.js)">/g)];
    expect(preloaded.length).toBeGreaterThan(0);
    for (const [, name] of preloaded) expect(names).toContain(name);
    for (const name of names) {
      const chunk = await fetch(`${base}/console/${name}`, { headers: { cookie: session } });
      expect(chunk.status, name).toBe(200);
      expect(chunk.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(chunk.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
      expect(chunk.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect((await chunk.text()).length).toBeGreaterThan(0);
    }
    expect((await fetch(`${base}/console/chunk-NOSUCH.js`, { headers: { cookie: session } })).status).toBe(404);
    expect((await fetch(`${base}/console/${[...names][0]}`)).status).toBe(401);
  });
});

describe('signing in', () => {
  it('without a session: the page explains how to get in (401), the API answers 401', async () => {
    const page = await fetch(`${base}/console`);
    expect(page.status).toBe(401);
    const html = await page.text();
    expect(html).toContain('one-time link printed in the terminal');
    expect(html).toContain('npm start');
    expect(html).not.toContain('app.js');
    expect((await getJson('/console/api/records', {})).status).toBe(401);
    expect((await getJson('/console/api/overview', { cookie: 'sms-relay-console-1=guess' })).status).toBe(401);
    expect((await fetch(`${base}/console/app.js`)).status).toBe(401);
  });

  it('the one-time link sets an HttpOnly, SameSite=Strict cookie for /console, moves on to /console, and works once', async () => {
    const before = signIns;
    const link = access.newLink(base);
    expect(link).toMatch(new RegExp(`^${base}/console/\\?token=[\\w-]{20,}$`));
    const first = await fetch(link);
    expect(first.status).toBe(200);
    const cookie = first.headers.get('set-cookie')!;
    expect(cookie).toMatch(new RegExp(`^sms-relay-console-${port}=[\\w-]{20,}; `));
    const attributes = cookie
      .split(';')
      .slice(1)
      .map((part) => part.trim());
    expect(attributes).toEqual(expect.arrayContaining(['Path=/console', 'HttpOnly', 'SameSite=Strict']));
    expect(attributes.some((attribute) => /^(max-age|expires|domain)=/i.test(attribute))).toBe(false);
    const html = await first.text();
    // The page token travels in the fragment, which the browser keeps to itself.
    const token = /<meta http-equiv="refresh" content="0; url=\/console#session=([\w-]{20,})">/.exec(html)?.[1];
    expect(token).toBeDefined();
    expect(html).not.toContain(link.split('token=')[1]!);
    expect(signIns).toBe(before + 1);
    const used = await fetch(link);
    expect(used.status).toBe(403);
    expect(used.headers.get('set-cookie')).toBeNull();
    expect(await used.text()).toContain('already used');
    expect((await fetch(`${base}/console/?token=made-up-token-0000000000000`)).status).toBe(403);
    expect(
      (await getJson('/console/api/routes', { cookie: cookie.split(';')[0]!, [CONSOLE_REQUEST_HEADER]: token! }))
        .status,
    ).toBe(200);
  });

  // A browser sends 127.0.0.1's cookies to every port of it, so any local server
  // the browser visits gets the session cookie. Replayed alone, it must get nothing.
  it("answers the API only with the page token of the cookie's own session: a replayed cookie gets 401", async () => {
    const replayed = { cookie: session };
    const apiPaths = [
      '/console/api/overview',
      '/console/api/records',
      '/console/api/routes',
      '/console/api/credit',
      '/console/api/payloads?route=notify',
    ];
    for (const path of apiPaths)
      expect({ path, status: (await getJson(path, replayed)).status }).toEqual({ path, status: 401 });
    const other = await openConsoleLink(access.newLink(base));
    for (const token of ['', 'fetch', '1', other.pageToken, `${pageToken}x`]) {
      expect({
        token,
        status: (await getJson('/console/api/records', { cookie: session, [CONSOLE_REQUEST_HEADER]: token })).status,
      }).toEqual({ token, status: 401 });
    }
    const id = await parkedRecord();
    for (const headers of [replayed, { cookie: session, [CONSOLE_REQUEST_HEADER]: 'fetch' }]) {
      expect((await postJson(`/console/api/records/${id}/redrive`, {}, headers)).status).toBe(401);
      expect(
        (await postJson('/console/api/routes/orders/mute', { for: '30d', reason: 'replayed' }, headers)).status,
      ).toBe(401);
    }
    expect((await local.store.getMessage(id))?.state).toBe(MessageState.Parked);
    expect(await local.store.getMute({ route: 'orders' })).toBeUndefined();
    // The page holds no data: with the cookie alone it is still served (its script then signs in nowhere).
    expect((await fetch(`${base}/console`, { headers: replayed })).status).toBe(200);
    expect((await getJson('/console/api/records', other.headers)).status).toBe(200);
  });

  it('lets sms-relay console forward with its own secret, and nothing else in its place', async () => {
    expect((await getJson('/console/api/routes', { authorization: `Bearer ${FORWARD_SECRET}` })).status).toBe(200);
    expect((await getJson('/console/api/routes', { authorization: `Bearer ${FORWARD_SECRET}x` })).status).toBe(401);
    expect((await getJson('/console/api/routes', { authorization: `Bearer ${session.split('=')[1]}` })).status).toBe(
      401,
    );
    const id = await parkedRecord();
    const forwarded = await postJson(
      `/console/api/records/${id}/redrive`,
      {},
      { authorization: `Bearer ${FORWARD_SECRET}` },
    );
    expect(forwarded.status).toBe(200);
  });
});

describe('refusals', () => {
  it('refuses a foreign Host, a foreign Origin, a cross-site fetch and a forwarded request', async () => {
    expect(await raw('GET', '/console', { host: 'evil.example:80' })).toBe(403);
    expect(await raw('GET', '/console/api/records', { host: `attacker.test:${port}` })).toBe(403);
    expect(await raw('GET', '/console/api/records', { host: `127.0.0.1:${port}`, origin: 'http://evil.example' })).toBe(
      403,
    );
    expect(
      await raw('GET', '/console/api/records', { host: `127.0.0.1:${port}`, 'sec-fetch-site': 'cross-site' }),
    ).toBe(403);
    expect(
      await raw('GET', '/console/api/records', { host: `127.0.0.1:${port}`, 'x-forwarded-for': '203.0.113.9' }),
    ).toBe(403);
    expect(
      await raw('GET', '/console/api/records', { host: `localhost:${port}`, origin: `http://localhost:${port}` }),
    ).toBe(200);
  });

  it('refuses a redrive without a session, without the request header, as a form post or from another origin, and changes nothing', async () => {
    const id = await parkedRecord();
    const path = `/console/api/records/${id}/redrive`;
    expect((await postJson(path, {}, { [CONSOLE_REQUEST_HEADER]: 'fetch' })).status).toBe(401);
    expect((await postJson(path, {}, { cookie: session })).status).toBe(401);
    expect(
      await raw(
        'POST',
        path,
        { host: `127.0.0.1:${port}`, 'content-type': 'application/x-www-form-urlencoded' },
        'a=1',
      ),
    ).toBe(403);
    expect(
      await raw(
        'POST',
        path,
        { host: `127.0.0.1:${port}`, origin: 'http://evil.example', 'content-type': 'application/json' },
        '{}',
      ),
    ).toBe(403);
    expect((await local.store.getMessage(id))?.state).toBe(MessageState.Parked);
  });

  it('answers bad queries with 400 and unknown paths with 404', async () => {
    expect((await getJson('/console/api/records?state=LOST')).status).toBe(400);
    expect((await getJson('/console/api/records?limit=0')).status).toBe(400);
    expect((await getJson('/console/api/records?cursor=nonsense')).status).toBe(400);
    expect((await getJson('/console/api/records/01NOSUCHRECORD0000000000000')).status).toBe(404);
    expect((await getJson('/console/api/nothing')).status).toBe(404);
    expect((await postJson('/console/api/preview', { route: 'notify', bogus: 1 })).status).toBe(400);
  });
});

describe('Activity', () => {
  it('lists records newest first, filtered by route, state and time, and pages without gaps or repeats', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 5; n += 1)
      ids.push(...(await deliver('notify', 'generic', { message: `page ${n}` }, 'generic-token')));
    const all = (await getJson<RecordsPage>('/console/api/records?route=notify&limit=500')).body.records;
    expect(all.map((record) => record.id)).toEqual(expect.arrayContaining(ids));
    expect(all.every((record, index) => index === 0 || all[index - 1]!.createdAt >= record.createdAt)).toBe(true);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page: RecordsPage = (
        await getJson<RecordsPage>(
          `/console/api/records?route=notify&limit=2${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        )
      ).body;
      expect(page.records.length).toBeLessThanOrEqual(2);
      seen.push(...page.records.map((record) => record.id));
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(all.map((record) => record.id));

    const sent = (await getJson<RecordsPage>('/console/api/records?state=SENT')).body.records;
    expect(sent.length).toBeGreaterThanOrEqual(5);
    expect(sent.every((record) => record.state === 'SENT')).toBe(true);
    expect(sent[0]!.to.every((number) => /^\d{4}\*{4}\d{3}$/.test(number))).toBe(true);
    expect(
      (
        await getJson<RecordsPage>(
          `/console/api/records?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
        )
      ).body.records,
    ).toEqual([]);
  });

  it('opens a record to its SMS, its state changes, the service answer and the webhook as received, without credentials', async () => {
    const [id] = await deliver(
      'notify',
      'generic',
      { message: 'call 0712345678 now', phone: '0754111222' },
      'generic-token',
    );
    const { status, body } = await getJson<RecordDetail>(`/console/api/records/${id}`);
    expect(status).toBe(200);
    expect(body.record.state).toBe('SENT');
    expect(body.sms.text).toBe('call 2557****678 now');
    expect(body.sms).toMatchObject({ encoding: 'GSM-7', segments: 1, characters: 19 });
    expect(body.history.map((change) => change.state)).toEqual(['PENDING', 'SENDING', 'SENT']);
    // config/local.yaml's notify route texts one fixed number: the payload's phone is no recipient.
    expect(body.result).toMatchObject({ deducted: 20 });
    expect(body.capture?.headers).not.toHaveProperty('authorization');
    expect(body.capture?.body).toContain('2557****222');
    expect(body.capture?.body).not.toContain('0754111222');
    expect(JSON.stringify(body)).not.toContain(secrets['generic-token']);
    expect(body.redrivable).toBe(false);
  });

  it('redrives a parked record once, as sms-relay redrive does, and refuses a sent one', async () => {
    const id = await parkedRecord();
    const detail = (await getJson<RecordDetail>(`/console/api/records/${id}`)).body;
    expect(detail.redrivable).toBe(true);
    expect(detail.errors).toEqual([expect.objectContaining({ status: 402, message: 'insufficient balance' })]);
    const first = await postJson<{ requeued: boolean; record: { state: string } }>(
      `/console/api/records/${id}/redrive`,
      {},
    );
    expect(first.body).toMatchObject({ requeued: true, record: { state: 'PENDING' } });
    expect((await postJson(`/console/api/records/${id}/redrive`, {})).status).toBe(409);
    await sendMessage(context, id);
    const after = (await getJson<RecordDetail>(`/console/api/records/${id}`)).body;
    expect(after.history.map((change) => change.state)).toEqual([
      'PENDING',
      'SENDING',
      'PARKED',
      'PENDING',
      'SENDING',
      'SENT',
    ]);
  });

  it("dismisses a parked record with the page's reason, as sms-relay dismiss does, and refuses a sent or already dismissed one", async () => {
    const id = await parkedRecord();
    expect((await getJson<RecordDetail>(`/console/api/records/${id}`)).body.dismissible).toBe(true);
    expect((await postJson(`/console/api/records/${id}/dismiss`, {})).status).toBe(400);
    expect((await postJson(`/console/api/records/${id}/dismiss`, { reason: '  ' })).status).toBe(400);
    expect((await local.store.getMessage(id))?.state).toBe('PARKED');

    const first = await postJson<{ dismissed: boolean; record: { state: string } }>(
      `/console/api/records/${id}/dismiss`,
      { reason: 'order cancelled, 0754111222 told by phone' },
    );
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ dismissed: true, record: { state: 'DISMISSED' } });
    const detail = (await getJson<RecordDetail>(`/console/api/records/${id}`)).body;
    expect(detail).toMatchObject({ dismissible: false, redrivable: false });
    expect(detail.record.dismissal).toEqual({
      by: localOperator(),
      at: expect.stringMatching(/^\d{4}-/),
      reason: 'order cancelled, 2557****222 told by phone',
      from: 'PARKED',
    });
    expect(detail.history.map((change) => change.state)).toEqual(['PENDING', 'SENDING', 'PARKED', 'DISMISSED']);

    const again = await postJson<{ error: string }>(`/console/api/records/${id}/dismiss`, { reason: 'twice' });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe(
      `${id} is DISMISSED: only UNKNOWN, FAILED, HELD, PARKED records can be dismissed; left as it is`,
    );
    const [sent] = await deliver('notify', 'generic', { message: 'went out' }, 'generic-token');
    const refused = await postJson<{ error: string }>(`/console/api/records/${sent}/dismiss`, { reason: 'no' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain('is SENT');
    expect((await local.store.getMessage(sent!))?.state).toBe('SENT');
    expect((await postJson('/console/api/records/01ARZ3NDEKTSV4RRFFQ69G5FAV/dismiss', { reason: 'x' })).status).toBe(
      404,
    );
  });

  it('redrives an UNKNOWN record only when the page says the duplicate is accepted, and says why in words', async () => {
    const [id] = await deliver('notify', 'generic', { message: 'maybe sent' }, 'generic-token', { send: false });
    const claimed = await local.store.claimMessage(id!);
    await local.store.settle(id!, claimed!.claimToken!, {
      state: MessageState.Unknown,
      reason: 'may have been sent: 503',
      lastError: { name: 'SmsServiceError', status: 503, delivery: 'maybe-sent', message: 'service unavailable' },
    });
    const detail = (await getJson<RecordDetail>(`/console/api/records/${id}`)).body;
    expect(detail).toMatchObject({
      redrivable: true,
      redriveWarning: expect.stringContaining('may already have arrived'),
    });

    const refused = await postJson<{ error: string }>(`/console/api/records/${id}/redrive`, {});
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain('may already have arrived');
    expect((await local.store.getMessage(id!))?.state).toBe('UNKNOWN');

    const accepted = await postJson<{ requeued: boolean; record: { state: string } }>(
      `/console/api/records/${id}/redrive`,
      { acceptDuplicates: true },
    );
    expect(accepted.body).toMatchObject({ requeued: true, record: { state: 'PENDING' } });
    await sendMessage(context, id!);
    expect((await local.store.getMessage(id!))?.state).toBe('SENT');
    // No risk, no warning: a PARKED record's page asks nothing.
    expect(
      (await getJson<RecordDetail>(`/console/api/records/${await parkedRecord()}`)).body.redriveWarning,
    ).toBeNull();
  });

  it('leaves a record this version cannot read out of Activity, and says so on its own page', async () => {
    const [newer, plain] = await deliver(
      'notify',
      'generic',
      { message: 'from a newer version', phone: '0754111222' },
      'generic-token',
      { send: false },
    ).then(async (first) => [
      first[0]!,
      (await deliver('notify', 'generic', { message: 'plain' }, 'generic-token', { send: false }))[0]!,
    ]);
    await local.client.send(
      new UpdateItemCommand({
        TableName: local.tableName,
        Key: { pk: { S: `MSG#${newer}` }, sk: { S: 'MSG' } },
        UpdateExpression: 'SET #notice = :notice',
        ExpressionAttributeNames: { '#notice': 'notice' },
        ExpressionAttributeValues: { ':notice': { S: 'heartbeat-silent-v2' } },
      }),
    );
    const activity = await getJson<RecordsPage>('/console/api/records?route=notify&limit=500');
    expect(activity.status).toBe(200);
    expect(activity.body.records.map((record) => record.id)).toContain(plain);
    expect(activity.body.records.map((record) => record.id)).not.toContain(newer);
    const page = await getJson<{ error: string }>(`/console/api/records/${newer}`);
    expect(page).toMatchObject({
      status: 409,
      body: { error: expect.stringContaining('unknown notice heartbeat-silent-v2') },
    });
    expect((await postJson(`/console/api/records/${newer}/redrive`, {})).status).toBe(409);
    await local.client.send(
      new DeleteItemCommand({ TableName: local.tableName, Key: { pk: { S: `MSG#${newer}` }, sk: { S: 'MSG' } } }),
    );
  });

  it('shows the provider of each attempt and the failover of the last one', async () => {
    const id = await parkedRecord();
    const parked = (await local.store.getMessage(id))!;
    // As the sender records a first attempt refused by main (insufficient credit), sent by at.
    const [accepted, claimed, refused] = parked.history;
    await local.client.send(
      new PutItemCommand({
        TableName: local.tableName,
        Item: messageItem({
          ...parked,
          state: MessageState.Sent,
          reason: undefined,
          provider: 'at',
          failoverFrom: 'main',
          failoverReason: 'insufficient-credit',
          history: [
            accepted!,
            claimed!,
            { ...refused!, state: MessageState.Pending, provider: 'main' },
            { at: new Date().toISOString(), state: MessageState.Sent, provider: 'at' },
          ],
        }),
      }),
    );
    const { status, body } = await getJson<RecordDetail>(`/console/api/records/${id}`);
    expect(status).toBe(200);
    expect(body.record).toMatchObject({ provider: 'at', failoverFrom: 'main', failoverReason: 'insufficient-credit' });
    expect(body.history.map((change) => change.provider ?? null)).toEqual([null, null, 'main', 'at']);
    expect(body.errors).toEqual([expect.objectContaining({ status: 402, provider: 'main' })]);
  });

  it('says how many state changes a long history left out, and where', async () => {
    const [id] = await deliver(
      'notify',
      'generic',
      { message: 'retried a lot', phone: '0754111222' },
      'generic-token',
      { send: false },
    );
    expect((await getJson<RecordDetail>(`/console/api/records/${id}`)).body.historyOmitted).toBeNull();
    // 25 attempts that each went back to PENDING: 51 changes, of which the record keeps 3 + 40.
    for (let round = 0; round < 25; round += 1) {
      const claimed = await local.store.claimMessage(id!);
      const lastError = {
        name: 'SmsServiceError',
        delivery: 'not-sent',
        message: 'failed before sending: the balance could not be read (ECONNREFUSED)',
      };
      await local.store.settle(id!, claimed!.claimToken!, {
        state: MessageState.Pending,
        nextAttemptAt: new Date(0),
        lastError,
      });
    }
    const { body } = await getJson<RecordDetail>(`/console/api/records/${id}`);
    expect(body.history).toHaveLength(43);
    expect(body.historyOmitted).toEqual({ count: 8, after: 3 });
    expect(body.history.slice(0, 3).map((change) => change.state)).toEqual(['PENDING', 'SENDING', 'PENDING']);
  });
});

describe('Routes, Credit, payloads and preview', () => {
  it('summarises each route: URL, last webhook, counts of the last 24 hours, limits used', async () => {
    await deliver(
      'alerts',
      'alertmanager',
      JSON.parse(readFileSync(join(FIXTURES_DIR, 'alertmanager/firing-single.json'), 'utf8')),
      'alerts-token',
    );
    const { routes } = (await getJson<RoutesAnswer>('/console/api/routes')).body;
    const notify = routes.find((route) => route.id === 'notify')!;
    expect(notify.webhookUrl).toBe('http://127.0.0.1:3000/hooks/notify');
    expect(notify.captureSeconds).toBe(86_400);
    expect(notify.last24h.SENT).toBeGreaterThanOrEqual(6);
    expect(notify.lastWebhookAt).not.toBeNull();
    const alerts = routes.find((route) => route.id === 'alerts')!;
    expect(alerts.limits).toEqual([expect.objectContaining({ kind: 'messages', max: 60, used: 1 })]);
    expect(routes.find((route) => route.id === 'github')!.lastWebhookAt).toBeNull();
    // The Routes card's quiet hours and digest window (config/local.yaml's examples).
    expect(routes.find((route) => route.id === 'nightly')).toMatchObject({
      quietHours: '22:00–07:00 every day',
      digestSeconds: null,
      timeZone: 'Africa/Dar_es_Salaam',
    });
    expect(routes.find((route) => route.id === 'alert-digest')).toMatchObject({ quietHours: null, digestSeconds: 600 });
    expect(notify).toMatchObject({ quietHours: null, digestSeconds: null });
  });

  it("mutes a route from its card and unmutes it; the card shows the mute, the heartbeat's last seen and the month's use", async () => {
    const refused = [
      await postJson('/console/api/routes/orders/mute', { for: 'soon' }),
      await postJson('/console/api/routes/orders/mute', { for: '2h', reason: 'x'.repeat(201) }),
      await postJson('/console/api/routes/nosuch/mute', { for: '2h' }),
      await postJson('/console/api/routes/orders/mute', { for: '2h' }, { cookie: session }),
    ];
    expect(refused.map((answer) => answer.status)).toEqual([400, 400, 404, 401]);
    expect(await local.store.getMute({ route: 'orders' })).toBeUndefined();

    const muted = await postJson<MuteAnswer>('/console/api/routes/orders/mute', { for: '2h', reason: 'stock take' });
    expect(muted.status).toBe(200);
    expect(muted.body.mute).toMatchObject({
      reason: 'stock take',
      timeZone: 'Africa/Dar_es_Salaam',
      untilLocal: expect.stringMatching(/\d\d:\d\d$/),
    });
    const [dropped] = await deliver(
      'orders',
      'shopify',
      JSON.parse(readFileSync(join(FIXTURES_DIR, 'shopify/orders-create.json'), 'utf8')),
      'shopify-secret',
    );
    expect(await local.store.getMessage(dropped!)).toMatchObject({
      state: MessageState.Dropped,
      // The relay names the route's zone when its own (this machine's) clock is another.
      reason: `muted until ${muted.body.mute!.untilLocal}${machineZone() === 'Africa/Dar_es_Salaam' ? '' : ' Africa/Dar_es_Salaam'}: stock take`,
    });
    await deliver(
      'watchdog',
      'alertmanager',
      JSON.parse(readFileSync(join(FIXTURES_DIR, 'alertmanager/firing-single.json'), 'utf8')),
      'alerts-token',
    );

    let { routes } = (await getJson<RoutesAnswer>('/console/api/routes')).body;
    const orders = routes.find((route) => route.id === 'orders')!;
    expect(orders.mute).toEqual(muted.body.mute);
    expect(orders.limits).toEqual([expect.objectContaining({ kind: 'month', max: 3000, used: 0 })]);
    expect(orders.heartbeat).toBeNull();
    expect(routes.find((route) => route.id === 'watchdog')!.heartbeat).toEqual({
      every: 300,
      grace: 120,
      lastSeenAt: expect.any(String),
      silentSince: null,
    });

    expect((await postJson<MuteAnswer>('/console/api/routes/orders/unmute', {})).body).toEqual({
      route: 'orders',
      mute: null,
    });
    await deliver(
      'orders',
      'shopify',
      { ...JSON.parse(readFileSync(join(FIXTURES_DIR, 'shopify/orders-create.json'), 'utf8')), id: 990001 },
      'shopify-secret',
    );
    ({ routes } = (await getJson<RoutesAnswer>('/console/api/routes')).body);
    const after = routes.find((route) => route.id === 'orders')!;
    expect(after.mute).toBeNull();
    expect(after.limits[0]!.used).toBeGreaterThan(0);
  });

  it('draws the credit from every send and balance read, with the forecast and spend per route', async () => {
    await checkBalance(context);
    const credit = (await getJson<CreditAnswer>('/console/api/credit?days=7')).body;
    expect(credit.points.some((point) => point.kind === 'send')).toBe(true);
    expect(credit.points.some((point) => point.kind === 'read')).toBe(true);
    expect(credit.points.every((point, index) => index === 0 || credit.points[index - 1]!.at <= point.at)).toBe(true);
    expect(credit.threshold).toBe(100);
    expect(credit.reserve).toBe(40);
    expect(credit.balance).toBe(credit.points.at(-1)!.balance);
    expect(credit.spend.find((entry) => entry.route === 'notify')?.credits).toBeGreaterThan(0);
    expect(credit.forecast.basis).toMatch(/too little to forecast/);
    // Beside the spend chart the forecast's figures agree with it: the same 7 days, the same credits.
    expect(credit.forecast.spent).toBe(credit.spend.reduce((sum, entry) => sum + entry.credits, 0));
    expect(credit.forecast.spent).toBeGreaterThan(0);
    expect(credit.forecast.days).toBeGreaterThan(0);
    expect(credit.forecast.daysLeft).toBeNull();
    expect(credit.creditsPerUnit).toBe(20);
    expect((await getJson('/console/api/credit?days=99')).status).toBe(400);
  });

  it('answers every period the Credit page offers, the longest (90 days) too', async () => {
    // The page offers 7, 14, 30 and 90 days; the API refused more than 35.
    for (const days of [7, 14, 30, 90])
      expect((await getJson<CreditAnswer>(`/console/api/credit?days=${days}`)).status).toBe(200);
    expect((await getJson('/console/api/credit?days=91')).status).toBe(400);
  });

  it('answers from its route map: HEAD as GET, another method 405, a path parameter it refuses 404', async () => {
    expect(await raw('HEAD', '/console/api/routes', {})).toBe(200);
    expect(await raw('PUT', '/console/api/records', {})).toBe(405);
    expect((await getJson('/console/api/records/01ABC/redrive')).status).toBe(405);
    expect((await getJson<{ error: string }>('/console/api/records/not-an-id')).status).toBe(404);
    const missing = await getJson<{ error: string }>('/console/api/payloads');
    expect(missing).toEqual({ status: 400, body: { error: 'route: is required' } });
    const both = await getJson<{ error: string }>('/console/api/records?state=LOST&limit=0');
    expect(both.body.error).toBe(
      'state: expected one of PENDING, SENDING, SENT, FAILED, UNKNOWN, PARKED, HELD, DROPPED, DEFERRED, DIGESTED, DISMISSED, got "LOST"; limit: must be a whole number from 1 to 500',
    );
  });

  it('offers captured payloads (masked) and the source examples', async () => {
    const { payloads } = (await getJson<PayloadsAnswer>('/console/api/payloads?route=notify')).body;
    expect(payloads[0]?.kind).toBe('capture');
    expect(payloads.map((payload) => payload.body).join('\n')).not.toMatch(/0754111222|0712345678/);
    expect(payloads.some((payload) => payload.kind === 'fixture' && payload.id === 'backup-failed.json')).toBe(true);
  });

  it('opens every route on an example payload its own template fills: an SMS, no warning, no dropped recipient', async () => {
    // The SMS the relay sends for these examples (test/e2e/relay.test.ts): the page must show the same.
    const texts: Readonly<Record<string, RegExp>> = {
      alerts: /^\[FIRING x3\] InstanceDown: /,
      orders: /^New order #1001: /,
      shop: /^Order #4821 processing: /,
      github: /^\[kilimo-labs\/sms-relay\] Issue #17 opened/,
    };
    for (const route of loadConfigFile(CONFIG).routes.keys()) {
      // Before any capture the page opens the first example payload.
      const first = (await getJson<PayloadsAnswer>(`/console/api/payloads?route=${route}`)).body.payloads.find(
        (payload) => payload.kind === 'fixture',
      )!;
      const answer = (await postJson<PreviewAnswer>('/console/api/preview', { route, fixture: first.id })).body;
      // The watchdog route is a heartbeat only (`when: "false"`): its webhooks are never texted.
      const verdict = route === 'watchdog' ? 'filtered' : 'send';
      expect({
        route,
        fixture: first.id,
        verdict: answer.verdict,
        warnings: answer.warnings,
        dropped: answer.dropped,
      }).toEqual({ route, fixture: first.id, verdict, warnings: [], dropped: [] });
      if (texts[route] !== undefined) expect(answer.messages[0]?.text, route).toMatch(texts[route]);
    }
  });

  it("marks an Opsgenie P1 alert's SMS critical in the preview (it may spend the credit reserve), a P5's not", async () => {
    const of = async (priority: string) =>
      (
        await postJson<PreviewAnswer>('/console/api/preview', {
          route: 'og',
          payload: JSON.stringify({ message: 'Disk full on db-01', priority }),
        })
      ).body;
    const [p1, p5] = [await of('P1'), await of('P5')];
    expect(p1.messages.length).toBeGreaterThan(0);
    expect(p1.messages.every((message) => message.critical === true)).toBe(true);
    expect(p5.messages.length).toBeGreaterThan(0);
    expect(p5.messages.some((message) => 'critical' in message)).toBe(false);
  });

  it('previews an edited template on a captured payload with the same evaluation as preview', async () => {
    const capture = (await getJson<PayloadsAnswer>('/console/api/payloads?route=notify')).body.payloads.find(
      (payload) => payload.body.includes('call'),
    )!;
    const short = (
      await postJson<PreviewAnswer>('/console/api/preview', {
        route: 'notify',
        capture: capture.id,
        template: 'Hi {{ message }}',
        recipients: ['0712345678', '{{ phone }}'],
      })
    ).body;
    expect(short.verdict).toBe('send');
    // The capture's real number reaches the recipients; the page sees it masked.
    expect(short.messages[0]).toMatchObject({
      to: ['2557****678', '2557****222'],
      text: 'Hi call 2557****678 now',
      segments: 1,
      estimatedCost: 40,
    });
    // Past 70 characters a UCS-2 SMS is two segments (67 each): twice the price.
    const long = (
      await postJson<PreviewAnswer>('/console/api/preview', {
        route: 'notify',
        capture: capture.id,
        template: `👋 {{ message }} ${'x'.repeat(80)}`,
        recipients: ['0712345678', '{{ phone }}'],
      })
    ).body;
    expect(long.messages[0]).toMatchObject({ encoding: 'UCS-2', segments: 2, estimatedCost: 80 });
    expect(long.yaml).toContain('notify:');
    expect(long.yaml).toContain('capture: 1d');
    expect(long.yaml).toContain('2557****678');
    expect(long.yaml).not.toContain('0712345678');
    const unicode = (
      await postJson<PreviewAnswer>('/console/api/preview', { route: 'notify', payload: '{"message":"Habari 👋"}' })
    ).body;
    expect(unicode.messages[0]).toMatchObject({ encoding: 'UCS-2' });
    const empty = (
      await postJson<PreviewAnswer>('/console/api/preview', {
        route: 'notify',
        payload: '{}',
        template: 'Order {{ order.id }}',
      })
    ).body;
    expect(empty.warnings.join(' ')).toMatch(/order\.id/);
    const filtered = (
      await postJson<PreviewAnswer>('/console/api/preview', {
        route: 'notify',
        payload: '{"message":"x"}',
        when: 'message == "y"',
      })
    ).body;
    expect(filtered.verdict).toBe('filtered');
    const dropped = (
      await postJson<PreviewAnswer>('/console/api/preview', {
        route: 'notify',
        payload: '{"message":"x"}',
        recipients: ['{{ phone }}'],
      })
    ).body;
    expect(dropped.verdict).toBe('dropped');
    const invalid = (
      await postJson<PreviewAnswer>('/console/api/preview', { route: 'notify', payload: '{}', template: '{{ message ' })
    ).body;
    expect(invalid.verdict).toBe('invalid');
    const fixture = (
      await postJson<PreviewAnswer>('/console/api/preview', { route: 'notify', fixture: 'backup-failed.json' })
    ).body;
    expect(fixture.verdict).toBe('send');
    expect((await postJson('/console/api/preview', { route: 'notify', fixture: '../../package.json' })).status).toBe(
      404,
    );
  });
});

describe('the SMS service in the header', () => {
  it('says nothing while the service answers, and since when and how many messages wait while it is unreachable', async () => {
    expect((await getJson<ServiceStatus>('/console/api/service')).body).toEqual({
      unreachableSince: null,
      waiting: 0,
      lastError: null,
      nextProbeAt: null,
      circuit: expect.objectContaining({ state: 'closed', since: null }),
    });
    const openedAt = new Date();
    for (let count = 0; count < 3; count += 1) {
      await local.store.circuit.failed({
        threshold: 3,
        firstProbeAt: () => new Date(openedAt.getTime() + 2_000),
        error: 'refused',
        now: openedAt,
      });
    }
    const before = (await local.store.listByState(MessageState.Pending, { limit: 1000 })).items.length;
    await deliver('notify', 'generic', { message: 'waits 1' }, 'generic-token', { send: false });
    await deliver('notify', 'generic', { message: 'waits 2' }, 'generic-token', { send: false });
    try {
      expect((await getJson<ServiceStatus>('/console/api/service')).body).toEqual({
        unreachableSince: openedAt.toISOString(),
        waiting: before + 2,
        lastError: 'refused',
        nextProbeAt: new Date(openedAt.getTime() + 2_000).toISOString(),
        circuit: expect.objectContaining({ state: 'open', since: openedAt.toISOString(), failures: 3, openedBy: null }),
      });
    } finally {
      await local.store.circuit.succeeded();
    }
    expect((await getJson<ServiceStatus>('/console/api/service')).body.unreachableSince).toBeNull();
  });
});

describe('the SMS service circuit control', () => {
  it('holds every SMS for a while (the circuit open by the console) and sends now (closed), as sms-relay circuit does', async () => {
    const held = await postJson<CircuitChange>('/console/api/circuit', { action: 'open', for: '30m' });
    expect(held.status).toBe(200);
    expect(held.body.circuit).toMatchObject({ state: 'open', openedBy: 'the console' });
    expect(Date.parse(held.body.circuit.nextProbeAt!) - Date.parse(held.body.circuit.since!)).toBe(30 * 60_000);
    expect(await local.store.getCircuit()).toMatchObject({ openedBy: 'the console' });
    expect((await getJson<ServiceStatus>('/console/api/service')).body.circuit.state).toBe('open');

    const sent = await postJson<CircuitChange>('/console/api/circuit', { action: 'close' });
    expect(sent.body).toMatchObject({ before: { state: 'open' }, circuit: { state: 'closed', failures: 0 } });
    expect((await local.store.getCircuit()).openedAt).toBeUndefined();
  });

  it('refuses a length it cannot hold, changing nothing', async () => {
    for (const length of ['soon', '2d']) {
      const refused = await postJson<{ error: string }>('/console/api/circuit', { action: 'open', for: length });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toContain('is not a duration of up to 24h');
    }
    expect((await local.store.getCircuit()).openedAt).toBeUndefined();
  });
});

describe('the Credit page with more sends than it draws', () => {
  it('draws the newest 500 sends (the balance readings draw the rest), not every record of the period', async () => {
    const before = (await getJson<CreditAnswer>('/console/api/credit?days=7')).body;
    const sendsBefore = before.points.filter((point) => point.kind === 'send').length;
    const busy = 520 - sendsBefore;
    let balance = 90_000;
    for (let next = 0; next < busy; next += 20)
      await Promise.all(
        Array.from({ length: Math.min(20, busy - next) }, async (_, offset) => {
          const index = next + offset;
          const { ids } = await local.store.acceptWebhook({
            route: 'notify',
            dedupeKey: `busy-credit-${index}`,
            windowSeconds: 60,
            now: new Date(),
            messages: [
              {
                index: 0,
                part: 1,
                parts: 1,
                text: `busy ${index}`,
                to: ['255712345678'],
                encoding: 'GSM-7',
                characters: 6,
                segments: 1,
                delivery: 'at-most-once',
              },
            ],
          });
          const claimed = await local.store.claimMessage(ids[0]!);
          balance -= 1;
          await local.store.settle(ids[0]!, claimed!.claimToken!, {
            state: 'SENT',
            result: { deducted: 1, remainingBalance: balance, message: 'sent', senderId: 'SMSRELAY', recipients: [] },
          });
        }),
      );

    const credit = (await getJson<CreditAnswer>('/console/api/credit?days=7')).body;
    const sends = credit.points.filter((point) => point.kind === 'send');
    expect(sends).toHaveLength(500);
    // The newest: the last send drawn is the last one settled, the lowest balance.
    expect(Math.min(...sends.map((point) => point.balance))).toBe(balance);
    expect(credit.points.every((point, index) => index === 0 || credit.points[index - 1]!.at <= point.at)).toBe(true);
  });
});
