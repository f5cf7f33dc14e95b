import cliProgress from 'cli-progress';
import { Command, Option } from 'commander';
import { AccessKind, type RecordAccess } from '../../shared/record-access';
import type { RecordView } from '../../records/contract';
import { MAY_HAVE_ARRIVED, needsAcceptDuplicates, parseSince, parseState, REDRIVE_STATES } from '../../records/states';
import { fail } from '../output';
import { invalidSetting } from '../../shared/errors';
import { openAccess, type StoreOptions, withStoreOptions } from '../options';
import { defaultRedriveRate, pacer, parseRate, REDRIVE_RATE } from './redrive-rate';

/** Above this many records a terminal gets a progress bar instead of a line per record. */
export const PROGRESS_BAR_THRESHOLD = 20;
/** Records re-queued per request: small enough for the bar to move, large enough to be quick. */
const CHUNK = 10;

interface RedriveOptions extends StoreOptions {
  readonly state: string;
  readonly since?: string;
  readonly route?: string;
  readonly dryRun?: boolean;
  readonly acceptDuplicates?: boolean;
  readonly rate?: number;
}

/**
 * Why `redrive` leaves the digest's states alone: a DEFERRED record is not stuck (sending it on its
 * own would break the promise of one SMS per window), a DIGESTED one went out in its digest.
 */
const NOT_REDRIVEN: Readonly<Record<string, string>> = {
  DEFERRED:
    "DEFERRED records are not stuck: each goes out in its route's digest SMS when its window ends (logs --state DEFERRED shows the reason with the time); redrive the digest's own record if that one failed",
  DIGESTED:
    'DIGESTED records went out inside a digest SMS (its id is in the reason); redrive the digest record itself if it was not sent',
};

/** What happens next to re-queued records, by where they were re-queued. */
const NEXT_STEP = {
  [AccessKind.Runtime]: 'the running relay sends them within a few seconds',
  [AccessKind.Store]: 'they are sent when the relay next starts (npm start)',
  [AccessKind.Aws]: "the stack's sender sends them from the table's stream as they are re-queued",
} as const satisfies Record<AccessKind, string>;

/**
 * `sms-relay redrive`: sends parked (or failed, or held) messages back to PENDING, typically after
 * a top-up; the relay then sends them at once (locally the runtime, on AWS the stream-fed sender).
 *
 * @example
 * // npx sms-relay redrive                  (every PARKED record)
 * // npx sms-relay redrive --state FAILED --since 2h --route orders
 * program.addCommand(redriveCommand());
 */
export function redriveCommand(): Command {
  const command = new Command('redrive')
    .description(
      'Re-queue PARKED (default), FAILED, HELD or (with --accept-duplicates) UNKNOWN messages, e.g. after topping up the balance; the relay then sends them at once',
    )
    .addOption(new Option('--state <state>', `records in this state: ${REDRIVE_STATES.join(', ')}`).default('PARKED'))
    .addOption(
      new Option(
        '--since <when>',
        'only records that reached the state since a duration ago (30m, 2h, 3d) or an ISO time',
      ),
    )
    .addOption(new Option('--route <id>', 'only this route'))
    .addOption(new Option('--dry-run', 'list what would be re-queued and change nothing'))
    .addOption(
      new Option('--accept-duplicates', 'with --state UNKNOWN: send them again although each may already have arrived'),
    )
    .addOption(
      new Option(
        '--rate <n>',
        `re-queue at most n records a second (default: half the provider.maxPerSecond of the relay's config, else ${REDRIVE_RATE.fallback}), leaving the SMS service room for alerts`,
      ).argParser(parseRate),
    );
  return withStoreOptions(command, { envHelp: 'the deployed stack SmsRelay-<name> instead of the local store' })
    .addHelpText(
      'after',
      `
Each record moves only if it is still in that state, so two redrives never send one message twice.
UNKNOWN records may already have arrived (the service failed after the request left): they are
re-queued only with --accept-duplicates, after checking the service's dashboard if you can.
More than ${PROGRESS_BAR_THRESHOLD} records on a terminal show a progress bar. Records are re-queued at
--rate a second at most, so a large redrive reaches the sender as a stream, not all at once; each
goes out in its own lane, so alerts never wait behind redriven orders.

Examples:
  $ npx sms-relay redrive
  $ npx sms-relay redrive --state FAILED --since 1d --dry-run
  $ npx sms-relay redrive --state UNKNOWN --route oncall --accept-duplicates
  $ npx sms-relay redrive --env prod --rate 5`,
    )
    .action(async (options: RedriveOptions) => {
      try {
        await runRedrive(options);
      } catch (error) {
        fail(error);
      }
    });
}

