import fc from 'fast-check';

/**
 * Generators of malformed webhook input for the bad-input group: bodies, content types, header
 * values and paths. Header values stay within what Node's HTTP client can send (printable Latin-1);
 * what it cannot send (bare CR/LF, NUL, conflicting framing) goes over a raw socket instead.
 */

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Whether the relay would read `text` as JSON: UTF-8 decoding drops a leading BOM first. */
export function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text.replace(/^\uFEFF/, ''));
    return true;
  } catch {
    return false;
  }
}

/** Awkward code points: NUL, BOM, RTL override, emoji (astral), combining mark, non-characters, separators. */
export const UNICODE_EDGES = [
  '\u0000',
  '\uFEFF',
  '\u202E',
  '\u{1F600}',
  'e\u0301',
  '\uFFFF',
  '\u2028',
  '\u2029',
  '\u{10FFFF}',
  'İ',
  'ß',
  '\u00A0',
  '\u200B',
  '"',
  '\\',
  '\u0007',
  '\u{E0001}',
];

const edgyText = fc
  .array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.constantFrom(...UNICODE_EDGES)), { maxLength: 12 })
  .map((parts) => parts.join(''));

/** JSON texts that do not parse: truncations, JavaScript-isms, trailing garbage, BOMs, random text. */
export const brokenJsonText: fc.Arbitrary<string> = fc
  .oneof(
    fc.json().map((text) => text.slice(0, Math.max(1, Math.floor(text.length / 2)))),
    fc.json().map((text) => `${text}}`),
    fc.json().map((text) => `\uFEFF${text}`),
    fc.string({ unit: 'binary', maxLength: 200 }),
    edgyText,
    fc.constantFrom(
      '{',
      '[',
      '{"tag":',
      '{"tag":"x",}',
      "{'tag':'x'}",
      '{"tag":undefined}',
      'NaN',
      '{"a":01}',
      '{"a":1}{"a":2}',
      '[1,2',
      '"\\u12"',
      '{"\\ud800":"x"',
      'nul',
      'tru',
      '-',
      '1e',
      '{"a":"\u0000',
      ' ',
    ),
  )
  .filter((text) => !parsesAsJson(text));

/** Bytes that are not UTF-8: random bytes, overlong forms, encoded surrogates, stray continuation bytes. */
export const invalidUtf8: fc.Arbitrary<Uint8Array> = fc
  .oneof(
    fc.uint8Array({ minLength: 1, maxLength: 300 }),
    fc.constantFrom(
      Uint8Array.from([0xc0, 0xaf]),
      Uint8Array.from([0xe0, 0x80, 0xaf]),
      Uint8Array.from([0xed, 0xa0, 0x80]),
      Uint8Array.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
      Uint8Array.from([0x7b, 0x22, 0x74, 0x61, 0x67, 0x22, 0x3a, 0x22, 0x80, 0x22, 0x7d]),
    ),
  )
  .filter((bytes) => !isValidUtf8(bytes));

/** Valid JSON that is not an object: what a sender with the wrong shape posts. */
export const nonObjectJson: fc.Arbitrary<string> = fc
  .oneof(
    fc
      .jsonValue({ maxDepth: 3 })
      .filter((value) => value === null || typeof value !== 'object' || Array.isArray(value)),
    fc.constantFrom(0, -0, 1e308, 'string', '', true, false, null, [], [[]], [{}]),
  )
  .map((value) => JSON.stringify(value));

/** Objects whose `alerts` is anything but an array (or missing): not an Alertmanager/Grafana notification. */
export const notAnAlertGroup: fc.Arbitrary<string> = fc
  .record(
    {
      alerts: fc.oneof(
        fc.constant(undefined),
        fc.constant(null),
        fc.string(),
        fc.integer(),
        fc.object({ maxDepth: 1 }),
        fc.boolean(),
      ),
      status: fc.oneof(fc.constantFrom('firing', 'resolved'), fc.jsonValue({ maxDepth: 1 })),
      extra: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: ['status'] },
  )
  .map((value) => JSON.stringify(value));

