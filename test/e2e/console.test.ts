import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { test, webhookPoster } from '../helpers/fixtures';
import { noticeMessage } from '../../functions/relay/notice';
import { createStore, ensureTable, NoticeKind } from '../../functions/store';
import {
  CONSOLE_REQUEST_HEADER,
  type Overview,
  type RecordDetail,
  type RecordsPage,
} from '../../local/console/contract';
import { startDynalite } from '../helpers/dynalite';
import {
  cleanEnv,
  freePort,
  readJsonFile,
  REPO_ROOT,
  spawnCli,
  startRelay,
  stopRelay,
  type CliProcess,
} from './support';

/**
 * `sms-relay console` as a user runs it: on its own port, over the local store while no relay runs
 * (opened per request, so `npm start` can take the store at any time), and through the running
 * relay once there is one.
 */

let dir: string;
let env: NodeJS.ProcessEnv;
let console_: CliProcess;
let consoleUrl: string;
/** The session cookie the one-time link of `sms-relay console` set. */
let cookie: string;
/** What the signed-in page sends with each API request: the cookie and its page token. */
let signedIn: Record<string, string>;

/** `sms-relay console`'s first line: the one-time link. */
const CONSOLE_LINK = /sms-relay console: ((http:\/\/127\.0\.0\.1:\d+\/console)\/\?token=[\w-]+)/;

const api = async <T>(
  path: string,
  headers: Record<string, string> = signedIn,
): Promise<{ status: number; body: T }> => {
  const response = await fetch(`${consoleUrl}/api${path}`, { headers });
  return { status: response.status, body: (await response.json()) as T };
};

/** Opens a one-time link as a browser would; returns the response, the cookie it set (name=value) and the headers of the signed-in page's API requests. */
async function openLink(
  link: string,
): Promise<{ response: Response; cookie: string | undefined; headers: Record<string, string> }> {
  const response = await fetch(link, { redirect: 'manual' });
  const cookie = response.headers.get('set-cookie')?.split(';')[0];
  const pageToken = /url=\/console#session=([\w-]+)/.exec(await response.text())?.[1];
  return {
    response,
    cookie,
    headers: cookie === undefined || pageToken === undefined ? {} : { cookie, [CONSOLE_REQUEST_HEADER]: pageToken },
  };
}

/** A raw GET, so the test sets Host and Origin as a hostile page or a rebinding DNS would. */
async function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  const { port, pathname, search } = new URL(url);
  return await new Promise<number>((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: `${pathname}${search}`, headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('error', reject).end();
  });
}

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  env = cleanEnv({ PORT: '0', RELAY_DATA_DIR: join(dir, 'data'), RELAY_SECRETS_FILE: join(dir, 'secrets.json') });
  console_ = spawnCli(['console', '--port', String(await freePort())], env);
  const [, link, url] = await console_.waitFor(CONSOLE_LINK);
  consoleUrl = url!;
  const opened = await openLink(link!);
  cookie = opened.cookie!;
  signedIn = opened.headers;
}, 120_000);

afterAll(async () => {
  if (console_ !== undefined) await stopRelay(console_);
});

