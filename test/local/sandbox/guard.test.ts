import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_LIMITS } from '../../../local/http';
import { startSandbox } from '../../../local/sandbox/server';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { openStalled, requestWithHost, waitUntil } from '../support/http-client';

const API_KEY = 'sandbox-guard-key-81c2';

describe('the sandbox against foreign Hosts, floods and slow clients', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ apiKey: API_KEY, balance: 1000 });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it.each(['/_sandbox/messages', '/_sandbox/account', '/_sandbox/requests', '/_sandbox/faults'])(
    'refuses GET %s to a foreign Host',
    async (path) => {
      for (const host of [
        'evil.example',
        `evil.example:${sandbox.port}`,
        '127.0.0.1',
        `localhost:${sandbox.port + 1}`,
      ]) {
        const answer = await requestWithHost(sandbox.port, { host, path });
        expect({ host, ...answer }).toEqual({
          host,
          status: 403,
          json: { success: false, error: 'local requests only' },
        });
      }
    },
  );

  it('refuses a balance change to a foreign Host and leaves the balance alone', async () => {
    const answer = await requestWithHost(sandbox.port, {
      host: 'evil.example',
      path: '/_sandbox/balance',
      method: 'POST',
      body: '{"balance":5}',
    });
    expect(answer.status).toBe(403);
    expect(sandbox.balance()).toBe(1000);
  });

  it('answers the control endpoints to the loopback names with the port', async () => {
    for (const host of [`127.0.0.1:${sandbox.port}`, `localhost:${sandbox.port}`, `[::1]:${sandbox.port}`]) {
      expect(await requestWithHost(sandbox.port, { host, path: '/_sandbox/messages' }), host).toEqual({
        status: 200,
        json: { messages: [] },
      });
    }
  });

  it('keeps its /v1 API open to any Host (the API key guards it)', async () => {
    const answer = await requestWithHost(sandbox.port, {
      host: 'sms.example',
      path: '/v1/account/balance',
      headers: { 'x-api-key': API_KEY },
    });
    expect(answer).toMatchObject({ status: 200, json: { success: true, balance: 1000 } });
  });

  it('makes room past the cap by dropping the stalest, and times the stalled ones out', async () => {
    const beyond = 20;
    const count = HTTP_LIMITS.maxConnections + beyond;
    const stalled = openStalled(
      sandbox.port,
      count,
      `GET /_sandbox/messages HTTP/1.1\r\nHost: 127.0.0.1:${sandbox.port}\r\n`,
    );
    try {
      await waitUntil(
        'the stalest connections to make room for the ones beyond the cap',
        () => stalled.closed() >= beyond,
      );
      // The control API still answers while every slot is taken: the stalest stalled one makes room.
      expect(
        (await requestWithHost(sandbox.port, { host: `127.0.0.1:${sandbox.port}`, path: '/_sandbox/messages' })).status,
      ).toBe(200);
      await waitUntil('the header time-out to close the rest', () => stalled.closed() === count, {
        timeoutMs: HTTP_LIMITS.headersTimeoutMs + 15_000,
      });
      // Each was taken in, then dropped or timed out, told so unless it had sent nothing yet; none was left open.
      const answered = stalled.sockets.filter((_, index) => stalled.received(index).startsWith('HTTP/1.1 408 ')).length;
      expect(answered).toBeGreaterThanOrEqual(HTTP_LIMITS.maxConnections);
    } finally {
      stalled.destroy();
    }
  }, 40_000);
});
