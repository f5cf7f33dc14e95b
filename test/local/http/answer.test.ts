import { describe, expect, it } from 'vitest';
import { HttpError, sendError, sendJson, sendText } from '../../../local/http';
import { serve } from './serve';

describe('sendJson, sendText and sendError', () => {
  it('write the type, the length in bytes, no-store and the extra headers', async () => {
    const { url } = await serve((_request, response) =>
      sendJson(response, 405, { error: 'é ✓' }, { headers: { allow: 'GET' } }),
    );
    const answer = await fetch(url);
    expect(answer.status).toBe(405);
    expect(
      Object.fromEntries(
        [...answer.headers].filter(([name]) => name !== 'date' && name !== 'keep-alive' && name !== 'connection'),
      ),
    ).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength('{"error":"é ✓"}')),
      'cache-control': 'no-store',
      allow: 'GET',
    });
    expect(await answer.json()).toEqual({ error: 'é ✓' });
  });

  it('let headers replace cache-control but never the type or the length', async () => {
    const { url } = await serve((_request, response) =>
      sendText(response, 200, '<p>hi</p>', {
        type: 'text/html; charset=utf-8',
        headers: { 'cache-control': 'max-age=60', 'content-type': 'text/plain', 'content-length': '1' },
      }),
    );
    const answer = await fetch(url);
    expect([answer.headers.get('cache-control'), answer.headers.get('content-type'), await answer.text()]).toEqual([
      'max-age=60',
      'text/html; charset=utf-8',
      '<p>hi</p>',
    ]);
  });

  it('answer an HttpError with its status, headers and message, and anything else as a 500 without details', async () => {
    const errors: unknown[] = [
      new HttpError(405, 'use POST', { headers: { allow: 'POST' } }),
      new Error('secret detail'),
      'a string',
    ];
    const { url } = await serve((_request, response) =>
      sendError(response, errors.shift(), {
        bodyOf: (message) => ({ success: false, error: message }),
        internal: 'Internal server error',
      }),
    );
    const refused = await fetch(url);
    expect([refused.status, refused.headers.get('allow'), await refused.json()]).toEqual([
      405,
      'POST',
      { success: false, error: 'use POST' },
    ]);
    for (let index = 0; index < 2; index++) {
      const bug = await fetch(url);
      expect([bug.status, await bug.json()]).toEqual([500, { success: false, error: 'Internal server error' }]);
    }
    const { url: plain } = await serve((_request, response) => sendError(response, new Error('x')));
    expect(await (await fetch(plain)).json()).toEqual({ error: 'internal error' });
  });
});
