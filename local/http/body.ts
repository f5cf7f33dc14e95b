import type { IncomingMessage } from 'node:http';
import { HttpError } from './error';

/**
 * The body exactly as sent (the bytes a signature covers), or `undefined` once it grows past
 * `limitBytes`: a declared `Content-Length` over the cap is refused before a byte is read, and a
 * body that grows past it is not buffered further. Either way the rest is read and dropped (see
 * `discardRest`) so the client gets to read the answer. Rejects when the client goes away before
 * the body is whole.
 *
 * @example
 * ```ts
 * const bytes = await readLimited(request, 262_144);
 * if (bytes === undefined) return sendJson(response, 413, { error: 'too large' });
 * ```
 */
export async function readLimited(request: IncomingMessage, limitBytes: number): Promise<Buffer | undefined> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    discardRest(request);
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // Event listeners rather than `for await`: leaving that loop early destroys the socket, and the answer with it.
  return await new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limitBytes) {
        chunks.push(chunk);
        return;
      }
      request.off('data', onData).off('end', onEnd).off('error', reject).off('close', onClose);
      discardRest(request);
      resolve(undefined);
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    const onClose = (): void => {
      if (!request.complete) reject(new Error('the client closed the connection before the body was complete'));
    };
    request.on('data', onData).once('end', onEnd).once('error', reject).once('close', onClose);
  });
}

/**
 * The whole body, or an `HttpError` 413 (with `connection: close`) past `limitBytes`: for handlers
 * that answer refusals by throwing.
 *
 * @example
 * ```ts
 * const body = await readBody(request, { limitBytes: 1024 * 1024 });
 * ```
 */
export async function readBody(
  request: IncomingMessage,
  {
    limitBytes,
    tooLarge = `Request body exceeds ${limitBytes} bytes`,
  }: { readonly limitBytes: number; readonly tooLarge?: string },
): Promise<Buffer> {
  const body = await readLimited(request, limitBytes);
  if (body === undefined) throw new HttpError(413, tooLarge, { headers: { connection: 'close' } });
  return body;
}

/**
 * A body parsed as JSON, or an `HttpError` 400 with `invalid` as its message.
 *
 * @example
 * ```ts
 * const value = parseJson(await readBody(request, { limitBytes }));
 * ```
 */
export function parseJson(
  body: Buffer,
  { invalid = 'Request body is not valid JSON' }: { readonly invalid?: string } = {},
): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw new HttpError(400, invalid, { cause: error });
  }
}

/** Past this much discarded body the connection is cut instead of drained. */
const MAX_DISCARD_BYTES = 16 * 1024 * 1024;

/**
 * Reads and drops the rest of a refused body, so the client gets to read the answer instead of a
 * reset; a client that keeps sending far past the limit is cut off.
 */
function discardRest(request: IncomingMessage): void {
  let discarded = 0;
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > MAX_DISCARD_BYTES) request.socket.destroy();
  });
  request.resume();
}
