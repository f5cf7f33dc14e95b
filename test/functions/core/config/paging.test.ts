import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { linkLength, pagingWarnings } from '../../../../functions/core/paging/compile';
import { SOURCE_NAMES, sourcePack } from '../../../../functions/core/sources/registry';
import { problemsOf } from './support';

/** The contract; `route` replaces the route's paging keys, `source` its source. */
const config = ({ source = 'alertmanager', paging = CONTRACT, extra = '' } = {}): string => `
provider:
  baseUrl: https://sms.example.co.tz
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
schedules:
  ops:
    timezone: Africa/Dar_es_Salaam
    rotation:
      people: [asha, baraka]
      every: 1w
      start: "2026-11-30T09:00"
    notifyHandoff: false
routes:
  alerts:
    source: ${source}
    secret: alerts
    recipients: ["oncall:ops"]
${extra}
${paging}
`;

const CONTRACT = `    escalate:
      - after: 10m
        to: ["person:baraka"]
      - after: 30m
        to: ["0754999888"]
    renotify: { every: 15m, max: 3 }
    ack: { baseUrl: "https://sms.example.co.tz" }`;

describe('paging keys of a route', () => {
  it("loads the issue's contract: steps in seconds, recipients compiled, the source's incident rule", () => {
    const paging = loadConfig(config()).routes.get('alerts')!.paging!;
    expect(paging.steps.map((step) => step.afterSeconds)).toEqual([600, 1800]);
    expect(paging.steps[0]!.to.entries).toEqual([
      expect.objectContaining({ kind: 'literal', numbers: ['255754000111'] }),
    ]);
    expect(paging.steps[1]!.to.entries).toEqual([
      expect.objectContaining({ kind: 'literal', numbers: ['255754999888'] }),
    ]);
    expect(paging.renotify).toEqual({ everySeconds: 900, max: 3 });
    expect(paging.ack).toEqual({ baseUrl: 'https://sms.example.co.tz' });
    expect(paging.ruleFrom).toBe('source');
    expect(paging.key.source).toBe('{{ groupKey }}');
  });

  it('leaves a route without paging keys without paging', () => {
    expect(loadConfig(config({ paging: '' })).routes.get('alerts')!.paging).toBeUndefined();
  });

  it('refuses an after under a minute and steps that do not increase', () => {
    expect(
      problemsOf(
        config({
          paging: `    escalate:
      - after: 30s
        to: ["person:baraka"]`,
        }),
      ),
    ).toEqual(['routes.alerts.escalate[0].after: after is at least 1m (the sweeper acts once a minute), got "30s"']);
    expect(
      problemsOf(
        config({
          paging: `    escalate:
      - after: 1m
        to: ["person:baraka"]
      - after: 10m
        to: ["person:asha"]
      - after: 10m
        to: ["person:asha"]`,
        }),
      ),
    ).toEqual(['routes.alerts.escalate[2].after: after must increase: step 3 comes at or before step 2']);
  });

  it('refuses more escalation steps than an incident timeline has lines for', () => {
    const steps = (count: number): string =>
      `    escalate:\n${Array.from({ length: count }, (_, index) => `      - { after: ${index + 1}m, to: ["person:baraka"] }`).join('\n')}`;
    expect(loadConfig(config({ paging: steps(30) })).routes.get('alerts')!.paging!.steps).toHaveLength(30);
    expect(problemsOf(config({ paging: steps(31) }))).toEqual([
      'routes.alerts.escalate: escalate lists at most 30 steps',
    ]);
  });

  it('refuses an unknown person or schedule and a templated recipient in a step', () => {
    expect(
      problemsOf(
        config({
          paging: `    escalate:
      - after: 1m
        to: ["person:carol"]
      - after: 2m
        to: ["oncall:nights"]
      - after: 3m
        to: ["{{ labels.phone }}"]`,
        }),
      ),
    ).toEqual([
      expect.stringMatching(/^routes\.alerts\.escalate\[0\]\.to: .*unknown person "carol"/),
      expect.stringMatching(/^routes\.alerts\.escalate\[1\]\.to: .*unknown schedule "nights"/),
      'routes.alerts.escalate[2].to: an escalation is sent without a webhook, so its recipients are numbers, person:<name> or oncall:<schedule>, not templates',
    ]);
  });

  it.each(SOURCE_NAMES)(
    "pages a %s route by its pack's incident rule, or refuses it where the pack has none",
    (source) => {
      const extra =
        {
          sns: '    topics: ["arn:aws:sns:eu-west-1:123456789012:alarms"]',
          hmac: '    signature: { header: x-signature }',
        }[source as 'sns' | 'hmac'] ?? '';
      const rule = sourcePack(source).incident;
      const text = config({ source, extra });
      if (rule === undefined) {
        expect(problemsOf(text)[0]).toMatch(/^routes\.alerts\.escalate: source .* has no notion/);
        return;
      }
      const paging = loadConfig(text).routes.get('alerts')!.paging!;
      expect(paging.ruleFrom).toBe('source');
      expect([paging.key.source, paging.resolved.source]).toEqual([rule.key, rule.resolved]);
    },
  );

  it("opens incidents on a route of a source whose rule is always (Opsgenie's): without any paging key, nothing to escalate", () => {
    const paging = loadConfig(config({ source: 'opsgenie', paging: '' })).routes.get('alerts')!.paging!;
    expect(paging).toMatchObject({ ruleFrom: 'source', steps: [] });
    expect(paging.key.source).toBe('{{ alias | default: message }}');
    expect(paging).not.toHaveProperty('ack');
    expect(paging).not.toHaveProperty('renotify');
    // Any other source's route without paging keys pages no one.
    expect(loadConfig(config({ paging: '' })).routes.get('alerts')!.paging).toBeUndefined();
  });

  it('refuses escalate and ack on a source without incidents unless the route says how', () => {
    const generic = { source: 'generic' };
    expect(problemsOf(config({ ...generic, paging: '    ack: {}' }))).toEqual([
      'routes.alerts.ack: source generic has no notion of an alert that resolves; say how with incident: { key: "<template>", resolved: "<condition>" }',
    ]);
    expect(problemsOf(config(generic))[0]).toMatch(/^routes\.alerts\.escalate: source generic has no notion/);
    const paging = loadConfig(
      config({ ...generic, paging: `${CONTRACT}\n    incident: { key: "{{ id }}", resolved: "state == 'ok'" }` }),
    ).routes.get('alerts')!.paging!;
    expect(paging.ruleFrom).toBe('route');
    expect(paging.resolved.source).toBe("state == 'ok'");
  });

  it("refuses paging on a fanOut route without its own incident rule (the source's would give every item one incident)", () => {
    expect(problemsOf(config({ extra: '    fanOut: alerts' }))).toEqual([
      `routes.alerts.escalate: a fanOut route opens an incident per item; say how with incident: { key: "<template of item>", resolved: "<condition on item>" }, e.g. { key: "{{ item.fingerprint }}", resolved: "item.status == 'resolved'" }`,
    ]);
    const paging = loadConfig(
      config({
        extra: '    fanOut: alerts',
        paging: `${CONTRACT}\n    incident: { key: "{{ item.fingerprint }}", resolved: "item.status == 'resolved'" }`,
      }),
    ).routes.get('alerts')!.paging!;
    expect(paging.key.source).toBe('{{ item.fingerprint }}');
  });

  it.each([
    ['grafana', '{{ groupKey }}'],
    ['pagerduty', '{{ event.data.id }}'],
    ['sentry', '{{ data.metric_alert.id | default: data.issue.id }}'],
    ['uptime-kuma', '{{ monitor.id }}'],
  ])('gives %s a default incident rule', (source, key) => {
    expect(loadConfig(config({ source, paging: '    ack: {}' })).routes.get('alerts')!.paging!.key.source).toBe(key);
  });

  it('refuses an ack baseUrl with a path, a renotify without max and a broken incident template', () => {
    expect(
      problemsOf(
        config({
          paging: `    ack: { baseUrl: "https://sms.example.co.tz/x" }
    renotify: { every: 15m }
    incident: { key: "{{ groupKey", resolved: "status == 'resolved'" }`,
        }),
      ),
    ).toEqual(
      [
        expect.stringMatching(/^routes\.alerts\.renotify\.max: /),
        'routes.alerts.ack.baseUrl: baseUrl is an origin only, without a path, query or fragment',
      ].sort(),
    );
    expect(
      problemsOf(config({ paging: `    incident: { key: "{{ groupKey", resolved: "status == 'resolved'" }` }))[0],
    ).toMatch(/^routes\.alerts\.incident\.key: /);
  });

  it('warns when the link leaves fewer than 60 characters for the text, not otherwise', () => {
    expect(pagingWarnings(loadConfig(config()).routes)).toEqual([]);
    const long = `https://${'a'.repeat(70)}.example.co.tz`;
    expect(pagingWarnings(loadConfig(config({ paging: `    ack: { baseUrl: "${long}" }` })).routes)).toEqual([
      `routes.alerts.ack.baseUrl: the acknowledge link leaves ${160 - linkLength(long)} characters of a 160-character SMS for the text (fewer than 60); use a shorter origin`,
    ]);
  });

  it("counts the link's characters: space, origin, /a/ and a 22-character token", () => {
    expect(linkLength('https://sms.example.co.tz')).toBe(1 + 25 + 3 + 22);
  });
});
