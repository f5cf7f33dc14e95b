import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { parseConfig } from '../../../../functions/core/config/parse';
import { compileProviderRouting } from '../../../../functions/core/config/routing';
import { routingSettings } from '../../../../functions/core/config/compile';
import { toE164 } from '../../../../functions/core/recipients/e164';
import { problemsOf } from './support';

const ROUTES = `routes:
  alerts: { source: alertmanager, secret: t, recipients: ["0712345678"] }
`;

/** The example: three providers of the three types, routed by prefix. */
const THREE_PROVIDERS = `providers:
  main:
    type: sms-service
    baseUrl: https://sms.example.co.tz
    defaultSenderId: OPS-ALERT
  at:
    type: africastalking
    username: acme
    senderId: ACME
  gateway:
    type: http
    url: https://gw.example.com/api/v1/sms/send
    headers: { X-API-Key: "{{ secret.gateway-key }}" }
    body: '{"to": {{ to | json }}, "message": {{ text | json }}}'
    accepted: [200, 201, 202]
routing:
  - numbers: ["+255"]
    use: [main, at]
  - numbers: ["+254", "+256", "+250"]
    use: [at, gateway]
failover:
  on: [unreachable, insufficient-credit]
`;

// The schema's reading of `providers:` (compileConfig refuses more than one sms-service provider
// until the sender sends through them: see the last test).
const routingOf = (text: string) => compileProviderRouting(routingSettings(parseConfig(text)));

