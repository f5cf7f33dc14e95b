import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../local/sandbox/types';
import { type PostWebhook, testWithRelay } from '../helpers/fixtures';
import { listeningPorts } from '../helpers/listening';
import { eventually, records, REPO_ROOT, runCli, type RelayOnSandbox } from './support';

// Only the relay's own operator controls the running relay. Once any local process did: /_relay/* needed only a
// loopback Host (a plain POST muted a route for 30 days), and the store's worker listened on a
// 127.0.0.1 port where dynalite took any signature (read every record, put a PENDING one that the
// relay then sent). Now /_relay needs the secret of runtime.json and the store listens nowhere.

const API_KEY = 'local-access-provider-key-3f9a';

let dir: string;
let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;
let postWebhook: PostWebhook;

const test = testWithRelay({
  sandbox: {
    apiKey: API_KEY,
    balance: 100_000,
    rate: 1,
    senderIds: ['SMSRELAY', 'ALERTS', 'DUKA'],
    defaultSenderId: 'SMSRELAY',
  },
  config: readFileSync(join(REPO_ROOT, 'config/local.yaml'), 'utf8'),
});
test.beforeAll(({ fileDir, sandbox: service, relay, postWebhook: post }) => {
  postWebhook = post;
  dir = fileDir;
  sandbox = service;
  running = relay;
}, 180_000);

/** A request as any local process can make it: loopback Host, JSON, no credential unless given. */
async function local(
  url: string,
  path: string,
  { method = 'GET', body, authorization }: { method?: string; body?: unknown; authorization?: string } = {},
): Promise<{ status: number; text: string }> {
  const { port } = new URL(url);
  const headers: Record<string, string> = {
    host: `127.0.0.1:${port}`,
    'content-type': 'application/json',
    ...(authorization === undefined ? {} : { authorization }),
  };
  return await new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.once('error', reject).end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('the running relay against other local processes (npm start)', () => {
  it('answers /_relay only with the secret of runtime.json: a plain POST mutes nothing', async () => {
    const { relay, env } = running!;
    const forged = [
      { path: '/_relay/mutes', method: 'POST', body: { route: 'alerts', forSeconds: 30 * 86_400, reason: 'forged' } },
      { path: '/_relay/unmute', method: 'POST', body: { route: 'alerts' } },
      { path: '/_relay/redrive', method: 'POST', body: { from: 'PARKED', ids: ['x'] } },
      { path: '/_relay/dismiss', method: 'POST', body: { state: 'FAILED', reason: 'forged' } },
      { path: '/_relay/records' },
      { path: '/_relay/mutes' },
    ];
    for (const authorization of [undefined, 'Bearer not-the-secret', 'Bearer ']) {
      for (const request of forged) {
        const answer = await local(relay.url, request.path, {
          ...request,
          ...(authorization === undefined ? {} : { authorization }),
        });
        expect({ ...request, authorization, status: answer.status }).toEqual({
          ...request,
          authorization,
          status: 401,
        });
        expect(answer.text).toContain('unauthorized');
      }
    }
    // Nothing was muted: the CLI (which sends the secret) sees no mute.
    const mutes = await runCli(['mutes', '--json'], env);
    expect(mutes.code, mutes.stderr).toBe(0);
    expect(JSON.parse(mutes.stdout)).toEqual([]);
  }, 120_000);

  it("listens on its own port only: the store's worker has none", async () => {
    const { relay } = running!;
    const health = (await (await fetch(`${relay.url}/health`)).json()) as { pid: number; store: { dataDir: string } };
    expect(health.store.dataDir).toBe(join(dir, 'data'));
    // The kernel's account of the runtime's listening sockets (it uses the test's sandbox, none of its own).
    expect(listeningPorts(health.pid)).toEqual([Number(new URL(relay.url).port)]);
  });

  it('still serves mute, mutes, unmute, logs and redrive through the runtime', async () => {
    const { relay, env } = running!;
    const muted = await runCli(['mute', 'alerts', '--for', '10m', '--reason', 'maintenance'], env);
    expect(muted.code, muted.stderr).toBe(0);
    expect(muted.stdout).toMatch(
      /^Muted route alerts until .*: maintenance \(the running relay \(pid \d+, http:\/\/127\.0\.0\.1:\d+\)\)\.\n$/,
    );
    expect(JSON.parse((await runCli(['mutes', '--json'], env)).stdout)).toEqual([
      expect.objectContaining({ route: 'alerts', reason: 'maintenance' }),
    ]);
    expect((await runCli(['unmute', 'alerts'], env)).stdout).toBe(
      'Unmuted route alerts: its messages are sent again.\n',
    );

    // A send the service refuses for credit parks; logs lists it and redrive sends it, both through the runtime.
    sandbox.injectFault({ kind: 'status', status: 402 });
    const response = await postWebhook('notify', { message: 'local access check' });
    expect(response.status).toBe(202);
    const [id] = response.body['ids'] as string[];
    await eventually(
      async () =>
        (await records(relay.url, 'route=notify&state=PARKED')).some((record) => record.id === id) ? true : undefined,
      { what: 'the record PARKED' },
    );
    const logs = await runCli(['logs', '--route', 'notify', '--state', 'PARKED', '--json'], env);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain(id);
    const redrive = await runCli(['redrive', '--state', 'PARKED', '--route', 'notify'], env);
    expect(redrive.code, redrive.stderr).toBe(0);
    await eventually(
      async () =>
        (await records(relay.url, 'route=notify&state=SENT')).some((record) => record.id === id) ? true : undefined,
      { what: 'the record SENT after the redrive' },
    );
    expect(sandbox.messages().map((message) => message.message)).toContain('local access check');
  }, 180_000);
});
