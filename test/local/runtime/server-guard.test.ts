import { afterEach, describe, expect, it, vi } from 'vitest';
import { refused, type IngestRequest } from '../../../functions/relay/ingest';
import { HTTP_LIMITS, type HttpLimits } from '../../../local/http';
import { formatWebhook } from '../../../local/runtime/log-format';
import { createRelayServer, type RelayServer, type WebhookReport } from '../../../local/runtime/server';
import { createTerminal } from '../../../local/runtime/terminal';
import { startTrickle, type Trickle } from '../../helpers/trickle';
import { openStalled, requestWithHost, waitUntil, type StalledConnections } from '../support/http-client';

/** Short time-outs and a low cap, so the tests see them act without waiting for the real ones. */
const TEST_LIMITS: HttpLimits = {
  headersTimeoutMs: 600,
  requestTimeoutMs: 1_200,
  checkIntervalMs: 100,
  keepAliveTimeoutMs: 500,
  maxConnections: 8,
  minBodyBytesPerSecond: 1_024,
  bodyGraceMs: 300,
};
/** Time-outs far away: what acts in these tests is the body rate or the cap, not a time-out. */
const PATIENT: HttpLimits = { ...TEST_LIMITS, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 };

interface Started {
  readonly relay: RelayServer;
  readonly port: number;
  readonly ingested: IngestRequest[];
  readonly reports: WebhookReport[];
}

const running: { relay: RelayServer; stalled: StalledConnections[]; trickles: Trickle[] }[] = [];

async function start({
  limits = TEST_LIMITS,
  onWebhook,
}: {
  limits?: HttpLimits;
  onWebhook?: (report: WebhookReport) => void;
} = {}): Promise<Started> {
  const relay = createRelayServer(limits);
  const port = await relay.listen(0, '127.0.0.1');
  const ingested: IngestRequest[] = [];
  const reports: WebhookReport[] = [];
  relay.attach({
    maxBodyBytes: 256 * 1024,
    ingest: async (webhook) => {
      ingested.push(webhook);
      return refused(404, 'unknown route', 'no route \x1b[31mhere\nforged');
    },
    onAccepted: () => undefined,
    onWebhook: (report) => {
      reports.push(report);
      onWebhook?.(report);
    },
    onError: () => undefined,
    health: async () => ({ ok: true, pid: process.pid }),
    store: {} as never,
    isOperator: () => false,
  });
  running.push({ relay, stalled: [], trickles: [] });
  return { relay, port, ingested, reports };
}

function stall(port: number, count: number, first: string): StalledConnections {
  const stalled = openStalled(port, count, first);
  running.at(-1)!.stalled.push(stalled);
  return stalled;
}

