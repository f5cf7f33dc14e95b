import { describe, expect, it } from 'vitest';
import { consoleRefusal, crossSiteRefusal, isLocalRequest, isLoopbackAddress, sendJson } from '../../../local/http';
import { requestWithHost } from '../support/http-client';
import { serve } from './serve';

describe('isLoopbackAddress (who may use the sandbox control endpoints)', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.5', false],
    ['::ffff:192.168.1.2', false],
    ['fe80::1', false],
    ['1127.0.0.1', false],
    [undefined, false],
  ])('%s → %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });
});

describe('the checks of local-only endpoints, on a real request', () => {
  async function verdicts(
    host: (port: number) => string,
    headers: Record<string, string> = {},
  ): Promise<Record<string, unknown>> {
    const { port } = await serve((request, response) =>
      sendJson(response, 200, {
        local: isLocalRequest(request),
        crossSite: crossSiteRefusal(request) ?? null,
        refusal: consoleRefusal(request) ?? null,
      }),
    );
    return (await requestWithHost(port, { host: host(port), path: '/', headers })).json;
  }

  it('takes the loopback names with the port, from this machine', async () => {
    for (const host of [
      (port: number) => `127.0.0.1:${port}`,
      (port: number) => `localhost:${port}`,
      (port: number) => `[::1]:${port}`,
    ]) {
      expect(await verdicts(host)).toEqual({ local: true, crossSite: null, refusal: null });
    }
  });

  it('refuses another Host (DNS rebinding), another port, and a forwarded request', async () => {
    expect(await verdicts(() => 'evil.example')).toMatchObject({ local: false, refusal: 'local requests only' });
    expect(await verdicts((port) => `127.0.0.1:${port + 1}`)).toMatchObject({
      local: false,
      refusal: 'local requests only',
    });
    expect(await verdicts((port) => `127.0.0.1:${port}`, { 'x-forwarded-for': '203.0.113.9' })).toMatchObject({
      local: false,
      refusal: 'local requests only',
    });
  });

  it('refuses a browser request that another site started', async () => {
    expect(await verdicts((port) => `127.0.0.1:${port}`, { origin: 'https://evil.example' })).toEqual({
      local: true,
      crossSite: 'foreign origin "https://evil.example"',
      refusal: 'foreign origin "https://evil.example"',
    });
    expect(await verdicts((port) => `127.0.0.1:${port}`, { 'sec-fetch-site': 'cross-site' })).toMatchObject({
      refusal: 'cross-site request (cross-site)',
    });
    expect(await verdicts((port) => `127.0.0.1:${port}`, { origin: `http://127.0.0.1:${0}` })).toMatchObject({
      crossSite: expect.stringContaining('foreign origin'),
    });
    const sameOrigin = await (async () => {
      const { port } = await serve((request, response) =>
        sendJson(response, 200, { refusal: consoleRefusal(request) ?? null }),
      );
      return (
        await requestWithHost(port, {
          host: `127.0.0.1:${port}`,
          path: '/',
          headers: { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' },
        })
      ).json;
    })();
    expect(sameOrigin).toEqual({ refusal: null });
  });
});