async function runRedrive(options: RedriveOptions): Promise<void> {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  const waiting = NOT_REDRIVEN[options.state.trim().toUpperCase()];
  if (waiting !== undefined) throw invalidSetting('--state', waiting);
  const from = parseState(options.state, REDRIVE_STATES);
  const acceptDuplicates = options.acceptDuplicates === true;
  // A dry run changes nothing, so it may show what a redrive of UNKNOWN records would resend.
  if (needsAcceptDuplicates(from) && !acceptDuplicates && options.dryRun !== true) {
    throw invalidSetting(
      '--state UNKNOWN',
      `refused without --accept-duplicates: ${MAY_HAVE_ARRIVED}. Check the SMS service's dashboard for them (--dry-run lists them), then run again with --accept-duplicates to send them anyway`,
    );
  }
  const since = options.since === undefined ? undefined : parseSince(options.since);
  const access = await openAccess(options);
  try {
    const records = await access.list({
      state: from,
      ...(options.route === undefined ? {} : { route: options.route }),
      ...(since === undefined ? {} : { since }),
    });
    const scope = `${from}${options.route === undefined ? '' : ` on route ${options.route}`}${options.since === undefined ? '' : ` since ${options.since}`}`;
    if (records.length === 0) {
      process.stdout.write(`Nothing to re-queue: no ${scope} records (${access.description}).\n`);
      return;
    }
    // Oldest first, so messages go out in the order they were meant to.
    const ordered = [...records].reverse();
    if (options.dryRun === true) {
      for (const record of ordered) process.stdout.write(`would re-queue ${describe(record)}\n`);
      const consent =
        needsAcceptDuplicates(from) && !acceptDuplicates
          ? '; each may already have arrived, so redriving them needs --accept-duplicates'
          : '';
      process.stdout.write(
        `${ordered.length} ${scope} record${ordered.length === 1 ? '' : 's'} would be re-queued (dry run)${consent}.\n`,
      );
      return;
    }
    const rate = options.rate ?? (await defaultRedriveRate(options));
    const requeued = await requeueAll(access, ordered, from, { acceptDuplicates, rate });
    const skipped = ordered.length - requeued;
    process.stdout.write(
      `Re-queued ${requeued} of ${ordered.length} ${scope} record${ordered.length === 1 ? '' : 's'}` +
        `${skipped > 0 ? ` (${skipped} had left ${from} meanwhile)` : ''}; ${NEXT_STEP[access.kind]}.\n`,
    );
  } finally {
    await access.close();
  }
}

async function requeueAll(
  access: RecordAccess,
  records: readonly RecordView[],
  from: (typeof REDRIVE_STATES)[number],
  { acceptDuplicates, rate }: { readonly acceptDuplicates: boolean; readonly rate: number },
): Promise<number> {
  const useBar = records.length > PROGRESS_BAR_THRESHOLD && process.stderr.isTTY === true;
  const bar = useBar
    ? new cliProgress.SingleBar(
        { format: 'Re-queuing [{bar}] {value}/{total} {percentage}%', stream: process.stderr, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(records.length, 0);
  const byId = new Map(records.map((record) => [record.id, record]));
  let done = 0;
  let requeued = 0;
  // A chunk never holds more than a second's worth at a low rate.
  const chunkSize = Math.max(1, Math.min(CHUNK, Math.floor(rate)));
  const paced = pacer(rate);
  try {
    for (let start = 0; start < records.length; start += chunkSize) {
      const chunk = records.slice(start, start + chunkSize);
      await paced(chunk.length);
      const outcome = await access.requeue(
        chunk.map((record) => record.id),
        from,
        { acceptDuplicates },
      );
      done += chunk.length;
      requeued += outcome.requeued.length;
      if (bar !== undefined) bar.update(done);
      else if (records.length > PROGRESS_BAR_THRESHOLD)
        process.stdout.write(`re-queued ${requeued}, ${done}/${records.length} done\n`);
      else for (const id of outcome.requeued) process.stdout.write(`re-queued ${describe(byId.get(id)!)}\n`);
    }
  } finally {
    bar?.stop();
  }
  return requeued;
}

function describe(record: RecordView): string {
  return `${record.id}  ${record.route}  to ${record.to.join(', ') || '-'}${record.reason === null ? '' : `  (${record.reason})`}`;
}
