import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HttpError, parseJson, readBody, readLimited, sendError, sendJson } from '../../../local/http';
import { waitUntil } from '../support/http-client';
import { serve } from './serve';

/** Sends `head` and `body` on a raw connection and returns everything the server wrote until it closed or answered. */
async function raw(port: number, head: string, body: Buffer | string = ''): Promise<string> {
  return await new Promise((resolve, reject) => {
    let received = '';
    const socket = connect({ host: '127.0.0.1', port }, () =>
      socket.end(Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body)])),
    );
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

describe('readLimited', () => {
  it('gives the exact bytes sent, whatever they are (what a signature covers)', async () => {
    const seen: Buffer[] = [];
    const { url } = await serve(async (request, response) => {
      const body = await readLimited(request, 1024);
      seen.push(body!);
      sendJson(response, 200, { length: body!.length });
    });
    const sent = Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x0d, 0x0a, 0xff, 0x00, 0xc3, 0x7d]);
    const answer = await fetch(`${url}/hooks/x`, { method: 'POST', body: sent });
    expect(await answer.json()).toEqual({ length: sent.length });
    expect(seen[0]!.equals(sent)).toBe(true);
  });

  it('takes a body exactly at the cap', async () => {
    const { url } = await serve(async (request, response) =>
      sendJson(response, 200, { length: (await readLimited(request, 100))?.length ?? null }),
    );
    expect(await (await fetch(url, { method: 'POST', body: 'a'.repeat(100) })).json()).toEqual({ length: 100 });
  });

  it('refuses a declared length over the cap before reading, and still lets the client read the answer', async () => {
    let read: Buffer | undefined | 'unset' = 'unset';
    const { port } = await serve(async (request, response) => {
      read = await readLimited(request, 100);
      sendJson(response, 413, { error: 'too large' });
    });
    const answer = await raw(
      port,
      `POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 101\r\n\r\n`,
      'a'.repeat(101),
    );
    expect(read).toBeUndefined();
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('{"error":"too large"}');
  });

  it('stops buffering a chunked body once it passes the cap', async () => {
    const { url } = await serve(async (request, response) =>
      sendJson(response, 200, { body: (await readLimited(request, 10))?.toString() ?? null }),
    );
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('0123456789'));
        controller.enqueue(new TextEncoder().encode('X'));
        controller.close();
      },
    });
    const answer = await fetch(url, { method: 'POST', body: chunks, duplex: 'half' } as RequestInit);
    expect(await answer.json()).toEqual({ body: null });
  });

  it('rejects when the client goes away before the body is whole', async () => {
    const outcomes: string[] = [];
    let started = false;
    const { port } = await serve(async (request) => {
      started = true;
      try {
        await readLimited(request, 1024);
        outcomes.push('resolved');
      } catch {
        outcomes.push('rejected');
      }
    });
    const socket = connect({ host: '127.0.0.1', port }, () =>
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{"half":`),
    );
    socket.on('error', () => undefined);
    // Hang up once the handler waits for the rest of the body.
    await waitUntil('the handler to start reading', () => started);
    socket.destroy();
    await waitUntil('the read to settle', () => outcomes.length === 1);
    expect(outcomes).toEqual(['rejected']);
  });
});

describe('readBody and parseJson', () => {
  it('answer 413 with connection: close past the cap, 400 for broken JSON, through sendError', async () => {
    const { url } = await serve(async (request, response) => {
      try {
        sendJson(response, 200, { value: parseJson(await readBody(request, { limitBytes: 16 })) });
      } catch (error) {
        sendError(response, error);
      }
    });
    const tooLarge = await fetch(url, { method: 'POST', body: JSON.stringify({ long: 'x'.repeat(20) }) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers.get('connection')).toBe('close');
    expect(await tooLarge.json()).toEqual({ error: 'Request body exceeds 16 bytes' });
    const broken = await fetch(url, { method: 'POST', body: '{"a":' });
    expect([broken.status, await broken.json()]).toEqual([400, { error: 'Request body is not valid JSON' }]);
    const fine = await fetch(url, { method: 'POST', body: '{"a":1}' });
    expect(await fine.json()).toEqual({ value: { a: 1 } });
  });

  it('word their refusals as told', () => {
    expect(() => parseJson(Buffer.from('nope'), { invalid: 'the body is not valid JSON' })).toThrow(
      new HttpError(400, 'the body is not valid JSON'),
    );
  });
});
