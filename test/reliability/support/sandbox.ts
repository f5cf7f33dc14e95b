import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox } from '../../../local/sandbox/server';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { call } from './http';
import { registerSecrets } from './logs';

export interface TestSandbox {
  readonly sandbox: RunningSandbox;
  readonly apiKey: string;
}

/**
 * The sandbox SMS service in the test process, so the suite sees exactly what the service
 * received. One SMS costs 1 and the balance covers a million unless told otherwise.
 */
export async function startTestSandbox(apiKey: string, balance = 1_000_000, rate = 1): Promise<TestSandbox> {
  registerSecrets([apiKey]);
  const sandbox = await startSandbox({ apiKey, balance, rate, currency: 'TZS', senderIds: ['SANDBOX'] });
  return { sandbox, apiKey };
}

/** How often each text arrived in the inbox. */
export function inboxCounts(sandbox: RunningSandbox): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of sandbox.messages()) counts.set(message.message, (counts.get(message.message) ?? 0) + 1);
  return counts;
}

/** Sends still to be faulted (`GET /_sandbox/faults`): tells how many sends have reached the service. */
export async function faultsQueued(sandbox: RunningSandbox): Promise<number> {
  const answer = await call(sandbox.baseUrl, { path: '/_sandbox/faults' });
  const queued = answer.json?.['queued'];
  if (answer.status !== 200 || typeof queued !== 'number')
    throw new Error(`GET /_sandbox/faults answered ${answer.status}: ${answer.text}`);
  return queued;
}

export interface BalanceOutage {
  /** Point the relay's `PROVIDER_BASE_URL` here. */
  readonly baseUrl: string;
  /** Balance reads answered 503 so far. */
  refused(): number;
  close(): Promise<void>;
}

/**
 * A front for the sandbox whose balance endpoint is down: `GET /v1/account/balance` is answered
 * 503, every other request is passed through unchanged. The sandbox's faults act on sends only;
 * this is the service whose sends would work while the check before a send cannot read the balance.
 */
export async function startBalanceOutage(target: string): Promise<BalanceOutage> {
  const upstream = new URL(target);
  let refused = 0;
  const server = createServer((incoming, outgoing) => {
    if ((incoming.url ?? '').split('?')[0] === '/v1/account/balance') {
      refused += 1;
      incoming.resume();
      outgoing
        .writeHead(503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'balance service unavailable' }));
      return;
    }
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    refused: () => refused,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
