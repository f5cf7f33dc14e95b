import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { readStagedConfig, stageConfig } from '../../../../functions/core/config/staged';
import { problemsOf } from './support';

const base = `
provider:
  baseUrl: https://sms.example.co.tz
secrets: sms-relay/test
routes:
`;

const route = (lines: string, id = 'pay'): string =>
  `${base}  ${id}:\n    recipients: ["0712345678"]\n    secret: s\n${lines.replace(/^/gm, '    ')}\n`;

describe('config: source hmac', () => {
  it('applies the defaults (sha256, hex, no prefix, the body) and lower-cases header names', () => {
    const config = loadConfig(route('source: hmac\nsignature: { header: X-Paystack-Signature }')).routes.get(
      'pay',
    )!.config;
    expect(config.signature).toEqual({
      header: 'x-paystack-signature',
      algorithm: 'sha256',
      encoding: 'hex',
      prefix: '',
      signed: '{body}',
    });
    expect(config.timestamp).toBeUndefined();
    expect(config.dedupe).toBeUndefined();
  });

  it('keeps every setting of the issue example, and survives staging', () => {
    const loaded = loadConfig(
      route(`source: hmac
signature:
  header: x-paystack-signature
  algorithm: sha512
  encoding: base64
  prefix: "v1="
  signed: "{timestamp}.{body}"
timestamp:
  header: X-Signature-Timestamp
  tolerance: 120
dedupe:
  header: X-Request-Id`),
    );
    const config = loaded.routes.get('pay')!.config;
    expect(config).toMatchObject({
      signature: {
        header: 'x-paystack-signature',
        algorithm: 'sha512',
        encoding: 'base64',
        prefix: 'v1=',
        signed: '{timestamp}.{body}',
      },
      timestamp: { header: 'x-signature-timestamp', tolerance: 120 },
      dedupe: { header: 'x-request-id' },
    });
    expect(readStagedConfig(JSON.stringify(stageConfig(loaded)))!.config.routes['pay']).toEqual(config);
  });

  it('requires signature (and its header) for source hmac', () => {
    expect(problemsOf(route('source: hmac'))).toEqual([
      'routes.pay.signature: is required for source hmac: at least signature.header, the header that carries the signature',
    ]);
    expect(problemsOf(route('source: hmac\nsignature: { algorithm: sha512 }'))).toEqual([
      'routes.pay.signature.header: is required',
    ]);
  });

  it('allows signature, timestamp and dedupe only with source hmac', () => {
    expect(
      problemsOf(
        route('source: github\nsignature: { header: x-sig }\ntimestamp: { header: x-ts }\ndedupe: { header: x-id }'),
      ),
    ).toEqual([
      "routes.pay.signature: only for source hmac (this route's source is github)",
      "routes.pay.timestamp: only for source hmac (this route's source is github)",
      "routes.pay.dedupe: only for source hmac (this route's source is github)",
    ]);
  });

  it('needs timestamp.header when signed names {timestamp}, and refuses a timestamp the signature does not cover', () => {
    expect(problemsOf(route('source: hmac\nsignature: { header: x-sig, signed: "{timestamp}.{body}" }'))).toEqual([
      'routes.pay.signature.signed: names {timestamp}: set timestamp.header to the header that carries it',
    ]);
    expect(problemsOf(route('source: hmac\nsignature: { header: x-sig }\ntimestamp: { header: x-ts }'))).toEqual([
      expect.stringMatching(
        /^routes\.pay\.timestamp: is not covered by the signature: name \{timestamp\} in signature\.signed/,
      ),
    ]);
    expect(
      problemsOf(
        route('source: hmac\nsignature: { header: x-sig, signed: "{timestamp}.{body}" }\ntimestamp: { tolerance: 60 }'),
      ),
    ).toEqual(['routes.pay.timestamp.header: is required']);
  });

  it('accepts only the placeholders {body} (exactly once) and {timestamp} (at most once)', () => {
    const signed = (pattern: string) =>
      problemsOf(
        route(`source: hmac\nsignature: { header: x-sig, signed: "${pattern}" }\ntimestamp: { header: x-ts }`),
      );
    expect(signed('{id}.{timestamp}.{body}')).toEqual([
      'routes.pay.signature.signed: unknown placeholder {id}; only {body} and {timestamp} can be signed',
    ]);
    expect(signed('{timestamp}.{BODY}')).toEqual([
      'routes.pay.signature.signed: unknown placeholder {BODY}; only {body} and {timestamp} can be signed',
      'routes.pay.signature.signed: must name {body} exactly once: a signature that does not cover the body protects nothing',
    ]);
    expect(signed('{timestamp}')).toEqual([
      'routes.pay.signature.signed: must name {body} exactly once: a signature that does not cover the body protects nothing',
    ]);
    expect(signed('{body}{timestamp}{body}')).toEqual([
      'routes.pay.signature.signed: must name {body} exactly once: a signature that does not cover the body protects nothing',
    ]);
    expect(signed('{timestamp}{timestamp}{body}')).toEqual([
      'routes.pay.signature.signed: names {timestamp} more than once',
    ]);
    expect(signed('{timestamp}.{body')).toEqual([
      'routes.pay.signature.signed: a lone "{" or "}"; only {body} and {timestamp} can be signed',
      'routes.pay.signature.signed: must name {body} exactly once: a signature that does not cover the body protects nothing',
    ]);
    expect(() =>
      loadConfig(
        route(
          'source: hmac\nsignature: { header: x-sig, signed: "v0:{timestamp}:{body}" }\ntimestamp: { header: x-ts }',
        ),
      ),
    ).not.toThrow();
  });

  it('refuses an unknown algorithm, encoding, option, a bad header name, prefix or tolerance, each with its path', () => {
    expect(
      problemsOf(
        route(`source: hmac
signature: { header: "x paystack", algorithm: md5, encoding: base32, prefix: "sha 256=", sign: "{body}" }
timestamp: { header: x-ts, tolerance: 0 }
dedupe: { header: "", other: 1 }`),
      ),
    ).toEqual([
      'routes.pay.signature.header: a header name, like x-paystack-signature',
      'routes.pay.signature.algorithm: algorithm is sha1, sha256 or sha512',
      'routes.pay.signature.encoding: encoding is hex or base64',
      'routes.pay.signature.prefix: prefix is up to 32 printable ASCII characters without spaces, like "sha256="',
      'routes.pay.signature: unknown option "sign"',
      expect.stringMatching(/^routes\.pay\.timestamp\.tolerance: /),
      'routes.pay.dedupe.header: a header name, like x-paystack-signature',
      'routes.pay.dedupe: unknown option "other"',
    ]);
  });

  it('reports the problems of every route at once', () => {
    const text = `${base}  a: { source: hmac, secret: s, recipients: ["0712345678"] }\n  b: { source: generic, secret: s, recipients: ["0712345678"], dedupe: { header: x-id } }\n`;
    expect(problemsOf(text)).toEqual([
      expect.stringMatching(/^routes\.a\.signature: is required/),
      expect.stringMatching(/^routes\.b\.dedupe: only for source hmac/),
    ]);
  });
});
