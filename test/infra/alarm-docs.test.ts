import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { firesWhen, renderAlarmTables, withAlarmTables } from '../../infra/alarms/docs';
import { ALARM_SECTIONS } from '../../infra/alarms/sections';

/** docs/deploying.md's alarm tables are made from the same rows as the template's alarms. */
describe("docs/deploying.md's alarm tables", () => {
  it('are the ones the alarm table makes (npm run docs:alarms rewrites them)', () => {
    const document = readFileSync('docs/deploying.md', 'utf8');
    expect(
      withAlarmTables(document) === document,
      "docs/deploying.md's alarm tables differ from infra/alarms/: run `npm run docs:alarms`",
    ).toBe(true);
  });

  it('list every row once, each with the words of its runbook', () => {
    const tables = renderAlarmTables();
    for (const row of ALARM_SECTIONS.flatMap((section) => section.rows)) {
      expect(tables.split(`\n| \`${row.name}\``).length - 1, row.name).toBe(1);
    }
    expect(tables).toContain('escalations, renotify and handoff SMS stop');
    expect(tables).not.toMatch(/undefined|\[object/);
  });

  it('say when each alarm fires: comparison, threshold with its unit, and periods', () => {
    expect(firesWhen({ comparison: '≥', value: 1 })).toBe('≥ 1');
    expect(firesWhen({ comparison: '>', value: 60_000, unit: 'ms' })).toBe('> 60 000 ms');
    expect(firesWhen({ comparison: '<', value: 1, periods: { of: 3, breaching: 3 } })).toBe('< 1 in 3 of 3 periods');
    expect(firesWhen({ comparison: '<', value: () => 5, doc: '`balance.threshold`' })).toBe('< `balance.threshold`');
    expect(() => firesWhen({ comparison: '<', value: () => 5 })).toThrow(/needs its words/);
  });

  it('are refused without their marker lines, so a rewrite never loses the rest of the page', () => {
    expect(() => withAlarmTables('# Deploying\n')).toThrow(/marker lines are missing/);
  });
});