/** Deeply nested JSON: a parser or a renderer that recurses without bound falls over here. */
export const deeplyNested: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 500, max: 20_000 }), fc.constantFrom('array', 'object'))
  .map(([depth, kind]) =>
    kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

/** Keys that could never make a generic `{{ phone }}` route find a recipient. */
const safeKey = fc.string({ maxLength: 12 }).filter((key) => !key.toLowerCase().includes('phone'));

/**
 * JSON objects with wrong types and odd keys for a generic route whose only recipient is `{{ phone }}`:
 * whatever they hold, they name no phone, so nothing can be sent.
 */
export const oddObjects: fc.Arbitrary<string> = fc
  .oneof(
    {
      weight: 8,
      arbitrary: fc
        .dictionary(safeKey, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 })
        .map((value) => JSON.stringify(value)),
    },
    {
      weight: 8,
      arbitrary: fc
        .record({
          message: fc.oneof(fc.jsonValue({ maxDepth: 2 }), edgyText),
          tag: fc.oneof(edgyText, fc.jsonValue({ maxDepth: 1 })),
        })
        .map((value) => JSON.stringify(value)),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '{"__proto__":{"polluted":true},"message":"x"}',
        '{"constructor":{"prototype":{"polluted":true}}}',
        '{"message":"{{ 7*7 }}{% raw %}{%"}',
        `{"message":"${'x'.repeat(5000)}"}`,
        '{"message":"\\ud800 lone surrogate \\udfff"}',
        '{"message":1e400,"tag":12345678901234567890123}',
      ),
    },
  )
  .filter((text) => !/phone/i.test(text));

/** Form bodies (the generic source reads them as fields) naming no phone. */
export const formBodies: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ maxLength: 200 }),
    fc.dictionary(safeKey, edgyText, { maxKeys: 5 }).map((fields) => new URLSearchParams(fields).toString()),
  )
  .filter((text) => !/phone/i.test(decodeURIComponentSafe(text)));

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

export const contentTypes: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constantFrom(
    undefined,
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=utf-16',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=----x',
    'application/xml',
    'application/octet-stream',
    '',
    '*/*',
    'application/json;;;;',
    'APPLICATION/JSON',
    'application/x-www-form-urlencoded; charset=latin1',
  ),
  printableLatin1(40),
);

/** Header values Node's client accepts: tab, printable ASCII and Latin-1 above 0x80. */
export function printableLatin1(maxLength: number): fc.Arbitrary<string> {
  return fc
    .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }), fc.constant(0x09)), {
      maxLength,
    })
    .map((codes) => String.fromCharCode(...codes).trim());
}

/** Authorization values that must never authenticate (no real secret in them). */
export const junkAuthorization: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constantFrom(
    undefined,
    '',
    'Bearer',
    'Bearer ',
    'Basic',
    'Basic !!!',
    `Basic ${Buffer.from('nocolon').toString('base64')}`,
    `Basic ${Buffer.from(':').toString('base64')}`,
    'Digest x',
    'bearer null',
    'Bearer undefined',
  ),
  printableLatin1(60).map((value) => `Bearer ${value}`),
  printableLatin1(60).map((value) => `Basic ${Buffer.from(`user:${value}`).toString('base64')}`),
  fc.integer({ min: 4_000, max: 12_000 }).map((length) => `Bearer ${'A'.repeat(length)}`),
  printableLatin1(80),
);

/** Route names no test config has, percent-encoded as a client would put them in a path. */
export function unknownRouteSegment(known: ReadonlySet<string>): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
      fc.constantFrom('..', '.', '%', 'AMO', 'amo ', ' amo', 'a'.repeat(300), '_relay', 'health', 'hooks'),
    )
    .filter((name) => !known.has(name) && name !== '')
    .map((name) => encodeURIComponent(name));
}
