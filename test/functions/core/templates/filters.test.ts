import { describe, expect, it } from 'vitest';
import {
  createTemplateEngine,
  DEFAULT_DATE_FORMAT,
  EPOCH_MILLIS_THRESHOLD,
  SMS_FILTERS,
} from '../../../../functions/core/templates';

const engine = createTemplateEngine();
const render = (source: string, scope: Record<string, unknown> = {}, on = engine) =>
  on.render(on.compileTemplate(source), scope).text;
/** Renders `{{ value | <filter> }}` with `value` from the scope, so types survive (numbers, null). */
const apply = (filter: string, value: unknown, on = engine) => render(`{{ value | ${filter} }}`, { value }, on);

describe('SMS_FILTERS', () => {
  it('documents every registered filter once', () => {
    expect(SMS_FILTERS.map(({ name }) => name)).toEqual([
      'phone',
      'mask_phone',
      'money',
      'money_minor',
      'date_tz',
      'sms_safe',
    ]);
  });

  it.each(SMS_FILTERS.map((doc) => [doc.name, doc] as const))(
    '%s: the example docs/configuration.md shows renders as documented',
    (_, doc) => {
      expect(render(doc.example.template)).toBe(doc.example.output);
      expect(doc.usage).toContain(doc.name);
    },
  );
});

describe('phone', () => {
  it.each([
    [255712345678, '+255 712 345 678'],
    ['255712345678', '+255 712 345 678'],
    ['0712345678', '+255 712 345 678'],
    ['+255 754-321-000', '+255 754 321 000'],
    ['+254712345678', '+254 712 345678'],
    ['0222123456', '+255 22 212 3456'],
    ['12345', '12345'],
    ['call me', 'call me'],
    ['', ''],
    [null, ''],
  ])('%j → %j', (value, expected) => {
    expect(apply('phone', value)).toBe(expected);
  });
});

describe('mask_phone', () => {
  it.each([
    ['255712345678', '2557****678'],
    [255712345678, '2557****678'],
    ['0712 345 678', '2557****678'],
    ['+255 712 345 678', '2557****678'],
    ['+254712345678', '2547****678'],
    ['12345', '****'],
    ['none', 'none'],
    [null, ''],
  ])('%j → %j', (value, expected) => {
    expect(apply('mask_phone', value)).toBe(expected);
  });
});

describe('money', () => {
  it.each([
    ['money', 1234567.5, 'TZS 1,234,567.50'],
    ['money', '1500.00', 'TZS 1,500.00'],
    ['money', ' 29.99 ', 'TZS 29.99'],
    ['money', 0, 'TZS 0.00'],
    ['money', -12.5, '-TZS 12.50'],
    ['money', '0.005', 'TZS 0.01'],
    ["money: 'USD'", '29.99', 'USD 29.99'],
    ["money: 'usd'", 5, 'USD 5.00'],
    ["money: 'JPY'", 1500, 'JPY 1,500'],
    ['money', '820982911946154508', 'TZS 820,982,911,946,154,508.00'],
    ['money', '9007199254740993.45', 'TZS 9,007,199,254,740,993.45'],
    ['money', 'free', 'free'],
    ['money', '1,500', '1,500'],
    ['money', null, ''],
    ["money: 'NOPE'", 5, '5'],
    ['money_minor', 2999, 'TZS 29.99'],
    ["money_minor: 'USD'", 2999, 'USD 29.99'],
    ["money_minor: 'USD'", '5', 'USD 0.05'],
    ["money_minor: 'USD'", -250, '-USD 2.50'],
    ["money_minor: 'JPY'", 500, 'JPY 500'],
    ["money_minor: 'KWD'", 1234, 'KWD 1.234'],
    ['money_minor', '820982911946154508', 'TZS 8,209,829,119,461,545.08'],
    ['money_minor', 29.99, '29.99'],
    ['money_minor', 'abc', 'abc'],
  ])('%s on %j → %j', (filter, value, expected) => {
    expect(apply(filter, value)).toBe(expected);
  });

  it('uses only plain spaces (GSM-7), not the no-break space Intl produces', () => {
    expect(apply('money', 1)).not.toMatch(/[\u00A0\u202F]/);
  });

  it("uses the engine's currency", () => {
    expect(apply('money', 10, createTemplateEngine({ currency: 'KES' }))).toBe('KES 10.00');
  });
});

