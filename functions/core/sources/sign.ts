import { randomBytes, randomUUID } from 'node:crypto';
import { hmac } from './auth';
import type { SignInput } from './types';

/**
 * Helpers for a pack's `sign`: what `send-test`, the console and the tests use to post a webhook as
 * its sender would. Unrelated to authentication on purpose: a pack's signer and verifier meet only
 * in the tests, which check that one accepts what the other writes.
 */

/** A header the caller set, by any case of its name. */
export const callerHeader = (headers: SignInput['headers'], name: string): string | undefined => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === wanted) return value;
  return undefined;
};

/** Unix seconds, as the timestamp headers carry them. */
export const unixSeconds = (now: Date): string => String(Math.floor(now.getTime() / 1000));

/** Base64 or hex HMAC-SHA256 of `data`. */
export const sha256Hmac = (key: string | Uint8Array, data: string | Uint8Array, encoding: 'hex' | 'base64'): string =>
  hmac('sha256', key, data, encoding);

/** `Authorization: Bearer <secret>`: how senders with a credential present it. */
export const bearer = ({ secret }: SignInput): Record<string, string> => ({ Authorization: `Bearer ${secret}` });

/** A field of a JSON body, or `undefined` when the body is not JSON or has no such field. */
export const bodyField = (body: Uint8Array, ...path: readonly string[]): unknown => {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return undefined;
  }
  for (const key of path)
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
};

/** A fresh delivery id. */
export const freshId = (): string => randomUUID();

/** A fresh random hex id of `bytes` bytes. */
export const freshHex = (bytes = 16): string => randomBytes(bytes).toString('hex');

/** The part of the example file name before its extension, or `undefined`. */
export const firstWord = (stem: string): string => stem.split(/[-.]/)[0]!;
