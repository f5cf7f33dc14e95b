import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noticeMessage } from '../../functions/relay/notice';
import { createStore, ensureTable, NoticeKind } from '../../functions/store';
import type { Overview, RecordDetail, RecordsPage } from '../../local/console/contract';
import { startDynalite } from '../helpers/dynalite';
import { cleanEnv, freePort, post, readJsonFile, spawnCli, startRelay, stopRelay, type CliProcess } from './support';

/**
 * `sms-relay console` as a user runs it: on its own port, over the local store while no relay runs
 * (opened per request, so `npm start` can take the store at any time), and through the running
 * relay once there is one.
 */

let dir: string;
let env: NodeJS.ProcessEnv;
let console_: CliProcess;
let consoleUrl: string;

const api = async <T>(path: string): Promise<{ status: number; body: T }> => {
  const response = await fetch(`${consoleUrl}/api${path}`);
  return { status: response.status, body: (await response.json()) as T };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-console-cli-'));
  env = cleanEnv({ PORT: '0', RELAY_DATA_DIR: join(dir, 'data'), RELAY_SECRETS_FILE: join(dir, 'secrets.json') });
  console_ = spawnCli(['console', '--port', String(await freePort())], env);
  consoleUrl = (await console_.waitFor(/sms-relay console: (http:\/\/127\.0\.0\.1:\d+\/console)/))[1]!;
}, 120_000);

afterAll(async () => {
  if (console_ !== undefined) await stopRelay(console_);
  rmSync(dir, { recursive: true, force: true });
});

describe('sms-relay console', () => {
  it('serves the page on 127.0.0.1 and reads the local store while no relay runs', async () => {
    const page = await fetch(consoleUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<meta name="console-token"');
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

  it('lets npm start take the store, then reads through the running relay', async () => {
    const relay = await startRelay(env);
    try {
      const secrets = readJsonFile<Record<string, string>>(join(dir, 'secrets.json'));
      const answer = await post(relay.url, { route: 'notify', body: Buffer.from('{"message":"through the relay"}'), headers: { authorization: `Bearer ${secrets['generic-token']}`, 'content-type': 'application/json' } });
      expect(answer.status).toBe(202);
      expect((await api<Overview>('/overview')).body.source).toContain(relay.url);
      const records = (await api<RecordsPage>('/records?route=notify')).body.records;
      expect(records.map((record) => record.id)).toEqual(answer.body['ids']);
    } finally {
      await stopRelay(relay);
    }
    // The relay gone, the console opens the store again and still sees the record.
    await expect.poll(async () => (await api<Overview>('/overview')).body.source, { timeout: 10_000 }).toMatch(/no relay running/);
    expect((await api<RecordsPage>('/records?route=notify')).body.records).toHaveLength(1);
  });

  it('refuses a foreign Host (DNS rebinding) and says where the console is', async () => {
    const { port } = new URL(consoleUrl);
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/console/api/records', headers: { host: `rebind.example:${port}` } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.once('error', reject).end();
    });
    expect(status).toBe(403);
    expect((await fetch(consoleUrl.replace('/console', '/'), { redirect: 'manual' })).headers.get('location')).toBe('/console');
  });

  it('reads a deployed table with --env, found by the stack name, with the AWS credentials of the environment', async () => {
    const db = await startDynalite();
    const tableName = 'SmsRelay-staging-RelayTable1A2B3C';
    try {
      await ensureTable(db.client, tableName);
      const store = createStore({ client: db.client, tableName });
      const { ids } = await store.recordNotice({ kind: NoticeKind.LowBalance, route: '_relay', key: 'k1', message: noticeMessage('Balance low: top up', ['255712345678'], undefined) });
      // The SDK's own endpoint variable points the "deployed" table at dynalite.
      const awsEnv = cleanEnv({ AWS_ENDPOINT_URL_DYNAMODB: db.endpoint, AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' });
      const deployed = spawnCli(['console', '--env', 'staging', '--config', 'config/local.yaml', '--port', String(await freePort())], awsEnv);
      try {
        const url = (await deployed.waitFor(/sms-relay console: (http:\/\/127\.0\.0\.1:\d+\/console)/))[1]!;
        expect(deployed.stdout()).toContain('environment staging');
        const overview = (await (await fetch(`${url}/api/overview`)).json()) as Overview;
        expect(overview).toMatchObject({ environment: 'staging', source: `table ${tableName} (staging)` });
        const records = ((await (await fetch(`${url}/api/records`)).json()) as RecordsPage).records;
        expect(records.map((record) => record.id)).toEqual(ids);
        const detail = (await (await fetch(`${url}/api/records/${ids[0]}`)).json()) as RecordDetail;
        expect(detail.record.to).toEqual(['2557****678']);
        expect(detail.history.map((change) => change.state)).toEqual(['PENDING']);
      } finally {
        await stopRelay(deployed);
      }
    } finally {
      await db.close();
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
