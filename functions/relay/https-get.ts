import { request } from 'node:https';
import type { FetchedDocument, SourceFetch } from '../core/sources/types';

export interface HttpsGetOptions {
  /**
   * The whole exchange, connection included.
   * @default 3000
   */
  readonly timeoutMs?: number;
  /**
   * A longer answer is abandoned (a certificate is about 2 KiB, a confirmation answer less).
   * @default 65536
   */
  readonly maxBytes?: number;
}

/**
 * The source packs' network access on AWS and locally: one HTTPS GET with a short time-out and a
 * bounded answer. Redirects are never followed (a 3xx comes back as it is, and the packs take only
 * a 2xx), so a URL the pack checked is the only host ever contacted. Anything but `https:` is
 * refused before a connection is made.
 *
 * @example
 * ```ts
 * const get = createHttpsGet({ timeoutMs: 2000 });
 * const { status, body } = await get('https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0123.pem');
 * ```
 */
export function createHttpsGet({ timeoutMs = 3_000, maxBytes = 65_536 }: HttpsGetOptions = {}): SourceFetch {
  return async (url) => {
    const target = new URL(url);
    if (target.protocol !== 'https:') throw new Error(`refusing to fetch ${target.protocol} URL; only https`);
    return await new Promise<FetchedDocument>((resolve, reject) => {
      const outgoing = request(
        target,
        { method: 'GET', timeout: timeoutMs, headers: { 'user-agent': 'sms-relay' } },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) {
              outgoing.destroy(new Error(`answer larger than ${maxBytes} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      const deadline = setTimeout(() => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      deadline.unref();
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      outgoing.on('error', (error) => {
        clearTimeout(deadline);
        reject(error);
      });
      outgoing.on('close', () => clearTimeout(deadline));
      outgoing.end();
    });
  };
}

/** The process's default {@link SourceFetch}, used when a relay context brings none. */
export const defaultSourceFetch: SourceFetch = createHttpsGet();