async function openOnServer(relay: RelayServer): Promise<number> {
  return await new Promise((resolve, reject) =>
    relay.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

afterEach(async () => {
  for (const { relay, stalled, trickles } of running.splice(0)) {
    for (const each of stalled) each.destroy();
    for (const each of trickles) each.stop();
    relay.server.closeAllConnections();
    await relay.close();
  }
  vi.restoreAllMocks();
});

describe('the runtime server against slow and idle clients', () => {
  it('uses the shared limits by default', () => {
    const { server } = createRelayServer();
    expect(server.headersTimeout).toBe(HTTP_LIMITS.headersTimeoutMs);
    expect(server.requestTimeout).toBe(HTTP_LIMITS.requestTimeoutMs);
    expect(server.keepAliveTimeout).toBe(HTTP_LIMITS.keepAliveTimeoutMs);
    // The cap is the guard's own (it drops the stalest connection); Node's would refuse the new one.
    expect(server.maxConnections).toBeUndefined();
    // Slow-loris is cut within seconds; the requestTimeout default would let one hold a socket for 300 s.
    expect(HTTP_LIMITS.headersTimeoutMs).toBeLessThanOrEqual(15_000);
    expect(HTTP_LIMITS.requestTimeoutMs).toBeLessThanOrEqual(60_000);
    expect(HTTP_LIMITS.bodyGraceMs).toBeLessThanOrEqual(5_000);
  });

  it('closes connections that never finish their headers', async () => {
    const { relay, port, ingested } = await start();
    const stalled = stall(port, 5, `POST /hooks/x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Pad: aaaa`);
    await waitUntil('the server to close every stalled connection', () => stalled.closed() === 5);
    // Answered 408 first: they were taken in and timed out, not refused at the door.
    expect(stalled.sockets.map((_, index) => stalled.received(index).slice(0, 12))).toEqual(
      Array(5).fill('HTTP/1.1 408'),
    );
    expect(await openOnServer(relay)).toBe(0);
    expect(ingested).toEqual([]);
  });

  it('closes connections that send nothing at all', async () => {
    const { relay, port } = await start();
    const stalled = stall(port, 3, '');
    await waitUntil('the server to close every silent connection', () => stalled.closed() === 3);
    expect(await openOnServer(relay)).toBe(0);
  });

  it.each([
    // A rate any trickle keeps: only the request time-out can cut it.
    ['at the request time-out', { ...TEST_LIMITS, minBodyBytesPerSecond: 1 }],
    // The request time-out a minute away: the rate cuts it.
    ['below the minimum rate, long before the request time-out', PATIENT],
  ])('cuts off a body that trickles in %s, without handing it to ingest', async (_, limits) => {
    const { relay, port, ingested } = await start({ limits });
    const stalled = stall(
      port,
      1,
      `POST /hooks/x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"a":"`,
    );
    // Ten bytes a second.
    const trickle = setInterval(() => stalled.sockets[0]!.writable && stalled.sockets[0]!.write('b'), 100);
    try {
      await waitUntil('the server to cut the slow body off', () => stalled.closed() === 1);
    } finally {
      clearInterval(trickle);
    }
    expect(stalled.received(0)).toMatch(/^HTTP\/1\.1 408 /);
    expect(ingested).toEqual([]);
    expect(await openOnServer(relay)).toBe(0);
  });

  it('takes a body that keeps above the minimum rate, however long it takes', async () => {
    const { port, ingested } = await start({ limits: PATIENT });
    const size = 20 * 1024;
    const stalled = stall(
      port,
      1,
      `POST /hooks/x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`,
    );
    // 1 KiB every 100 ms (10 KiB/s): about two seconds for the body, well past the grace.
    let sent = 0;
    const feed = setInterval(() => {
      if (sent >= size || !stalled.sockets[0]!.writable) return clearInterval(feed);
      stalled.sockets[0]!.write('x'.repeat(1_024));
      sent += 1_024;
    }, 100);
    try {
      await waitUntil('the answer', () => stalled.closed() === 1);
    } finally {
      clearInterval(feed);
    }
    expect(stalled.received(0)).toMatch(/^HTTP\/1\.1 404 /);
    expect(ingested.map((webhook) => webhook.body.byteLength)).toEqual([size]);
  });

  it('does not count against a body the time this process was too busy to read it', async () => {
    const { relay, port, ingested } = await start({ limits: PATIENT });
    const parsed = new Promise((resolve) => relay.server.once('request', resolve));
    const stalled = stall(
      port,
      1,
      `POST /hooks/x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 200\r\nConnection: close\r\n\r\n`,
    );
    await parsed;
    // The whole body is sent, then this process (server and client alike) is held for 1.5 s:
    // the body waits unread, past its 0.5 s allowance, through no fault of the client.
    stalled.sockets[0]!.write('x'.repeat(200));
    const until = performance.now() + 1_500;
    while (performance.now() < until) {
      // busy
    }
    await waitUntil('the answer', () => stalled.closed() === 1);
    expect(stalled.received(0)).toMatch(/^HTTP\/1\.1 404 /);
    expect(ingested.map((webhook) => webhook.body.byteLength)).toEqual([200]);
  });

  it('at the cap, drops the stalest connection instead of refusing the new one', async () => {
    const { relay, port } = await start({ limits: PATIENT });
    const stalled = stall(port, TEST_LIMITS.maxConnections, `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    await waitUntil('every slot to be taken', async () => (await openOnServer(relay)) === TEST_LIMITS.maxConnections);
    // A new client gets in; one of the stalled ones made room, told why.
    expect((await requestWithHost(port, { host: `127.0.0.1:${port}`, path: '/health' })).status).toBe(200);
    await waitUntil('one stalled connection to be dropped', () => stalled.closed() === 1);
    expect(stalled.sockets.map((_, index) => stalled.received(index)).filter((text) => text !== '')).toEqual([
      expect.stringMatching(/^HTTP\/1\.1 408 /),
    ]);
    // A second wave of stalled clients changes nothing: the cap holds, and the server still answers.
    const more = stall(port, 20, `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    await waitUntil('the second wave to push the first out', () => stalled.closed() + more.closed() >= 20);
    expect(await openOnServer(relay)).toBeLessThanOrEqual(TEST_LIMITS.maxConnections);
    expect((await requestWithHost(port, { host: `127.0.0.1:${port}`, path: '/health' })).status).toBe(200);
    expect(await openOnServer(relay)).toBeLessThanOrEqual(TEST_LIMITS.maxConnections);
  });

  it('keeps webhooks and /health coming in while trickling clients hold every slot', async () => {
    const { relay, port, ingested } = await start({ limits: PATIENT });
    const trickle = startTrickle({
      port,
      count: TEST_LIMITS.maxConnections,
      head: `POST /hooks/slow HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 100000\r\n\r\n`,
      intervalMs: 100,
    });
    running.at(-1)!.trickles.push(trickle);
    await waitUntil(
      'the trickling clients to take every slot',
      async () => (await openOnServer(relay)) === TEST_LIMITS.maxConnections,
    );

    const outcomes: string[] = [];
    for (let n = 0; n < 10; n += 1) {
      const answer = await requestWithHost(port, {
        host: 'tunnel.example',
        path: `/hooks/genuine-${n}`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }).then(
        ({ status }) => String(status),
        (error: NodeJS.ErrnoException) => error.code ?? error.message,
      );
      outcomes.push(answer);
    }
    const health = await requestWithHost(port, { host: `127.0.0.1:${port}`, path: '/health' }).then(
      ({ status }) => status,
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(
      outcomes.filter((outcome) => outcome === '404'),
      outcomes.join(' '),
    ).toHaveLength(10);
    expect(ingested.map((webhook) => webhook.routeId)).toEqual(Array.from({ length: 10 }, (_, n) => `genuine-${n}`));
    expect(health).toBe(200);
    expect(trickle.closed()).toBeGreaterThan(0);
  });
});

describe('the local-only endpoints against a foreign Host', () => {
  it.each([
    ['GET', '/health'],
    ['GET', '/_relay/records'],
    ['POST', '/_relay/redrive'],
    ['POST', '/_relay/dismiss'],
    ['GET', '/_relay/anything'],
  ])('refuse %s %s to a foreign Host with a bare 403', async (method, path) => {
    const { port } = await start();
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      '127.0.0.1',
      `127.0.0.1:${port + 1}`,
      `localhost.evil.example:${port}`,
    ]) {
      const answer = await requestWithHost(port, {
        host,
        path,
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'POST' ? '{}' : undefined,
      });
      expect({ host, ...answer }).toEqual({ host, status: 403, json: { error: 'local requests only' } });
    }
  });

  it('refuse a local Host that a proxy or tunnel forwarded', async () => {
    const { port } = await start();
    const answer = await requestWithHost(port, {
      host: `localhost:${port}`,
      path: '/health',
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    expect(answer).toEqual({ status: 403, json: { error: 'local requests only' } });
  });

  it('answer the loopback names with the port', async () => {
    const { port } = await start();
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      expect(await requestWithHost(port, { host, path: '/health' }), host).toEqual({
        status: 200,
        json: { ok: true, pid: process.pid },
      });
    }
  });

  it('leave /hooks/* open to any Host, as a tunnel sends it', async () => {
    const { port, ingested } = await start();
    const answer = await requestWithHost(port, {
      host: 'abc123.ngrok-free.app',
      path: '/hooks/x',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(404);
    expect(answer.json['error']).toBe('unknown route');
    expect(ingested.map((webhook) => webhook.headers['host'])).toEqual(['abc123.ngrok-free.app']);
  });
});

describe('what a webhook puts on the terminal', () => {
  it('shows control characters from the URL and the reason escaped, on one line', async () => {
    const written: string[] = [];
    // The terminal keeps the stream's write from when it was created: spy first.
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const terminal = createTerminal({ redact: (text) => text });
    const { port, reports } = await start({ onWebhook: (report) => terminal.print(formatWebhook(report)) });
    await requestWithHost(port, {
      host: `127.0.0.1:${port}`,
      path: '/hooks/%1b%5b2J%1b%5bH%0d%0a12:00:00%20%20webhook%20%20forged',
      method: 'POST',
      body: '{}',
    });
    vi.restoreAllMocks();

    expect(reports).toHaveLength(1);
    expect(reports[0]!.route).toBe('\x1b[2J\x1b[H\r\n12:00:00  webhook  forged');
    expect(written).toHaveLength(1);
    const output = written[0]!;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character but the final new line may reach the terminal
    expect(output).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
    expect(output.endsWith('\n')).toBe(true);
    expect(output.split('\n')).toHaveLength(2);
    expect(output).toContain(
      '  webhook  \\u001b[2J\\u001b[H\\r\\n12:00:00  webhook  forged  404 unknown route: no route \\u001b[31mhere\\nforged',
    );
  });
});

describe('the runtime server as an edge', () => {
  it('joins a repeated header with ", " as API Gateway does', async () => {
    const { port, ingested } = await start();
    const answer = await requestWithHost(port, {
      host: 'tunnel.example',
      path: '/hooks/x?token=1&token=2',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tag': ['a', 'b'] },
      body: '{}',
    });

    expect(answer.status).toBe(404);
    expect(ingested.map(({ headers, query }) => [headers['x-tag'], query])).toEqual([['a, b', { token: '1' }]]);
  });
});