describe('sms-relay console', () => {
  it('serves the page on 127.0.0.1 and reads the local store while no relay runs', async () => {
    const page = await fetch(consoleUrl, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/console/app.js');
    expect(html).not.toContain('token');
    const overview = await api<Overview>('/overview');
    expect(overview.body.source).toMatch(/^local store .* \(no relay running\)$/);
    expect((await api<RecordsPage>('/records')).body.records).toEqual([]);
  });

  it('shares the store between requests that overlap, and reopens it after the last one', async () => {
    // As a page loads and polls: requests that start while others finish and close the store.
    const paths = ['/overview', '/records', '/routes', '/credit', '/records?state=SENT', '/payloads?route=notify'];
    const statuses = await Promise.all(
      Array.from({ length: 60 }, async (_, index) => {
        await new Promise((resolve) => setTimeout(resolve, index * 7));
        return (await api(paths[index % paths.length]!)).status;
      }),
    );
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });

  it('without its cookie: the page says how to get in (401), the API answers 401; its link worked once', async () => {
    const page = await fetch(consoleUrl);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('one-time link printed in the terminal');
    expect((await api('/records', {})).status).toBe(401);
    const first = CONSOLE_LINK.exec(console_.stdout())![1]!;
    const again = await openLink(first);
    expect(again.response.status).toBe(403);
    expect(again.cookie).toBeUndefined();
    // Each use prints the next link, which signs in another browser once.
    const next = (
      await console_.waitFor(/next one-time link: (http:\/\/127\.0\.0\.1:\d+\/console\/\?token=[\w-]+)/)
    )[1]!;
    expect(next).not.toBe(first);
    const other = await openLink(next);
    expect(other.response.status).toBe(200);
    expect(other.cookie).not.toBe(cookie);
    expect((await api('/records', other.headers)).status).toBe(200);
    // The cookie alone, as any other server on 127.0.0.1 the browser visits receives it, gets nothing.
    expect((await api('/records', { cookie: other.cookie! })).status).toBe(401);
    expect(
      (await api('/records', { ...other.headers, [CONSOLE_REQUEST_HEADER]: signedIn[CONSOLE_REQUEST_HEADER]! })).status,
    ).toBe(401);
  });

  it('lets npm start take the store, then reads through the running relay', async () => {
    const relay = await startRelay(env);
    try {
      const postWebhook = webhookPoster({
        url: relay.url,
        configPath: join(REPO_ROOT, 'config', 'local.yaml'),
        secrets: readJsonFile<Record<string, string>>(join(dir, 'secrets.json')),
      });
      const answer = await postWebhook('notify', { message: 'through the relay' });
      expect(answer.status).toBe(202);
      // Forwarded with runtime.json's secret: that file (mode 0600) holds no browser credential.
      const announced = readJsonFile<Record<string, unknown>>(join(dir, 'data', 'runtime.json'));
      expect(Object.keys(announced)).not.toContain('consoleToken');
      expect(cookie).not.toContain(String(announced['consoleSecret']));
      expect((await api<Overview>('/overview')).body.source).toContain(relay.url);
      const records = (await api<RecordsPage>('/records?route=notify')).body.records;
      expect(records.map((record) => record.id)).toEqual(answer.body['ids']);
    } finally {
      await stopRelay(relay);
    }
    // The relay gone, the console opens the store again and still sees the record.
    await expect
      .poll(async () => (await api<Overview>('/overview')).body.source, { timeout: 10_000 })
      .toMatch(/no relay running/);
    expect((await api<RecordsPage>('/records?route=notify')).body.records).toHaveLength(1);
  });

  it('refuses a foreign Host (DNS rebinding) and says where the console is', async () => {
    const { port } = new URL(consoleUrl);
    expect(await rawGet(`${consoleUrl}/api/records`, { host: `rebind.example:${port}`, cookie })).toBe(403);
    expect((await fetch(consoleUrl.replace('/console', '/'), { redirect: 'manual' })).headers.get('location')).toBe(
      '/console',
    );
  });

  // The table is named here: without --table, --env asks CloudFormation for the stack's TableName
  // output, which test/local/shared/aws.test.ts covers with a mocked client (no traffic leaves the host).
  it('reads a deployed table with --env and --table, with the AWS credentials of the environment', async () => {
    const db = await startDynalite();
    const tableName = 'SmsRelay-staging-RelayTable1A2B3C';
    try {
      await ensureTable(db.client, tableName);
      const store = createStore({ client: db.client, tableName });
      const { ids } = await store.recordNotice({
        kind: NoticeKind.LowBalance,
        route: '_relay',
        key: 'k1',
        message: noticeMessage('Balance low: top up', ['255712345678'], undefined),
      });
      // The SDK's own endpoint variable points the "deployed" table at dynalite.
      const awsEnv = cleanEnv({
        AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      });
      const deployed = spawnCli(
        [
          'console',
          '--env',
          'staging',
          '--table',
          tableName,
          '--config',
          'config/local.yaml',
          '--port',
          String(await freePort()),
        ],
        awsEnv,
      );
      try {
        const [, link, url] = await deployed.waitFor(CONSOLE_LINK);
        expect(deployed.stdout()).toContain('environment staging');
        const { headers } = await openLink(link!);
        const overview = (await (await fetch(`${url}/api/overview`, { headers })).json()) as Overview;
        expect(overview).toMatchObject({ environment: 'staging', source: `table ${tableName} (staging)` });
        const records = ((await (await fetch(`${url}/api/records`, { headers })).json()) as RecordsPage).records;
        expect(records.map((record) => record.id)).toEqual(ids);
        const detail = (await (await fetch(`${url}/api/records/${ids[0]}`, { headers })).json()) as RecordDetail;
        expect(detail.record.to).toEqual(['2557****678']);
        expect(detail.history.map((change) => change.state)).toEqual(['PENDING']);
      } finally {
        await stopRelay(deployed);
      }
    } finally {
      await db.close();
    }
  });

  it("npm start: the banner's one-time link signs in once, /console needs it, /_relay refuses a foreign Origin", async () => {
    const relay = await startRelay(env);
    try {
      const link = /Console\s+(http:\/\/127\.0\.0\.1:\d+\/console\/\?token=[\w-]+)/.exec(relay.banner)?.[1];
      expect(link, relay.banner).toBeDefined();
      expect(link!.startsWith(`${relay.url}/console/?token=`)).toBe(true);
      const page = await fetch(`${relay.url}/console`);
      expect(page.status).toBe(401);
      expect(await page.text()).toContain('npm start');
      expect((await fetch(`${relay.url}/console/api/overview`)).status).toBe(401);
      const signedIn = await openLink(link!);
      expect(signedIn.response.status).toBe(200);
      const setCookie = signedIn.response.headers.get('set-cookie')!;
      expect(setCookie).toMatch(/; Path=\/console; HttpOnly; SameSite=Strict$/);
      expect((await fetch(`${relay.url}/console/api/overview`, { headers: signedIn.headers })).status).toBe(200);
      expect((await fetch(`${relay.url}/console/api/overview`, { headers: { cookie: signedIn.cookie! } })).status).toBe(
        401,
      );
      expect((await openLink(link!)).response.status).toBe(403);
      await relay.waitFor(
        /console\s+a browser signed in; next one-time link: http:\/\/127\.0\.0\.1:\d+\/console\/\?token=[\w-]+/,
      );
      // The session is this runtime's: the forwarding secret of runtime.json is something else.
      const announced = readJsonFile<Record<string, unknown>>(join(dir, 'data', 'runtime.json'));
      expect(signedIn.cookie).not.toContain(String(announced['consoleSecret']));

      const { port } = new URL(relay.url);
      const host = `127.0.0.1:${port}`;
      // /_relay takes the secret of runtime.json (what `logs` sends), never a browser's cookie.
      const operator = { authorization: `Bearer ${String(announced['consoleSecret'])}` };
      expect(await rawGet(`${relay.url}/_relay/records`, { host, ...operator })).toBe(200);
      expect(await rawGet(`${relay.url}/_relay/records`, { host, cookie: signedIn.cookie! })).toBe(401);
      expect(await rawGet(`${relay.url}/_relay/records`, { host, ...operator, origin: 'http://evil.example' })).toBe(
        403,
      );
      expect(await rawGet(`${relay.url}/_relay/records`, { host, ...operator, 'sec-fetch-site': 'cross-site' })).toBe(
        403,
      );
      expect(await rawGet(`${relay.url}/_relay/records`, { host, ...operator, origin: `http://${host}` })).toBe(200);
      const forged = await fetch(`${relay.url}/_relay/redrive`, {
        method: 'POST',
        headers: { ...operator, origin: 'http://evil.example', 'content-type': 'application/json' },
        body: '{"from":"PARKED","ids":[]}',
      });
      expect(forged.status).toBe(403);
    } finally {
      await stopRelay(relay);
    }
  });

  it('says so when its port is taken', async () => {
    const { port } = new URL(consoleUrl);
    const second = spawnCli(['console', '--port', port], env);
    const { code } = await second.exited;
    expect(code).not.toBe(0);
    expect(second.stderr()).toContain(`port ${port} is in use`);
  });
});
