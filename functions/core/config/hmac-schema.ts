import { z } from 'zod';

/**
 * The settings of a route with `source: hmac`: which header carries the signature, how it is
 * computed and encoded, what it covers, and optionally a signed timestamp and a delivery-id header.
 * Validated here, at load; the `hmac` pack reads them from its route.
 */

/** The placeholders a `signed` pattern may name; every other character is taken literally. */
export const SIGNED_PLACEHOLDERS = ['{body}', '{timestamp}'] as const;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

const headerName = z
  .string()
  .regex(HEADER_NAME, { message: 'a header name, like x-paystack-signature' })
  // The relay sees header names lower-cased.
  .transform((name) => name.toLowerCase());

const signedPattern = z
  .string()
  .max(256)
  .superRefine((pattern, context) => {
    const unknown = [...pattern.matchAll(/\{[^{}]*\}/g)]
      .map(([match]) => match)
      .filter((match) => !(SIGNED_PLACEHOLDERS as readonly string[]).includes(match));
    if (unknown.length > 0) {
      context.addIssue({
        code: 'custom',
        message: `unknown placeholder ${unknown.join(', ')}; only {body} and {timestamp} can be signed`,
      });
    } else if (/[{}]/.test(pattern.replaceAll('{body}', '').replaceAll('{timestamp}', ''))) {
      context.addIssue({ code: 'custom', message: 'a lone "{" or "}"; only {body} and {timestamp} can be signed' });
    }
    if (pattern.split('{body}').length !== 2)
      context.addIssue({
        code: 'custom',
        message: 'must name {body} exactly once: a signature that does not cover the body protects nothing',
      });
    if (pattern.split('{timestamp}').length > 2)
      context.addIssue({ code: 'custom', message: 'names {timestamp} more than once' });
  });

export const HmacSignatureSchema = z.strictObject({
  header: headerName,
  algorithm: z.enum(['sha1', 'sha256', 'sha512'], { message: 'algorithm is sha1, sha256 or sha512' }).default('sha256'),
  encoding: z.enum(['hex', 'base64'], { message: 'encoding is hex or base64' }).default('hex'),
  prefix: z
    .string()
    .regex(/^[\x21-\x7e]{0,32}$/, {
      message: 'prefix is up to 32 printable ASCII characters without spaces, like "sha256="',
    })
    .default(''),
  signed: signedPattern.default('{body}'),
});

export const HmacTimestampSchema = z.strictObject({
  header: headerName,
  /** Seconds; when absent the route's `toleranceSeconds` applies. */
  tolerance: z.number().int().positive().max(86_400).optional(),
});

export const HmacDedupeSchema = z.strictObject({ header: headerName });

/** An `hmac` route's validated settings, as the `hmac` pack and the captured headers read them. */
export interface HmacRouteSettings {
  readonly signature?: z.output<typeof HmacSignatureSchema> | undefined;
  readonly timestamp?: z.output<typeof HmacTimestampSchema> | undefined;
  readonly dedupe?: z.output<typeof HmacDedupeSchema> | undefined;
}

interface HmacSettings extends HmacRouteSettings {
  readonly source: string;
}

/**
 * The rules across a route's fields: `signature` is required for `source: hmac` and, like
 * `timestamp` and `dedupe`, allowed only there; a `signed` pattern naming `{timestamp}` needs
 * `timestamp.header`, and a `timestamp` the signature does not cover is refused (anyone could
 * change it, so checking it would protect nothing).
 */
export function checkHmacSettings(route: HmacSettings, context: z.RefinementCtx): void {
  if (route.source !== 'hmac') {
    for (const key of ['signature', 'timestamp', 'dedupe'] as const) {
      if (route[key] !== undefined)
        context.addIssue({
          code: 'custom',
          path: [key],
          message: `only for source hmac (this route's source is ${route.source})`,
        });
    }
    return;
  }
  if (route.signature === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['signature'],
      message: 'is required for source hmac: at least signature.header, the header that carries the signature',
    });
    return;
  }
  const signsTimestamp = route.signature.signed.includes('{timestamp}');
  if (signsTimestamp && route.timestamp === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['signature', 'signed'],
      message: 'names {timestamp}: set timestamp.header to the header that carries it',
    });
  }
  if (!signsTimestamp && route.timestamp !== undefined) {
    context.addIssue({
      code: 'custom',
      path: ['timestamp'],
      message:
        'is not covered by the signature: name {timestamp} in signature.signed (e.g. "{timestamp}.{body}"); an unsigned timestamp can be changed by anyone',
    });
  }
}
