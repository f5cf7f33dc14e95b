import { Command, InvalidArgumentError, Option } from 'commander';
import type { RecordQuery } from '../../records';
import type { RecordView } from '../../records/contract';
import { parseSince, parseState, STATES } from '../../records/states';
import { fail } from '../output';
import { openAccess, type StoreOptions, tzOption, withStoreOptions } from '../options';
import { formatTime, type Viewer } from '../../../functions/core/time-format';
import { RECENT_LIMIT } from '../../../functions/core/defaults';

/** Records shown when `--limit` is not given. */
export const DEFAULT_LOGS_LIMIT = RECENT_LIMIT;

interface LogsOptions extends StoreOptions {
  readonly route?: string;
  readonly state?: string;
  readonly since?: string;
  readonly limit: number;
  readonly json?: boolean;
  readonly tz?: string;
}

/**
 * `sms-relay logs`: the newest message records, locally or from a deployed environment.
 *
 * @example
 * // npx sms-relay logs --state PARKED --since 1d
 * // npx sms-relay logs --route orders --json | jq '.[].state'
 * program.addCommand(logsCommand());
 */
export function logsCommand(): Command {
  const command = new Command('logs')
    .description('List message records (newest last): route, state, masked numbers, segments, credits, reason')
    .addOption(new Option('--route <id>', 'only this route'))
    .addOption(new Option('--state <state>', `only this state: ${STATES.join(', ')}`))
    .addOption(new Option('--since <when>', 'only records since a duration ago (30m, 2h, 3d) or an ISO time'))
    .addOption(tzOption())
    .addOption(
      new Option('--limit <n>', 'at most this many, the newest').default(DEFAULT_LOGS_LIMIT).argParser(parseLimit),
    )
    .addOption(
      new Option(
        '--json',
        'print a JSON array of {id, route, state, createdAt, updatedAt, to, segments, attempts, reason, deducted, remainingBalance, provider, failoverFrom, failoverReason, dismissal}',
      ),
    );
  return withStoreOptions(command, {
    envHelp: 'read the deployed stack SmsRelay-<name> instead (AWS credentials from the usual chain)',
  })
    .addHelpText(
      'after',
      `
Locally, records come through the running relay when one holds RELAY_DATA_DIR (its /_relay/records
endpoint), else from the store on disk. With --route, --since counts from a record's creation;
otherwise from its last change.

Examples:
  $ npx sms-relay logs
  $ npx sms-relay logs --state FAILED --since 2h
  $ npx sms-relay logs --env prod --route alerts --limit 20`,
    )
    .action(async (options: LogsOptions) => {
      try {
        await runLogs(options);
      } catch (error) {
        fail(error);
      }
    });
}

async function runLogs(options: LogsOptions): Promise<void> {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  const query: RecordQuery = {
    ...(options.route === undefined ? {} : { route: options.route }),
    ...(options.state === undefined ? {} : { state: parseState(options.state, STATES) }),
    ...(options.since === undefined ? {} : { since: parseSince(options.since) }),
    limit: options.limit,
  };
  const access = await openAccess(options);
  let records: RecordView[];
  try {
    records = await access.list(query);
  } finally {
    await access.close();
  }
  // Printed like a log, by the time the table shows (creation), oldest first: the store lists by
  // last change, so a redriven record would otherwise come out of order.
  const shown = newestLast(records);
  if (options.json === true) {
    process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
    return;
  }
  if (shown.length === 0) {
    process.stdout.write(`No records (${access.description}).\n`);
    return;
  }
  process.stdout.write(
    `${renderTable(shown, { ...(options.tz === undefined ? {} : { zone: options.tz }), now: new Date() })}\n${shown.length} record${shown.length === 1 ? '' : 's'} from ${access.description}\n`,
  );
}

/** Records by creation, oldest first (ties by id, which grows with time). */
export function newestLast(records: readonly RecordView[]): RecordView[] {
  return [...records].sort(
    (a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

const COLUMNS = ['TIME', 'ID', 'ROUTE', 'STATE', 'TO', 'SEG', 'CREDITS', 'REASON'] as const;

/**
 * A fixed-width table of records; the reason column is last and not padded.
 *
 * @example
 * ```ts
 * renderTable(records); // 'TIME                 ID                          ROUTE   STATE …'
 * ```
 */
export function renderTable(records: readonly RecordView[], viewer: Viewer = {}): string {
  const localTime = (iso: string): string => formatTime(iso, { ...viewer, seconds: true });
  const rows = records.map((record) => [
    localTime(record.createdAt),
    record.id,
    record.route,
    record.state,
    record.to.length > 2 ? `${record.to.slice(0, 2).join(',')} +${record.to.length - 2}` : record.to.join(',') || '-',
    String(record.segments),
    record.deducted === null ? '-' : String(record.deducted),
    reasonCell(record, localTime),
  ]);
  const widths = COLUMNS.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(COLUMNS), ...rows.map(line)].join('\n');
}

/** The record's reason; on a DISMISSED one who dismissed it, when and why first, then what it was. */
function reasonCell({ reason, dismissal }: RecordView, localTime: (iso: string) => string): string {
  if (dismissal === null) return reason ?? '';
  return `dismissed by ${dismissal.by} ${localTime(dismissal.at)}: ${dismissal.reason} (was ${dismissal.from}${reason === null ? '' : `: ${reason}`})`;
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > 10_000)
    throw new InvalidArgumentError('Expected a whole number from 1 to 10000.');
  return limit;
}
