import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { stageConfig } from '../../../../functions/core/config/staged';
import { compiledConfig } from '../../../../functions/handlers/wiring/compiled';
import { configView } from '../../../../functions/core/config/staged';
import { problemsOf } from './support';

/** The contract, with `schedules` and `routes` replaceable. */
const config = ({ people = PEOPLE, schedules = SCHEDULES, recipients = '["oncall:ops"]', extra = '' } = {}): string => `
provider:
  baseUrl: https://sms.example.co.tz
${people}
${schedules}
${extra}
routes:
  alerts:
    source: alertmanager
    secret: alerts
    recipients: ${recipients}
`;

const PEOPLE = `people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }`;

const SCHEDULES = `schedules:
  ops:
    timezone: Africa/Dar_es_Salaam
    rotation:
      people: [asha, baraka]
      every: 1w
      start: "2026-11-30T09:00"
    notifyHandoff: false`;

const schedules = (rotation: string, zone = 'Africa/Dar_es_Salaam'): string => `schedules:
  ops:
    timezone: ${zone}
    rotation: ${rotation}`;

describe('people and schedules in the config', () => {
  it("loads the issue's contract: numbers normalised, every in seconds, notifyHandoff false by default", () => {
    const loaded = loadConfig(
      config({ schedules: schedules('{ people: [asha, baraka], every: 1w, start: "2026-11-30T09:00" }') }),
    );
    expect(loaded.settings.schedules?.['ops']).toEqual({
      timezone: 'Africa/Dar_es_Salaam',
      rotation: { people: ['asha', 'baraka'], every: 604_800, start: '2026-11-30T09:00' },
      notifyHandoff: false,
    });
    const ops = loaded.onCall.schedules.get('ops')!;
    expect(ops.rotation).toEqual({
      people: [
        { name: 'asha', number: '255712345678' },
        { name: 'baraka', number: '255754000111' },
      ],
      everyMs: 604_800_000,
      startWall: Date.UTC(2026, 10, 30, 9, 0),
    });
  });

  it('refuses an unknown person in a rotation, naming the key', () => {
    expect(
      problemsOf(config({ schedules: schedules('{ people: [asha, carol], every: 1d, start: "2026-11-30T09:00" }') })),
    ).toEqual(['schedules.ops.rotation.people[1]: unknown person "carol" (people: asha, baraka)']);
  });

  it('refuses a rotation without people and an every under a minute', () => {
    expect(
      problemsOf(config({ schedules: schedules('{ people: [], every: 30s, start: "2026-11-30T09:00" }') })),
    ).toEqual([
      'schedules.ops.rotation.people: a rotation needs at least one person of people',
      'schedules.ops.rotation.every: every is at least 1m, got "30s"',
    ]);
  });

  it('refuses a start that is not a local date and time, an unknown zone and a bad phone', () => {
    expect(
      problemsOf(
        config({ schedules: schedules('{ people: [asha], every: 1d, start: "2026-02-30T09:00" }', 'Africa/Atlantis') }),
      ),
    ).toEqual([
      'schedules.ops.timezone: unknown time zone; use an IANA name like Africa/Dar_es_Salaam',
      'schedules.ops.rotation.start: start is a local date and time in the zone, e.g. "2026-11-30T09:00"',
    ]);
    expect(
      problemsOf(config({ people: 'people:\n  asha: { phone: "0222123456" }\n  baraka: { phone: "0754000111" }' })),
    ).toEqual([expect.stringMatching(/^people\.asha\.phone: not a mobile number/)]);
  });

  it('takes notifyHandoff: true (the sweeper sends the handoff SMS) and refuses what is not a boolean', () => {
    const loaded = loadConfig(
      config({
        schedules: `${schedules('{ people: [asha], every: 1d, start: "2026-11-30T09:00" }')}\n    notifyHandoff: true`,
      }),
      'relay.yaml',
    );
    expect(loaded.onCall.schedules.get('ops')?.notifyHandoff).toBe(true);
    expect(
      problemsOf(
        config({
          schedules: `${schedules('{ people: [asha], every: 1d, start: "2026-11-30T09:00" }')}\n    notifyHandoff: sometimes`,
        }),
      ),
    ).toEqual([expect.stringMatching(/^schedules\.ops\.notifyHandoff: /)]);
  });

  it("takes a person's email (kept lower-cased, through staging) and refuses one that is not an address or is taken", () => {
    const people =
      'people:\n  asha: { phone: "0712345678", email: Asha@Example.com }\n  baraka: { phone: "0754000111" }';
    const loaded = loadConfig(config({ people }));
    expect(loaded.onCall.people.get('asha')).toEqual({
      name: 'asha',
      number: '255712345678',
      email: 'asha@example.com',
    });
    expect(loaded.onCall.people.get('baraka')).toEqual({ name: 'baraka', number: '255754000111' });
    const again = compiledConfig(configView(JSON.parse(JSON.stringify(stageConfig(loaded)))), 'relay-config.json');
    expect(again.onCall.people.get('asha')?.email).toBe('asha@example.com');
    expect(
      problemsOf(
        config({ people: 'people:\n  asha: { phone: "0712345678", email: asha }\n  baraka: { phone: "0754000111" }' }),
      ),
    ).toEqual(['people.asha.email: email is an e-mail address, e.g. "baraka@example.com"']);
    expect(
      problemsOf(
        config({
          people:
            'people:\n  asha: { phone: "0712345678", email: ops@example.com }\n  baraka: { phone: "0754000111", email: OPS@example.com }',
        }),
      ),
    ).toEqual(['people.baraka.email: already the email of people.asha']);
  });

  it('refuses an unknown schedule or person as a recipient, naming the route', () => {
    expect(problemsOf(config({ recipients: '["oncall:db", "person:zawadi"]' }))).toEqual([
      'routes.alerts.recipients: [0] unknown schedule "db"',
    ]);
    expect(problemsOf(config({ recipients: '["person:zawadi"]' }))).toEqual([
      'routes.alerts.recipients: [0] unknown person "zawadi"',
    ]);
  });

  it('checks names even when another part of the config is refused', () => {
    const problems = problemsOf(
      config({
        recipients: '["oncall:db"]',
        schedules: schedules('{ people: [carol], every: 1d, start: "2026-11-30T09:00" }'),
        extra: 'retentionDays: 0',
      }),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^retentionDays: /),
      'schedules.ops.rotation.people[0]: unknown person "carol" (people: asha, baraka)',
      'routes.alerts.recipients: [0] unknown schedule "db"',
    ]);
  });

  it('takes person: in balance.notify but not oncall:, which the balance watch cannot resolve', () => {
    const loaded = loadConfig(
      config({ extra: 'balance: { threshold: 100, notify: ["person:baraka", "0712345678"] }' }),
    );
    expect(loaded.balanceNotify).toEqual(['255754000111', '255712345678']);
    expect(problemsOf(config({ extra: 'balance: { threshold: 100, notify: ["oncall:ops"] }' }))).toEqual([
      'balance.notify[0]: oncall: is not taken here; name a person (person:<name>) or a number',
    ]);
  });

  it('refuses oncall: on a digest route: the sweeper sends the digest and does not read who is on call', () => {
    expect(problemsOf(config({ recipients: '["oncall:ops"]\n    digest: { window: 10m }' }))).toEqual([
      "routes.alerts.recipients: digest sends one SMS to the route's numbers and person: recipients; oncall: is not taken on such a route yet",
    ]);
  });

  it('stages person: as its number and oncall: as resolved per message, and compiles the staged form again', () => {
    const loaded = loadConfig(config({ recipients: '["person:asha", "oncall:ops"]' }));
    const staged = stageConfig(loaded);
    expect(staged.recipients['alerts']).toEqual([['255712345678'], null]);
    const again = compiledConfig(configView(JSON.parse(JSON.stringify(staged))), 'relay-config.json');
    expect(again.routes.get('alerts')!.recipients.entries.map((entry) => entry.display)).toEqual([
      'person:asha',
      'oncall:ops',
    ]);
    expect(again.onCall.schedules.get('ops')?.rotation.people.map((person) => person.name)).toEqual(['asha', 'baraka']);
  });
});
