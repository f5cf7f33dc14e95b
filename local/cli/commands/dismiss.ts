import { Command, Option } from 'commander';
import { DISMISS } from '../../../functions/core/defaults';
import { AccessKind, type RecordAccess } from '../../shared/record-access';
import { localOperator } from '../../shared/operator';
import type { DismissResult, RecordView } from '../../records/contract';
import { DISMISS_STATES, type DismissState, parseSince, parseState } from '../../records/states';
import { CliError } from '../../shared/errors';
import { fail } from '../output';
import { openAccess, type StoreOptions, withStoreOptions } from '../options';

interface DismissOptions extends StoreOptions {
  readonly reason: string;
  readonly by?: string;
  readonly state?: string;
  readonly route?: string;
  readonly since?: string;
  readonly dryRun?: boolean;
}

/** The alarm that counts each dismissible state (docs/deploying.md, "What is stuck now"). */
export const ALARM_OF_STATE = {
  UNKNOWN: 'MessagesUnknown',
  FAILED: 'MessagesFailed',
  HELD: 'MessagesHeld',
  PARKED: 'MessagesParked',
} as const satisfies Record<DismissState, string>;

/** When the counts drop what was dismissed, by where it was dismissed. */
const NEXT_STEP = {
  [AccessKind.Runtime]: "the running relay's stuck-now counts drop them at its next count (within a minute)",
  [AccessKind.Store]: 'the stuck-now counts drop them when the relay next counts (npm start)',
  [AccessKind.Aws]:
    "the sweeper's next count (every minute) drops them; a state alarm recovers once a 5-minute period counts none",
} as const satisfies Record<AccessKind, string>;

/**
 * `sms-relay dismiss`: ends UNKNOWN, FAILED, HELD or PARKED records without sending them, in the
 * final state DISMISSED with who, when and why, so the alarm that counts them can recover.
 *
 * @example
 * // npx sms-relay dismiss 01JF3… --reason "customer number disconnected"
 * // npx sms-relay dismiss --state FAILED --route orders --since 2h --reason "bad import" --dry-run
 * program.addCommand(dismissCommand());
 */
export function dismissCommand(): Command {
  return withStoreOptions(
    new Command('dismiss')
      .description(
        'End UNKNOWN, FAILED, HELD or PARKED records without sending them (DISMISSED, with who, when and why), so the alarm counting them recovers',
      )
      .argument('[ids...]', 'the records to dismiss (as logs lists them); or select them with --state')
      .addOption(
        new Option('--reason <text>', `why they are not sent (required, at most ${DISMISS.maxReasonChars} characters)`),
      )
      .addOption(new Option('--by <name>', 'who decided it (default: your OS user)'))
      .addOption(new Option('--state <state>', `every record in this state: ${DISMISS_STATES.join(', ')}`))
      .addOption(new Option('--route <id>', 'with --state: only this route'))
      .addOption(
        new Option(
          '--since <when>',
          'with --state: only records that reached it since a duration ago (30m, 2h, 3d) or an ISO time',
        ),
      )
      .addOption(new Option('--dry-run', 'with --state: list what would be dismissed and change nothing')),
  )
    .addHelpText(
      'after',
      `
Each record is dismissed only while it is still in a state it can be dismissed from (with --state,
that state): one sent, redriven or dismissed by someone else meanwhile is left as it is. SENT,
PENDING and SENDING records (and other final states) are refused. A dismissed record is never sent,
stays listed (logs --state DISMISSED) until it expires, and no longer counts in UnknownNow,
FailedNow, HeldNow or ParkedNow, so MessagesUnknown, MessagesFailed… recover.

Examples:
  $ npx sms-relay dismiss 01JF3W8K2Q4M5N6P7R8S9T0V1W --reason "customer number disconnected"
  $ npx sms-relay dismiss --state FAILED --route orders --since 2h --reason "test orders" --dry-run
  $ npx sms-relay dismiss --env prod --state UNKNOWN --reason "arrived: checked the service's dashboard"`,
    )
    .action(async (ids: string[], options: DismissOptions) => {
      try {
        await runDismiss(ids, options);
      } catch (error) {
        fail(error);
      }
    });
}

