import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createSmsClient,
  SendCertainty,
  SmsErrorCode,
  type SmsClient,
  type SmsClientOptions,
} from '../../../../functions/core/provider';
import {
  API_KEY,
  BALANCE_OK,
  closedPort,
  json,
  rejectionOf,
  SEND_OK,
  startTinyServer,
  type TinyServer,
} from './support';
import { TEST_TLS_CERT } from './tls-fixture';

const SEND = { phoneNumbers: '255712345678', message: 'Hi' } as const;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(handler: Parameters<typeof startTinyServer>[0], options?: { tls?: boolean }): Promise<TinyServer> {
  const server = await startTinyServer(handler, options);
  cleanups.push(() => server.close());
  return server;
}

function clientFor(baseUrl: string, options: Partial<SmsClientOptions> = {}): SmsClient {
  const client = createSmsClient({ baseUrl, apiKey: API_KEY, ...options });
  cleanups.push(() => client.close());
  return client;
}

describe('request shape', () => {
  it.each(['/api', '/api/', '/api//'])(
    'puts the endpoints under a path prefix (%s) and sends the key on every call',
    async (prefix) => {
      const server = await serve((request, response) =>
        request.method === 'GET' ? json(response, 200, BALANCE_OK) : json(response, 200, SEND_OK),
      );
      const client = clientFor(`${server.baseUrl}${prefix}`);
      await client.getBalance();
      await client.send({ phoneNumbers: ['255712345678'], message: 'Hi' });
      expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([
        'GET /api/v1/account/balance',
        'POST /api/v1/sms/send',
      ]);
      for (const { headers } of server.requests) {
        expect(headers['x-api-key']).toBe(API_KEY);
        expect(headers['user-agent']).toBe('sms-relay');
      }
    },
  );

  it('sends exactly the JSON body, without senderId when none is given, with length framing', async () => {
    const server = await serve((_request, response) => json(response, 200, SEND_OK));
    const client = clientFor(`${server.baseUrl}/`);
    await client.send({ phoneNumbers: '255712345678', message: 'Habari 😀' });
    await client.send({ phoneNumbers: ['255712345678', '255687654321'], message: 'Hi', senderId: 'ACME' });
    const [first, second] = server.requests;
    expect(first?.url).toBe('/v1/sms/send');
    expect(first?.body).toBe('{"phoneNumbers":["255712345678"],"message":"Habari 😀"}');
    expect(JSON.parse(first?.body ?? '')).not.toHaveProperty('senderId');
    expect(first?.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(first?.body ?? '')),
    });
    expect(first?.headers['transfer-encoding']).toBeUndefined();
    expect(JSON.parse(second?.body ?? '')).toEqual({
      phoneNumbers: ['255712345678', '255687654321'],
      message: 'Hi',
      senderId: 'ACME',
    });
  });

  it('sends the balance request without a body', async () => {
    const server = await serve((_request, response) => json(response, 200, BALANCE_OK));
    await clientFor(server.baseUrl).getBalance();
    expect(server.requests[0]).toMatchObject({ method: 'GET', body: '' });
    expect(server.requests[0]?.headers['content-type']).toBeUndefined();
  });

  it('works over https with a given CA', async () => {
    const server = await serve((_request, response) => json(response, 200, SEND_OK), { tls: true });
    const client = clientFor(server.baseUrl, { ca: TEST_TLS_CERT });
    await expect(client.send(SEND)).resolves.toEqual(SEND_OK);
    await expect(client.send(SEND)).resolves.toEqual(SEND_OK);
    expect(server.connections()).toBe(1);
  });
});