describe('date_tz', () => {
  const utc = createTemplateEngine({ timeZone: 'UTC' });

  it('defaults to the documented format and the epoch threshold is 1e11', () => {
    expect(DEFAULT_DATE_FORMAT).toBe('%Y-%m-%d %H:%M');
    expect(EPOCH_MILLIS_THRESHOLD).toBe(1e11);
  });

  it.each([
    ['date_tz', '2026-03-01T10:00:00Z', '2026-03-01 13:00'],
    ['date_tz', '2026-03-01T22:30:00Z', '2026-03-02 01:30'],
    ['date_tz', '2026-03-01T10:00:00+02:00', '2026-03-01 11:00'],
    ['date_tz', '2026-03-01T10:00:00.123Z', '2026-03-01 13:00'],
    ['date_tz', '2026-03-01T10:00:00', '2026-03-01 13:00'],
    ['date_tz', '2026-03-01 10:00:00', '2026-03-01 13:00'],
    ['date_tz', 'Sun, 01 Mar 2026 10:00:00 GMT', '2026-03-01 13:00'],
    ['date_tz', 1772359200, '2026-03-01 13:00'],
    ['date_tz', '1772359200', '2026-03-01 13:00'],
    ['date_tz', 1772359200000, '2026-03-01 13:00'],
    ['date_tz', '1772359200000', '2026-03-01 13:00'],
    ["date_tz: '%H:%M'", '2026-03-01T10:00:00Z', '13:00'],
    ["date_tz: '%d %b %Y, %-I:%M %p'", '2026-03-01T10:00:00Z', '01 Mar 2026, 1:00 PM'],
    ["date_tz: '%H:%M', 'UTC'", '2026-03-01T10:00:00Z', '10:00'],
    ["date_tz: '%H:%M %Z', 'Africa/Nairobi'", '2026-03-01T10:00:00Z', '13:00 Africa/Nairobi'],
    ["date_tz: '%H:%M %z', 'Europe/London'", '2026-01-15T10:00:00Z', '10:00 +0000'],
    ["date_tz: '%H:%M %z', 'Europe/London'", '2026-07-15T10:00:00Z', '11:00 +0100'],
    ["date_tz: '%H:%M', 'America/New_York'", '2026-03-09T03:30:00Z', '23:30'],
    ["date_tz: nil, 'UTC'", '2026-03-01T10:00:00Z', '2026-03-01 10:00'],
    ['date_tz', 'not a date', 'not a date'],
    ['date_tz', 'Order 12', 'Order 12'],
    ['date_tz', '2026-13-45T99:00:00Z', '2026-13-45T99:00:00Z'],
    ["date_tz: '%H:%M', 'Mars/Olympus'", '2026-03-01T10:00:00Z', '2026-03-01T10:00:00Z'],
    ['date_tz', null, ''],
    ['date_tz', true, 'true'],
  ])('%s on %j → %j', (filter, value, expected) => {
    expect(apply(filter, value)).toBe(expected);
  });

  it("uses the engine's zone by default", () => {
    expect(apply('date_tz', '2026-03-01T10:00:00Z', utc)).toBe('2026-03-01 10:00');
  });

  it('reads "now"', () => {
    expect(apply("date_tz: '%Y'", 'now')).toMatch(/^\d{4}$/);
  });
});

describe('sms_safe', () => {
  it.each([
    ['🔥 “Disk” full — 95%', '"Disk" full - 95%'],
    ['Deploy ✅ done…', 'Deploy done...'],
    ['Olá, você', 'Ola, voce'],
    ['tab\there', 'tab here'],
    ['line\nbreak', 'line\nbreak'],
    ['{[€]}', '{[€]}'],
    ['汉字', ''],
    [42, '42'],
    [null, ''],
  ])('%j → %j', (value, expected) => {
    expect(apply('sms_safe', value)).toBe(expected);
  });
});

describe('date (LiquidJS built-in, made faster)', () => {
  const instants = [
    '2026-03-01T10:00:00Z',
    '2026-03-08T06:59:59Z',
    '2026-03-08T07:00:00Z',
    '2026-10-25T00:30:00Z',
    '2026-10-25T01:30:00Z',
    '1999-12-31T23:59:59.999Z',
    1772359200,
    '1772359200',
  ];
  const formats = ['%Y-%m-%d %H:%M:%S %z', '%a %A %b %B %-d %-I:%M %p', '%%b %b', '%^b %Z', undefined];
  const zones = ['Africa/Dar_es_Salaam', 'Europe/London', 'America/Los_Angeles', 'Asia/Kolkata', 'UTC'];

  it.each(zones)('renders like LiquidJS itself in %s', async (zone) => {
    const { Liquid } = await import('liquidjs');
    const reference = new Liquid({ timezoneOffset: zone, locale: 'en' });
    const fast = createTemplateEngine({ timeZone: zone });
    for (const value of instants) {
      for (const format of formats) {
        const source = format === undefined ? '{{ value | date }}' : `{{ value | date: '${format}' }}`;
        expect(render(source, { value }, fast), `${String(value)} ${source}`).toBe(
          reference.renderSync(reference.parse(source), { value }),
        );
      }
    }
  });

  it('takes a zone argument and leaves non-dates alone', () => {
    expect(apply("date: '%H:%M', 'Asia/Tokyo'", '2026-03-01T10:00:00Z')).toBe('19:00');
    expect(apply("date: '%H:%M'", 'soon')).toBe('soon');
    expect(apply("date: '%H:%M'", null)).toBe('');
  });
});
