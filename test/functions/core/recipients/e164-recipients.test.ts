import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { evaluateWebhook } from '../../../../functions/core/pipeline/evaluate';
import { normalizeRecipient } from '../../../../functions/core/recipients/numbering';
import { problemsOf } from '../config/support';
import { webhookOf } from '../sources/helpers';

describe('normalizeRecipient: every recipient as its E.164 digits', () => {
  it.each([
    ['0712 345 678', 'TZ', '255712345678'],
    ['+255 712 345 678', 'TZ', '255712345678'],
    ['+254 712 345 678', 'TZ', '254712345678'],
    ['00256 772 123456', 'TZ', '256772123456'],
    ['0712 345 678', 'KE', '254712345678'],
    ['+255 712 345 678', 'KE', '255712345678'],
  ])('reads %s (defaultCountry %s) as %s', (raw, country, digits) => {
    expect(normalizeRecipient(raw, country)).toEqual({ ok: true, number: digits });
  });

  it.each([
    ['0222123456', 'TZ', 'not a mobile number (landline)'],
    ['+255 22 212 3456', 'KE', 'not a mobile number (landline)'],
    ['+254 20 2222222', 'TZ', 'not a mobile number (landline)'],
    ['+254 712', 'TZ', 'not a valid number for +254'],
    ['call me', 'TZ', 'not a phone number'],
  ])('refuses %s (defaultCountry %s): %s, never naming the number', (raw, country, reason) => {
    expect(normalizeRecipient(raw, country)).toEqual({ ok: false, reason });
  });
});

/** `main` texts +255, `at` +254: a Kenyan number is taken, a Congolese one has no provider. */
const config = (recipients: string, extra = ''): string => `
providers:
  main: { type: sms-service, baseUrl: "https://sms.example.co.tz" }
  at: { type: africastalking, username: acme }
routing:
  - { numbers: ["+255"], use: [main] }
  - { numbers: ["+254"], use: [at] }
${extra}
routes:
  alerts: { source: generic, secret: s, recipients: ${recipients} }
`;

const evaluate = (text: string, phone: string) =>
  evaluateWebhook(
    loadConfig(text, 'test.yaml').routes.get('alerts')!,
    webhookOf({ body: JSON.stringify({ message: 'disk full', phone }), headers: { authorization: 'Bearer s' } }),
    { secret: 's' },
  );

describe("a route's recipients under the config's providers and defaultCountry", () => {
  it('keeps a templated number a provider texts as its E.164 digits', () => {
    const evaluation = evaluate(config('["{{ phone }}"]'), '+254 712 345 678');
    expect(evaluation.messages[0]?.to).toEqual(['254712345678']);
    expect(evaluation.dropped).toEqual([]);
  });

  it('keeps a 0712… number Tanzanian, as 255712…', () => {
    expect(evaluate(config('["{{ phone }}"]'), '0712345678').messages[0]?.to).toEqual(['255712345678']);
  });

  it("reads a number without a country code as defaultCountry's", () => {
    const kenyan = evaluate(config('["{{ phone }}"]', 'defaultCountry: KE'), '0712345678');
    expect(kenyan.messages[0]?.to).toEqual(['254712345678']);
  });

  it('drops a templated number no provider texts, naming it masked', () => {
    const evaluation = evaluate(config('["0712345678", "{{ phone }}"]'), '+243 812 345 678');
    expect(evaluation.messages[0]?.to).toEqual(['255712345678']);
    expect(evaluation.dropped).toMatchObject([{ entry: '{{ phone }}', reason: 'no provider for +2438****678' }]);
  });

  it('takes a literal number another provider texts, and refuses one no provider texts, naming the key', () => {
    expect(loadConfig(config('["+254712345678"]'), 'test.yaml').routes.get('alerts')?.recipientNumbers).toEqual([
      ['254712345678'],
    ]);
    expect(problemsOf(config('["0712345678", "+243812345678"]'))).toContain(
      'routes.alerts.recipients[1]: no provider for +2438****678',
    );
    expect(problemsOf(config('["0712345678"]', 'balance: { threshold: 10, notify: ["+243812345678"] }'))).toContain(
      'balance.notify[0]: no provider for +2438****678',
    );
  });

  it('reads people, balance.notify and allowRecipients the same way', () => {
    const text = `${config(
      '["person:wanjiru"]',
      `defaultCountry: TZ
people:
  wanjiru: { phone: "+254712345678" }
balance: { threshold: 10, notify: ["+254 711 000 111"] }`,
    )}`;
    const loaded = loadConfig(text, 'test.yaml');
    expect(loaded.routes.get('alerts')?.recipientNumbers).toEqual([['254712345678']]);
    expect(loaded.balanceNotify).toEqual(['254711000111']);
    const allowed = loadConfig(
      config('["{{ query.to }}"]').replace('recipients:', 'allowRecipients: ["+2547*"], recipients:'),
      'test.yaml',
    );
    expect(allowed.routes.get('alerts')?.recipients.allow?.prefixes).toEqual(['2547']);
  });
});