describe('answers the sandbox cannot give', () => {
  it('maps a non-JSON 200 after a send to an unexpected answer, maybe-sent', async () => {
    const server = await serve((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>OK</h1>'),
    );
    const error = await rejectionOf(clientFor(server.baseUrl).send(SEND));
    expect(error).toMatchObject({ code: SmsErrorCode.UNEXPECTED_ANSWER, message: expect.stringContaining('not JSON') });
    expect(error).toMatchObject({ status: 200, delivery: SendCertainty.MAYBE_SENT, serviceError: undefined });
  });

  it('maps a non-JSON 200 to a balance call the same way, not-sent', async () => {
    const server = await serve((_request, response) => response.end('not json'));
    const error = await rejectionOf(clientFor(server.baseUrl).getBalance());
    expect(error).toMatchObject({ code: SmsErrorCode.UNEXPECTED_ANSWER, message: expect.stringContaining('not JSON') });
    expect(error.delivery).toBe(SendCertainty.NOT_SENT);
  });

  it.each([
    [{ ...SEND_OK, success: false, error: 'partially failed' }, 'success is not true', 'partially failed'],
    [{ ...SEND_OK, success: undefined }, 'success is not true', undefined],
    [{ ...SEND_OK, deducted: '20' }, 'deducted is not a number', undefined],
    [[SEND_OK], 'body is not a JSON object', undefined],
  ])('maps a 200 with body %j to an unexpected answer, maybe-sent', async (body, problem, serviceError) => {
    const server = await serve((_request, response) => json(response, 200, body));
    const error = await rejectionOf(clientFor(server.baseUrl).send(SEND));
    expect(error).toMatchObject({
      code: SmsErrorCode.UNEXPECTED_ANSWER,
      message: expect.stringContaining(`(${problem})`),
    });
    expect(error).toMatchObject({ status: 200, serviceError, delivery: SendCertainty.MAYBE_SENT });
  });

  it('maps a 200 with an oversized body to an unexpected answer', async () => {
    const server = await serve((_request, response) => response.end(`{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`));
    const error = await rejectionOf(clientFor(server.baseUrl).send(SEND));
    expect(error).toMatchObject({
      code: SmsErrorCode.UNEXPECTED_ANSWER,
      message: expect.stringContaining('(body larger than 1048576 bytes)'),
    });
    expect(error).toMatchObject({ delivery: SendCertainty.MAYBE_SENT });
  });

  it('maps an undocumented status to an unexpected answer, maybe-sent, with the error text', async () => {
    const server = await serve((_request, response) => json(response, 418, { success: false, error: "I'm a teapot" }));
    const error = await rejectionOf(clientFor(server.baseUrl).send(SEND));
    expect(error).toMatchObject({ code: SmsErrorCode.UNEXPECTED_ANSWER });
    expect(error).toMatchObject({ status: 418, serviceError: "I'm a teapot", delivery: SendCertainty.MAYBE_SENT });
  });

  it('does not follow a redirect', async () => {
    const server = await serve((_request, response) => response.writeHead(307, { location: '/elsewhere' }).end());
    const error = await rejectionOf(clientFor(server.baseUrl).send(SEND));
    expect(error).toMatchObject({
      code: SmsErrorCode.UNEXPECTED_ANSWER,
      status: 307,
      delivery: SendCertainty.MAYBE_SENT,
    });
    expect(server.requests).toHaveLength(1);
  });

  it('keeps the status mapping when an error body is not JSON', async () => {
    const server = await serve((_request, response) => response.writeHead(400).end('<html>Bad Request</html>'));
    const error = await rejectionOf(clientFor(server.baseUrl).send(SEND));
    expect(error).toMatchObject({ code: SmsErrorCode.BAD_REQUEST });
    expect(error).toMatchObject({ status: 400, serviceError: undefined, delivery: SendCertainty.NOT_SENT });
  });

  it('maps a 5xx on a balance call to a server error, not-sent', async () => {
    const server = await serve((_request, response) => json(response, 503, { success: false, error: 'maintenance' }));
    const error = await rejectionOf(clientFor(server.baseUrl).getBalance());
    expect(error).toMatchObject({ code: SmsErrorCode.SERVER_ERROR });
    expect(error).toMatchObject({
      status: 503,
      serviceError: 'maintenance',
      delivery: SendCertainty.NOT_SENT,
      operation: 'balance',
    });
  });

  it('redacts the key when the service echoes it', async () => {
    const server = await serve((request, response) =>
      json(response, request.method === 'GET' ? 401 : 500, {
        success: false,
        error: `invalid key ${request.headers['x-api-key']}!`,
      }),
    );
    const client = clientFor(server.baseUrl);
    const unauthorized = await rejectionOf(client.getBalance());
    expect(unauthorized).toMatchObject({ code: SmsErrorCode.UNAUTHORIZED });
    expect(unauthorized).toMatchObject({ serviceError: 'invalid key [REDACTED]!' });
    const failed = await rejectionOf(client.send(SEND));
    expect(failed).toMatchObject({ code: SmsErrorCode.SERVER_ERROR, serviceError: 'invalid key [REDACTED]!' });
  });
});

describe('cut and silent connections', () => {
  it('decides a body cut after the status line by the status: 200 → maybe-sent, 400 → not-sent', async () => {
    const server = await serve((request, response) => {
      response.writeHead(request.url === '/ok/v1/sms/send' ? 200 : 400, { 'content-length': '100' });
      response.write('{"success":');
      setImmediate(() => response.socket?.destroy());
    });
    const cutSuccess = await rejectionOf(clientFor(`${server.baseUrl}/ok`).send(SEND));
    expect(cutSuccess).toMatchObject({ code: SmsErrorCode.RESET });
    expect(cutSuccess).toMatchObject({ status: 200, delivery: SendCertainty.MAYBE_SENT });
    const cutRefusal = await rejectionOf(clientFor(`${server.baseUrl}/bad`).send(SEND));
    expect(cutRefusal).toMatchObject({ code: SmsErrorCode.RESET });
    expect(cutRefusal).toMatchObject({ status: 400, delivery: SendCertainty.NOT_SENT });
  });

  it('times out in the response phase once the whole request was sent: maybe-sent', async () => {
    const server = await serve(() => {
      // Never answers.
    });
    const error = await rejectionOf(clientFor(server.baseUrl, { timeoutMs: 200 }).send(SEND));
    expect(error).toMatchObject({
      code: SmsErrorCode.TIMEOUT,
      message: expect.stringContaining('in the response phase'),
    });
    expect(error).toMatchObject({ delivery: SendCertainty.MAYBE_SENT, systemCode: 'ETIMEDOUT' });
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({ phoneNumbers: ['255712345678'], message: 'Hi' });
    // The timed-out socket must be dropped, not kept alive for the next call.
    await server.allConnectionsClosed();
  });

  it('times out in the connect phase while TLS never completes: not-sent, no request byte sent', async () => {
    const received: Buffer[] = [];
    const silent = net.createServer((socket) => socket.on('data', (chunk: Buffer) => received.push(chunk)));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => silent.close(resolve)));
    const { port } = silent.address() as net.AddressInfo;
    const client = clientFor(`https://127.0.0.1:${port}`, { timeoutMs: 200, ca: TEST_TLS_CERT });
    const error = await rejectionOf(client.send(SEND));
    expect(error).toMatchObject({
      code: SmsErrorCode.TIMEOUT,
      message: expect.stringContaining('in the connect phase'),
    });
    expect(error).toMatchObject({ delivery: SendCertainty.NOT_SENT });
    const bytes = Buffer.concat(received);
    expect(bytes[0]).toBe(0x16); // a TLS handshake record, and nothing readable after it
    expect(bytes.toString('latin1')).not.toContain('sms/send');
  });

  it('maps a refused connection to a refusal, not-sent', async () => {
    const port = await closedPort();
    const error = await rejectionOf(clientFor(`http://127.0.0.1:${port}`).send(SEND));
    expect(error).toMatchObject({ code: SmsErrorCode.REFUSED });
    expect(error).toMatchObject({ systemCode: 'ECONNREFUSED', delivery: SendCertainty.NOT_SENT });
    expect((error.cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('maps a failed name lookup to a DNS failure, not-sent', async () => {
    const lookup: SmsClientOptions['lookup'] = (hostname, _options, callback) =>
      callback(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
          code: 'ENOTFOUND',
          syscall: 'getaddrinfo',
          hostname,
        }),
        '',
        4,
      );
    const error = await rejectionOf(clientFor('https://sms.invalid', { lookup }).send(SEND));
    expect(error).toMatchObject({
      code: SmsErrorCode.DNS,
      message: expect.stringContaining('could not resolve sms.invalid'),
    });
    expect(error).toMatchObject({ systemCode: 'ENOTFOUND', delivery: SendCertainty.NOT_SENT });
  });

  it('uses a custom lookup and sends the host name', async () => {
    const server = await serve((_request, response) => json(response, 200, BALANCE_OK));
    const lookup: SmsClientOptions['lookup'] = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all)
        (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: '127.0.0.1', family: 4 },
        ]);
      else callback(null, '127.0.0.1', 4);
    };
    await clientFor(`http://sms.test:${server.port}`, { lookup }).getBalance();
    expect(server.requests[0]?.headers.host).toBe(`sms.test:${server.port}`);
  });
});

