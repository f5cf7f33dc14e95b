import { describe, expect, it } from 'vitest';
import { loadConfig, loadConfigFile } from '../../../../functions/core/config/load';
import { creditWarnings, isAlertingRoute, responderWarnings } from '../../../../functions/core/config/warnings';
import { RoutePriority } from '../../../../functions/core/config/policies';

const PEOPLE = `people:
  asha: { phone: "0712345678" }
schedules:
  ops:
    timezone: Africa/Dar_es_Salaam
    rotation: { people: [asha], every: 1w, start: "2026-11-30T09:00" }
    notifyHandoff: false
`;

const config = (routes: string, balance = ''): string =>
  `provider: { baseUrl: "https://sms.example.co.tz" }\n${balance}${PEOPLE}routes:\n${routes}`;

const ORDERS = '  orders: { source: shopify, secret: s, recipients: ["0712345678"] }\n';

describe('validate warns when a config pages people and keeps no credit reserve', () => {
  it('an alerting source without balance.reserve: one warning naming the route', () => {
    const loaded = loadConfig(config(`  pages: { source: grafana, secret: t, recipients: ["0712345678"] }\n${ORDERS}`));
    expect(creditWarnings(loaded)).toEqual([
      expect.stringMatching(/^balance\.reserve: none, but route pages pages people/),
    ]);
  });

  it('a generic route that escalates, or sends to oncall:, pages people too', () => {
    const escalating = `  hooks:
    source: generic
    secret: t
    recipients: ["0712345678"]
    escalate:
      - after: 10m
        to: ["person:asha"]
    incident: { key: "{{ id }}", resolved: "status == 'ok'" }
`;
    const onCall = '  rota: { source: generic, secret: t, recipients: ["oncall:ops"] }\n';
    const loaded = loadConfig(config(`${escalating}${onCall}${ORDERS}`));
    expect([...loaded.routes.values()].map((route) => [route.id, isAlertingRoute(route)])).toEqual([
      ['hooks', true],
      ['rota', true],
      ['orders', false],
    ]);
    expect(creditWarnings(loaded)).toEqual([expect.stringContaining('routes hooks, rota page people')]);
  });

  it('no warning with a reserve, or with no route that pages anyone', () => {
    const withReserve = config(
      '  pages: { source: alertmanager, secret: t, recipients: ["0712345678"], priority: critical }\n',
      'balance: { threshold: 500, reserve: 100, notify: ["0712345678"] }\n',
    );
    expect(creditWarnings(loadConfig(withReserve))).toEqual([]);
    expect(creditWarnings(loadConfig(config(ORDERS)))).toEqual([]);
  });
});

describe('config/prod.yaml uses the credit safety it has', () => {
  const prod = loadConfigFile('config/prod.yaml');

  it('keeps a reserve under its threshold, and its on-call route may spend it', () => {
    const balance = prod.settings.balance!;
    expect(balance.reserve).toBeGreaterThan(0);
    expect(balance.reserve).toBeLessThan(balance.threshold);
    expect(prod.routes.get('oncall')!.config.priority).toBe(RoutePriority.Critical);
    expect(creditWarnings(prod)).toEqual([]);
  });

  it('caps what every non-critical route may send', () => {
    for (const route of prod.routes.values()) {
      if (route.config.priority === RoutePriority.Critical) continue;
      expect(route.config.limits, route.id).toBeDefined();
    }
    expect(prod.routes.get('ci')!.config.limits).toMatchObject({ messages: 20, creditsPerDay: 300 });
  });
});

describe('validate warns when an Opsgenie route cannot find the responders its alerts name', () => {
  const OG = '  og: { source: opsgenie, secret: k, recipients: ["0712345678"] }\n';
  const bare = (routes: string): string => `provider: { baseUrl: "https://sms.example.co.tz" }\nroutes:\n${routes}`;

  it("no people or schedules: every alert goes to the route's recipients", () => {
    expect(responderWarnings(loadConfig(bare(`${OG}${ORDERS}`)))).toEqual([
      expect.stringMatching(
        /^people, schedules: none, so the responders an alert of route og names page no one by name/,
      ),
    ]);
  });

  it('people but none with an email: a user named by username pages no one', () => {
    expect(responderWarnings(loadConfig(config(OG)))).toEqual([
      expect.stringMatching(/^people: none has an email:, so a responder of route og named by its username/),
    ]);
  });

  it('nothing once a person has an email, nor for a config without such a route', () => {
    const withEmail = config(OG).replace(
      'asha: { phone: "0712345678" }',
      'asha: { phone: "0712345678", email: asha@example.com }',
    );
    expect(responderWarnings(loadConfig(withEmail))).toEqual([]);
    expect(responderWarnings(loadConfig(bare(ORDERS)))).toEqual([]);
    expect(responderWarnings(loadConfigFile('config/local.yaml'))).toEqual([]);
  });
});
