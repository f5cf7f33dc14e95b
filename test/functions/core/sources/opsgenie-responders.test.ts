import { describe, expect, it } from 'vitest';
import { compileOnCall } from '../../../../functions/core/oncall/compile';
import { opsgenieResponderRecipients, RESPONDERS } from '../../../../functions/core/sources/opsgenie-responders';
import { NO_ONE } from '../../../../functions/core/oncall/schedule';
import { opsgenie } from '../../../../functions/core/sources/opsgenie';
import { webhookOf } from './helpers';
import { fixtureBytes } from './pack-helpers';

const rotation = (people: string[]) => ({
  timezone: 'Africa/Dar_es_Salaam',
  rotation: { people, every: 604_800, start: '2026-11-30T09:00' },
  notifyHandoff: false,
});

const problems: string[] = [];
const directory = compileOnCall(
  {
    asha: { phone: '0712345678' },
    baraka: { phone: '0754000111', email: 'Baraka@Example.com' },
  },
  { ops: rotation(['asha', 'baraka']), db: rotation(['baraka']) },
  problems,
);

describe('opsgenieResponderRecipients', () => {
  it('compiled a directory without problems', () => {
    expect(problems).toEqual([]);
  });

  it("names a user by the person's name or email (any case), a schedule or team by the schedule's name, in order, each once", () => {
    expect(
      opsgenieResponderRecipients(
        [
          { type: 'user', username: 'BARAKA@example.com' },
          { type: 'schedule', name: 'ops' },
          { type: 'user', name: 'asha' },
          { type: 'team', name: 'db' },
          { type: 'user', name: 'baraka' },
          { type: 'team', name: 'ops' },
        ],
        directory,
      ),
    ).toEqual(['person:baraka', 'oncall:ops', 'person:asha', 'oncall:db']);
  });

  it('takes the name when the username names nobody, and trims both', () => {
    expect(
      opsgenieResponderRecipients([{ type: 'user', username: 'carol@example.com', name: ' asha ' }], directory),
    ).toEqual(['person:asha']);
  });

  it('reads Alertmanager\'s captured create: its schedule responder "ops"', async () => {
    const { readFile } = await import('node:fs/promises');
    const body = JSON.parse(await readFile('examples/opsgenie/alertmanager-create.json', 'utf8')) as {
      responders: unknown;
    };
    expect(opsgenieResponderRecipients(body.responders, directory)).toEqual(['oncall:ops']);
  });

  it('ignores what names nobody the config knows: an id alone, an escalation, an unknown name, a person as a schedule', () => {
    expect(
      opsgenieResponderRecipients(
        [
          { type: 'user', id: '4513b7ea-3b91-438f-b7e4-e3e54af9147c' },
          { type: 'escalation', name: 'ops' },
          { type: 'schedule', name: 'night' },
          { type: 'schedule', name: 'asha' },
          { type: 'user', username: 'ops' },
          { name: 'asha' },
        ],
        directory,
      ),
    ).toEqual([]);
  });

  it('ignores junk: not a list, entries that are not objects, names that are not strings, empty or too long', () => {
    for (const junk of [undefined, null, 'asha', 42, { type: 'user', name: 'asha' }])
      expect(opsgenieResponderRecipients(junk, directory)).toEqual([]);
    expect(
      opsgenieResponderRecipients(
        [
          null,
          'asha',
          7,
          ['user', 'asha'],
          { type: 'user', name: ['asha'] },
          { type: 'user', name: { toString: () => 'asha' } },
          { type: 'user', name: '   ' },
          { type: 'user', name: '__proto__' },
          { type: 'schedule', name: 'constructor' },
          { type: 'user', username: `${'a'.repeat(RESPONDERS.maxNameChars)}@example.com`, name: 'x'.repeat(300) },
          { type: 'USER', name: 'asha' },
        ],
        directory,
      ),
    ).toEqual([]);
  });

  it(`reads only the first ${RESPONDERS.maxRead} responders`, () => {
    const filler = Array.from({ length: RESPONDERS.maxRead - 1 }, () => ({ type: 'user', name: 'carol' }));
    expect(
      opsgenieResponderRecipients(
        [...filler, { type: 'user', name: 'asha' }, { type: 'user', name: 'baraka' }],
        directory,
      ),
    ).toEqual(['person:asha']);
  });

  it('names nobody when the config has no people or schedules', () => {
    expect(opsgenieResponderRecipients([{ type: 'user', name: 'asha' }], NO_ONE)).toEqual([]);
  });
});

describe('the opsgenie pack reads who to page and how urgent from the create', () => {
  const example = (name: string): unknown =>
    opsgenie.parse(
      webhookOf({ body: fixtureBytes(`opsgenie/${name}`), headers: { 'Content-Type': 'application/json' } }),
    );

  it("pages the responders the config knows: Alertmanager's schedule, Grafana's user by email, none in a client's minimal create", () => {
    expect(opsgenie.recipients?.(example('alertmanager-create.json'), directory)).toEqual(['oncall:ops']);
    expect(opsgenie.recipients?.(example('grafana-create.json'), directory)).toEqual(['person:baraka']);
    expect(opsgenie.recipients?.(example('client-create.json'), directory)).toEqual([]);
  });

  it('calls P1 and P2 critical, P3 to P5 and no priority (P3 to Opsgenie) not', () => {
    expect(opsgenie.critical?.(example('alertmanager-create.json'))).toBe(true); // P1
    expect(opsgenie.critical?.(example('grafana-create.json'))).toBe(true); // P2
    expect(opsgenie.critical?.(example('client-create.json'))).toBe(false);
    for (const priority of ['P3', 'P4', 'P5']) expect(opsgenie.critical?.({ message: 'm', priority })).toBe(false);
    for (const junk of [null, 'P1', ['P1'], { priority: ['P1'] }, { priority: 'p1' }])
      expect(opsgenie.critical?.(junk)).toBe(false);
  });
});
