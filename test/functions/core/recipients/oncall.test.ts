import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { evaluateWebhook } from '../../../../functions/core/pipeline/evaluate';
import { compileOnCall, type OnCallOverride } from '../../../../functions/core/oncall';
import { compileRecipients, RecipientEntryKind, resolveRecipients } from '../../../../functions/core/recipients';
import { buildScope, createTemplateEngine } from '../../../../functions/core/templates';

const engine = createTemplateEngine();
const problems: string[] = [];
const directory = compileOnCall(
  { asha: { phone: '0712345678' }, baraka: { phone: '0754000111' } },
  {
    ops: {
      timezone: 'Africa/Dar_es_Salaam',
      rotation: { people: ['asha', 'baraka'], every: 604_800, start: '2026-11-30T09:00' },
      notifyHandoff: false,
    },
  },
  problems,
);
const scope = buildScope({ body: {}, headers: {} });
// asha's first week: 30 Nov 09:00 to 7 Dec 09:00 in Dar es Salaam (06:00Z).
const ASHA_WEEK = new Date('2026-12-01T10:00:00Z');
const BARAKA_WEEK = new Date('2026-12-08T10:00:00Z');

const override = (person: string, from: string, until: string): OnCallOverride => ({
  id: '01KQ0000000000000000000000',
  schedule: 'ops',
  person,
  from,
  until,
  reason: 'cover',
  createdAt: from,
});

describe('person: and oncall: recipients', () => {
  it("compiles person: to the person's number and oncall: to an entry resolved per message", () => {
    expect(problems).toEqual([]);
    const compiled = compileRecipients(['person:baraka', 'oncall:ops', ' oncall: ops '], engine, undefined, directory);
    expect(compiled.entries).toEqual([
      { kind: RecipientEntryKind.Literal, display: 'person:baraka', numbers: ['255754000111'] },
      { kind: RecipientEntryKind.OnCall, display: 'oncall:ops', schedule: 'ops' },
      { kind: RecipientEntryKind.OnCall, display: 'oncall:ops', schedule: 'ops' },
    ]);
  });

  it('refuses names the config does not define, and every reference without people or schedules', () => {
    expect(() => compileRecipients(['0712345678', 'oncall:db'], engine, undefined, directory)).toThrow(
      '[1] unknown schedule "db"',
    );
    expect(() => compileRecipients(['person:zawadi'], engine, undefined, directory)).toThrow(
      '[0] unknown person "zawadi"',
    );
    expect(() => compileRecipients(['oncall:ops'], engine)).toThrow('[0] unknown schedule "ops"');
  });

  it('resolves oncall: to whoever is on call at the time given, an override in force first', () => {
    const compiled = compileRecipients(['oncall:ops', '0765000222'], engine, undefined, directory);
    expect(resolveRecipients(compiled, scope, { at: ASHA_WEEK }).numbers).toEqual(['255712345678', '255765000222']);
    expect(resolveRecipients(compiled, scope, { at: BARAKA_WEEK }).numbers).toEqual(['255754000111', '255765000222']);
    const covered = [override('baraka', '2026-12-01T09:00:00.000Z', '2026-12-01T17:00:00.000Z')];
    expect(resolveRecipients(compiled, scope, { at: ASHA_WEEK, overrides: covered }).numbers).toEqual([
      '255754000111',
      '255765000222',
    ]);
    // A person named twice (on call and by name) gets one SMS.
    expect(
      resolveRecipients(compileRecipients(['oncall:ops', 'person:asha'], engine, undefined, directory), scope, {
        at: ASHA_WEEK,
      }).numbers,
    ).toEqual(['255712345678']);
  });

  it("sends a webhook to the person on call when it was received, through the route's config", () => {
    const loaded = loadConfig(`
provider: { baseUrl: https://sms.example.co.tz }
people:
  asha: { phone: "0712345678" }
  baraka: { phone: "0754000111" }
schedules:
  ops: { timezone: Africa/Dar_es_Salaam, rotation: { people: [asha, baraka], every: 1w, start: "2026-11-30T09:00" } }
routes:
  alerts: { source: generic, secret: s, recipients: ["oncall:ops"], template: "disk full" }
`);
    const route = loaded.routes.get('alerts')!;
    const webhook = (receivedAt: Date) => ({
      body: new TextEncoder().encode('{"a":1}'),
      headers: { 'content-type': 'application/json' },
      query: {},
      receivedAt,
    });
    expect(
      evaluateWebhook(route, webhook(ASHA_WEEK), { secret: undefined }).messages.map((message) => message.to),
    ).toEqual([['255712345678']]);
    expect(
      evaluateWebhook(route, webhook(BARAKA_WEEK), { secret: undefined }).messages.map((message) => message.to),
    ).toEqual([['255754000111']]);
    const overrides = [override('baraka', '2026-12-01T09:00:00.000Z', '2026-12-01T17:00:00.000Z')];
    expect(
      evaluateWebhook(route, webhook(ASHA_WEEK), { secret: undefined, overrides }).messages.map(
        (message) => message.to,
      ),
    ).toEqual([['255754000111']]);
  });
});
