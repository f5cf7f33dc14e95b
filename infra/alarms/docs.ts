import { AlarmSeverity } from '../../functions/core/config/alarms-schema';
import { ALARM_SECTIONS } from './sections';
import type { AlarmRow, AlarmSection, AlarmThreshold, RunbookValues } from './table';

/** The docs' placeholders: what an environment fills in is named, not given. */
export const DOCS_VALUES: RunbookValues = {
  env: '<env>',
  route: '<route>',
  provider: '<provider>',
  fn: '<function>',
  fnId: '<Function>',
  routesSecret: 'sms-relay/<env>',
  providerSecret: 'sms-relay/<env>/provider',
  balanceThreshold: '`balance.threshold`',
  latencyP99: '`alarms.deliveryLatencyP99`',
  balanceWindow: 'two of its intervals',
  balanceFailures: 'twice (a watch at most daily: on its one run)',
};

/** The lines around the generated tables in docs/deploying.md. */
export const ALARM_TABLES_START =
  '<!-- alarm tables: written by `npm run docs:alarms` from infra/alarms/, edit them there -->';
export const ALARM_TABLES_END = '<!-- end of the alarm tables -->';

/** `≥ 1`, `> 60 000 ms`, `< 1 in 3 of 3 periods`: when an alarm fires, in the docs' words. */
export function firesWhen(threshold: AlarmThreshold): string {
  if (threshold.doc === undefined && typeof threshold.value !== 'number')
    throw new Error('a threshold read from the environment needs its words in `doc`');
  const value =
    threshold.doc ??
    `${String(threshold.value).replace(/\B(?=(\d{3})+$)/g, ' ')}${threshold.unit === undefined ? '' : ` ${threshold.unit}`}`;
  const periods =
    threshold.periods === undefined ? '' : ` in ${threshold.periods.breaching} of ${threshold.periods.of} periods`;
  return `${threshold.comparison} ${value}${periods}`;
}

function row(alarm: AlarmRow): string {
  const name = `\`${alarm.name}\`${alarm.nameNote === undefined ? '' : ` (${alarm.nameNote})`}`;
  const severity = alarm.severity === AlarmSeverity.Page ? '**page**' : 'ticket';
  const cells = [
    name,
    severity,
    alarm.metricDoc,
    firesWhen(alarm.threshold),
    alarm.missingData,
    alarm.means(DOCS_VALUES),
    alarm.firstResponse(DOCS_VALUES),
  ];
  return `| ${cells.join(' | ')} |`;
}

function table(section: AlarmSection): string {
  const title = section.about === undefined ? `**${section.heading}:**` : `**${section.heading}** (${section.about}):`;
  return [
    title,
    '',
    '| alarm | severity | metric | fires when | missing data | means | first response |',
    '|---|---|---|---|---|---|---|',
    ...section.rows.map(row),
  ].join('\n');
}

/** docs/deploying.md's alarm tables, between their two marker lines. */
export function renderAlarmTables(sections: readonly AlarmSection[] = ALARM_SECTIONS): string {
  return [ALARM_TABLES_START, '', sections.map(table).join('\n\n'), '', ALARM_TABLES_END].join('\n');
}

/**
 * The document with its alarm tables replaced by `tables`.
 * @throws when the document lacks either marker line
 */
export function withAlarmTables(document: string, tables: string = renderAlarmTables()): string {
  const start = document.indexOf(ALARM_TABLES_START);
  const end = document.indexOf(ALARM_TABLES_END);
  if (start < 0 || end < start) throw new Error(`the alarm tables' marker lines are missing: ${ALARM_TABLES_START}`);
  return document.slice(0, start) + tables + document.slice(end + ALARM_TABLES_END.length);
}