describe('keep-alive sockets', () => {
  /** Answers normally, except that the second request on any connection gets the socket reset, unread. */
  const resetOnReuse = (): Promise<TinyServer> =>
    serve((request, response, exchange) => {
      if (exchange.previousOnConnection >= 1) {
        request.socket.resetAndDestroy();
        return;
      }
      if (request.method === 'GET') json(response, 200, BALANCE_OK);
      else json(response, 200, SEND_OK);
    });

  it('reports a send reset on a reused socket as maybe-sent and never retries it', async () => {
    const server = await resetOnReuse();
    const client = clientFor(server.baseUrl);
    // Two at once: two connections, both kept alive afterwards.
    await Promise.all([client.send(SEND), client.send(SEND)]);
    expect(server.connections()).toBe(2);
    const error = await rejectionOf(client.send(SEND));
    expect(error).toMatchObject({
      code: SmsErrorCode.RESET,
      message: expect.stringContaining('on a reused keep-alive socket'),
    });
    expect(error).toMatchObject({ delivery: SendCertainty.MAYBE_SENT });
    expect(server.requests).toHaveLength(3);
  });

  it('fails a send in flight at close() as maybe-sent', async () => {
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    const server = await serve(() => arrived());
    const client = clientFor(server.baseUrl);
    const pending = rejectionOf(client.send(SEND));
    await requestArrived;
    client.close();
    const error = await pending;
    expect(error).toMatchObject({ code: SmsErrorCode.RESET });
    expect(error.delivery).toBe(SendCertainty.MAYBE_SENT);
  });

  it('closes pooled sockets on close()', async () => {
    const server = await serve((_request, response) => json(response, 200, BALANCE_OK));
    const client = clientFor(server.baseUrl);
    await client.getBalance();
    client.close();
    await server.allConnectionsClosed();
    expect(server.connections()).toBe(1);
  });
});