async function runDismiss(ids: readonly string[], options: DismissOptions): Promise<void> {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  const reason = (options.reason ?? '').trim();
  if (reason === '') throw new CliError('--reason is required: say why these messages are not sent');
  if (reason.length > DISMISS.maxReasonChars)
    throw new CliError(`--reason is at most ${DISMISS.maxReasonChars} characters`);
  const by = (options.by ?? localOperator()).trim();
  if (by === '' || by.length > DISMISS.maxByChars) throw new CliError(`--by is 1 to ${DISMISS.maxByChars} characters`);
  if (ids.length === 0 && options.state === undefined)
    throw new CliError('name the records to dismiss (their ids), or select them with --state');
  if (ids.length > 0 && (options.route !== undefined || options.since !== undefined || options.dryRun === true))
    throw new CliError('--route, --since and --dry-run go with --state, not with ids');
  const state = options.state === undefined ? undefined : parseState(options.state, DISMISS_STATES);
  const since = options.since === undefined ? undefined : parseSince(options.since);
  const access = await openAccess(options);
  try {
    if (state === undefined || ids.length > 0) {
      const outcome = await access.dismiss(ids, { by, reason, ...(state === undefined ? {} : { from: state }) });
      report(outcome, access);
      process.stdout.write(
        `Dismissed ${outcome.dismissed.length} of ${ids.length} record${ids.length === 1 ? '' : 's'} (by ${by})` +
          `${outcome.dismissed.length > 0 ? `; ${NEXT_STEP[access.kind]}` : ''}.\n`,
      );
      // Each id was named on purpose: one left as it is fails the command.
      if (outcome.refused.length > 0) process.exitCode = 1;
      return;
    }
    await dismissState(access, { state, by, reason, since, options });
  } finally {
    await access.close();
  }
}

async function dismissState(
  access: RecordAccess,
  {
    state,
    by,
    reason,
    since,
    options,
  }: {
    readonly state: DismissState;
    readonly by: string;
    readonly reason: string;
    readonly since: Date | undefined;
    readonly options: DismissOptions;
  },
): Promise<void> {
  const records = await access.list({
    state,
    ...(options.route === undefined ? {} : { route: options.route }),
    ...(since === undefined ? {} : { since }),
  });
  const scope = `${state}${options.route === undefined ? '' : ` on route ${options.route}`}${options.since === undefined ? '' : ` since ${options.since}`}`;
  if (records.length === 0) {
    process.stdout.write(`Nothing to dismiss: no ${scope} records (${access.description}).\n`);
    return;
  }
  const ordered = [...records].reverse();
  if (options.dryRun === true) {
    for (const record of ordered) process.stdout.write(`would dismiss ${describe(record)}\n`);
    process.stdout.write(
      `${ordered.length} ${scope} record${ordered.length === 1 ? '' : 's'} would be dismissed (dry run): ${ALARM_OF_STATE[state]} would no longer count ${ordered.length === 1 ? 'it' : 'them'}.\n`,
    );
    return;
  }
  const outcome = await access.dismiss(
    ordered.map((record) => record.id),
    { by, reason, from: state },
  );
  const byId = new Map(ordered.map((record) => [record.id, record]));
  for (const id of outcome.dismissed) process.stdout.write(`dismissed ${describe(byId.get(id)!)}\n`);
  const skipped = outcome.refused.length;
  process.stdout.write(
    `Dismissed ${outcome.dismissed.length} of ${ordered.length} ${scope} record${ordered.length === 1 ? '' : 's'} (by ${by})` +
      `${skipped > 0 ? ` (${skipped} had left ${state} meanwhile)` : ''}; ${NEXT_STEP[access.kind]}.\n`,
  );
}

/** One line per id: dismissed on stdout, refused on stderr with its state and why. */
function report({ dismissed, refused }: DismissResult, access: RecordAccess): void {
  for (const id of dismissed) process.stdout.write(`dismissed ${id}\n`);
  for (const { id, why } of refused) process.stderr.write(`not dismissed: ${id} ${why} (${access.description})\n`);
}

function describe(record: RecordView): string {
  return `${record.id}  ${record.route}  to ${record.to.join(', ') || '-'}${record.reason === null ? '' : `  (${record.reason})`}`;
}