describe('providers, routing and failover in the config', () => {
  it('reads the three provider types, with their defaults', () => {
    const settings = parseConfig(THREE_PROVIDERS + ROUTES);
    expect(settings.providers).toEqual({
      main: {
        type: 'sms-service',
        baseUrl: 'https://sms.example.co.tz',
        defaultSenderId: 'OPS-ALERT',
        timeoutMs: 10_000,
      },
      at: {
        type: 'africastalking',
        username: 'acme',
        senderId: 'ACME',
        baseUrl: 'https://api.africastalking.com',
        timeoutMs: 10_000,
      },
      gateway: {
        type: 'http',
        url: 'https://gw.example.com/api/v1/sms/send',
        headers: { 'X-API-Key': '{{ secret.gateway-key }}' },
        body: '{"to": {{ to | json }}, "message": {{ text | json }}}',
        accepted: [200, 201, 202],
        timeoutMs: 10_000,
      },
    });
    expect(settings.failover).toEqual({ on: ['unreachable', 'insufficient-credit'] });
    expect(settings.defaultCountry).toBe('TZ');
    // What the code that sends through one provider reads until it reads `providers`: the first one.
    expect(settings.provider).toMatchObject({ baseUrl: 'https://sms.example.co.tz', defaultSenderId: 'OPS-ALERT' });
  });

  it('keeps provider: alone valid, as one provider named main of type sms-service', () => {
    const { settings } = loadConfig(`provider: { baseUrl: "https://sms.example.co.tz", maxPerSecond: 5 }\n${ROUTES}`);
    expect(settings.providers).toEqual({
      main: { type: 'sms-service', baseUrl: 'https://sms.example.co.tz', timeoutMs: 10_000, maxPerSecond: 5 },
    });
    expect(settings.failover).toEqual({ on: ['unreachable', 'insufficient-credit'] });
    expect(compileProviderRouting(routingSettings(settings)).providersFor('+255712345678')).toEqual(['main']);
  });

  it('routes a number by its longest matching prefix, in the use order, less providers that cannot text it', () => {
    const routing = routingOf(
      `${THREE_PROVIDERS.replace('  - numbers: ["+255"]', '  - numbers: ["+2557"]\n    use: [at]\n  - numbers: ["+255"]')}${ROUTES.replace('0712345678', '0612345678')}`,
    );
    expect(routing.names).toEqual(['main', 'at', 'gateway']);
    expect(routing.providersFor('+255612345678')).toEqual(['main', 'at']);
    expect(routing.providersFor('+255712345678')).toEqual(['at']);
    expect(routing.providersFor('+254712345678')).toEqual(['at', 'gateway']);
    expect(routing.providersFor('+243812345678')).toEqual([]);
    expect(routing.providersFor('255712345678')).toEqual([]);
    expect(routing.failoverOn).toEqual(['unreachable', 'insufficient-credit']);
  });

  it('without routing sends every number to the providers in the order written; sms-service only +255', () => {
    const routing = routingOf(THREE_PROVIDERS.slice(0, THREE_PROVIDERS.indexOf('routing:')) + ROUTES);
    expect(routing.providersFor('+255712345678')).toEqual(['main', 'at', 'gateway']);
    expect(routing.providersFor('+254712345678')).toEqual(['at', 'gateway']);
  });

  it('takes failover.on from the config', () => {
    const routing = routingOf(
      THREE_PROVIDERS.replace('on: [unreachable, insufficient-credit]', 'on: [unreachable, refused-key]') + ROUTES,
    );
    expect(routing.failoverOn).toEqual(['unreachable', 'refused-key']);
  });

  it.each([
    [
      'an unknown type',
      'providers:\n  main: { type: twilio, baseUrl: "https://x.example" }\n',
      'providers.main.type: unknown provider type; use one of sms-service, africastalking, http',
    ],
    [
      'routing naming an unknown provider',
      'providers:\n  main: { type: sms-service, baseUrl: "https://x.example" }\nrouting:\n  - { numbers: ["+255"], use: [main, at] }\n',
      'routing[0].use[1]: unknown provider "at"; providers are main',
    ],
    [
      'an http url that is not https',
      'providers:\n  gw: { type: http, url: "http://gw.example.com/send", body: "{}" }\n',
      'providers.gw.url: url must be https (http only to a loopback address, for a local stand-in)',
    ],
    [
      'both provider and providers',
      'provider: { baseUrl: "https://x.example" }\nproviders:\n  main: { type: sms-service, baseUrl: "https://x.example" }\n',
      'providers: use either provider (one sms-service provider named main) or providers, not both',
    ],
    ['neither provider nor providers', '', 'providers: is required (or provider, for one sms-service provider)'],
    [
      'an sms-service provider routed to numbers it cannot text',
      'providers:\n  main: { type: sms-service, baseUrl: "https://x.example" }\nrouting:\n  - { numbers: ["+255"], use: [main] }\n  - { numbers: ["+254"], use: [main] }\n',
      'routing[1].use[0]: main is of type sms-service, which texts +255 numbers only',
    ],
    [
      'a prefix routed twice',
      'providers:\n  main: { type: sms-service, baseUrl: "https://x.example" }\nrouting:\n  - { numbers: ["+255"], use: [main] }\n  - { numbers: ["+255"], use: [main] }\n',
      'routing[1].numbers[0]: +255 is routed already by routing[0]',
    ],
    [
      'a failover reason that is a fault of the number',
      'provider: { baseUrl: "https://x.example" }\nfailover: { on: [invalid-number] }\n',
      'failover.on[0]: a failover reason is one of unreachable, insufficient-credit, refused-key, rate-limited',
    ],
    [
      'an unknown defaultCountry',
      'provider: { baseUrl: "https://x.example" }\ndefaultCountry: XX\n',
      'defaultCountry: defaultCountry is a two-letter country code like TZ or KE',
    ],
    [
      'an http body that is not a Liquid template',
      'providers:\n  gw: { type: http, url: "https://gw.example.com/send", body: "{{ to | json" }\n',
      expect.stringMatching(/^providers\.gw\.body: not a valid Liquid template: /),
    ],
  ])('validate refuses %s, naming the key', (_case, providers, problem) => {
    expect(problemsOf(providers + ROUTES)).toContainEqual(problem);
  });

  it('takes an http url to a loopback address (a local stand-in)', () => {
    const settings = parseConfig(
      `providers:\n  main: { type: sms-service, baseUrl: "https://x.example" }\n  gw: { type: http, url: "http://127.0.0.1:4030/api/v1/sms/send", body: "{}" }\n${ROUTES}`,
    );
    expect(settings.providers.gw).toMatchObject({ url: 'http://127.0.0.1:4030/api/v1/sms/send' });
  });

  it('refuses a literal recipient no provider covers, naming the entry and masking the number', () => {
    const atOnly =
      'providers:\n  at: { type: africastalking, username: acme }\nrouting:\n  - { numbers: ["+254"], use: [at] }\n';
    expect(problemsOf(atOnly + ROUTES)).toContainEqual('routes.alerts.recipients[0]: no provider for +2557****678');
  });

  it('refuses a person or an escalation no provider covers, naming a person once however many steps name them', () => {
    const atOnly =
      'providers:\n  at: { type: africastalking, username: acme }\nrouting:\n  - { numbers: ["+254"], use: [at] }\n';
    const paging = `people:
  baraka: { phone: "0712345678" }
  wanjiru: { phone: "+254712345678" }
routes:
  alerts:
    source: alertmanager
    secret: t
    recipients: ["person:wanjiru", "person:baraka"]
    escalate:
      - { after: 5m, to: ["person:baraka", "0713000111"] }
      - { after: 10m, to: ["person:baraka", "person:wanjiru"] }
`;
    expect(problemsOf(atOnly + paging)).toEqual([
      'people.baraka.phone: no provider for +2557****678',
      'routes.alerts.escalate[0].to: no provider for +2557****111',
    ]);
  });
});

describe('toE164', () => {
  it.each([
    ['0712 345 678', 'TZ', '+255712345678'],
    ['+255 712 345 678', 'KE', '+255712345678'],
    ['0712 345 678', 'KE', '+254712345678'],
    ['00256 772 123456', 'TZ', '+256772123456'],
  ])('normalises %s (defaultCountry %s) to %s', (raw, country, e164) => {
    expect(toE164(raw, country)).toEqual({ ok: true, number: e164 });
  });

  it.each(['', 'call me', '0712', '+999 12345'])('refuses %j without quoting it', (raw) => {
    const result = toE164(raw);
    expect(result.ok).toBe(false);
    if (!result.ok && raw !== '') expect(result.reason).not.toContain(raw);
  });
});
