import { Command, Option } from 'commander';
import { parseDurationSeconds } from '../../../functions/core/config/duration';
import { ONCALL } from '../../../functions/core/defaults';
import { clockTime } from '../../../functions/core/local-time';
import { onCallAt, type OnCallDirectory, type OnCallNow } from '../../../functions/core/oncall';
import type { OnCallNowView } from '../../records/relay-api';
import type { RecordAccess } from '../../shared/record-access';
import { CliError } from '../../shared/errors';
import { fail } from '../output';
import { loadRunningConfig, openAccess, runningRelayOf, type StoreOptions, withStoreOptions } from '../options';

interface OverrideOptions extends StoreOptions {
  readonly person: string;
  readonly for: string;
  readonly reason?: string;
}

/** One line of `sms-relay oncall --json`: a public contract, exactly these keys. */
export interface OnCallLine {
  readonly schedule: string;
  readonly person: string;
  /** ISO-8601 UTC; `null` when nobody else ever takes over (a rotation of one person). */
  readonly until: string | null;
}

/**
 * `sms-relay oncall [--json]`: who each schedule puts on call now, and until when (overrides
 * included); `sms-relay oncall override <schedule> --person <name> --for 8h [--reason …]` puts a
 * person on call over the rotation.
 *
 * @example
 * // npx sms-relay oncall --json
 * program.addCommand(oncallCommand());
 */
export function oncallCommand(): Command {
  const command = withStoreOptions(
    new Command('oncall')
      .description(
        'Show who is on call now for each schedule, and until when; "oncall override" puts someone on call for a while',
      )
      .addOption(new Option('--json', 'print a JSON array of {schedule, person, until}')),
    { configNames: 'schedules' },
  )
    .addHelpText(
      'after',
      `
Who is on call comes from the config's schedules (rotation counted on the schedule's wall clock)
and the overrides kept in the table: the newest override in force wins.

Examples:
  $ npx sms-relay oncall
  $ npx sms-relay oncall --env prod --json
  $ npx sms-relay oncall override ops --person baraka --for 8h --reason "asha travels"`,
    )
    .action(async (options: StoreOptions & { readonly json?: boolean }) => {
      const now = new Date();
      try {
        const running = await runningRelayOf(options);
        if (running !== undefined) {
          printOnCall((await running.relay('GET /oncall')).oncall, now, options.json === true);
          return;
        }
      } catch (error) {
        fail(error);
      }
      await run(options, async (access, directory) => {
        const found = await whoIsOnCall(access, directory, now);
        const lines = found.map(({ schedule, person, until, override }) => ({
          schedule,
          person: person.name,
          until: until?.toISOString() ?? null,
          timeZone: directory.schedules.get(schedule)!.timeZone,
          overrideReason: override?.reason ?? null,
        }));
        printOnCall(lines, now, options.json === true);
      });
    });
  command.addCommand(overrideCommand());
  return command;
}

function overrideCommand(): Command {
  return withStoreOptions(
    new Command('override')
      .description('Put a person on call for a schedule for a while, over the rotation (the newest override wins)')
      .argument('<schedule>', 'the schedule, as the config names it')
      .addOption(new Option('--person <name>', "who is on call: a name of the config's people").makeOptionMandatory())
      .addOption(
        new Option(
          '--for <duration>',
          `how long from now: 30m, 8h, 2d (at most ${ONCALL.maxOverrideSeconds / 86_400}d)`,
        ).makeOptionMandatory(),
      )
      .addOption(new Option('--reason <text>', 'why, shown by "sms-relay oncall"')),
    { configNames: 'schedules' },
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ npx sms-relay oncall override ops --person baraka --for 8h --reason "asha travels"\n  $ npx sms-relay oncall override ops --person asha --for 1d --env prod',
    )
    .action(async (schedule: string, _options: OverrideOptions, command: Command) => {
      // `oncall` takes the same options: given after `override`, commander hands them to either.
      const options = command.optsWithGlobals<OverrideOptions>();
      await run(options, async (access, directory) => {
        if (!directory.schedules.has(schedule))
          throw new CliError(`unknown schedule "${schedule}"; the config's schedules: ${names(directory.schedules)}`);
        if (!directory.people.has(options.person))
          throw new CliError(`unknown person "${options.person}"; the config's people: ${names(directory.people)}`);
        const forSeconds = parseDurationSeconds(options.for);
        if (forSeconds === undefined || forSeconds > ONCALL.maxOverrideSeconds)
          throw new CliError(
            `--for "${options.for}" is not a duration of up to ${ONCALL.maxOverrideSeconds / 86_400}d; use e.g. 30m, 8h, 2d`,
          );
        const reason = (options.reason ?? '').trim();
        if (reason.length > ONCALL.maxReasonChars)
          throw new CliError(`--reason is at most ${ONCALL.maxReasonChars} characters`);
        const override = await access.override({ schedule, person: options.person, forSeconds, reason });
        const zone = directory.schedules.get(schedule)!.timeZone;
        process.stdout.write(
          `${override.person} is on call for ${schedule} until ${clockTime(new Date(override.until), zone, new Date())} ${zone}${reason === '' ? '' : `: ${reason}`} (${access.description}).\n`,
        );
      });
    });
}

/** Prints who is on call (`--json`: {@link OnCallLine}s); `now` tells the date beside a time that is not today. */
function printOnCall(found: readonly OnCallNowView[], now: Date, json: boolean): void {
  if (json) {
    const lines: OnCallLine[] = found.map(({ schedule, person, until }) => ({ schedule, person, until }));
    process.stdout.write(`${JSON.stringify(lines, null, 2)}\n`);
    return;
  }
  if (found.length === 0) {
    process.stdout.write('No schedules in the config: add schedules (and people) to page whoever is on call.\n');
    return;
  }
  const width = (pick: (line: OnCallNowView) => string): number => Math.max(...found.map((line) => pick(line).length));
  const [scheduleWidth, personWidth] = [width((line) => line.schedule), width((line) => line.person)];
  for (const line of found) {
    const until =
      line.until === null
        ? 'with no end (the only person in the rotation)'
        : `until ${clockTime(new Date(line.until), line.timeZone, now)} ${line.timeZone}`;
    const why =
      line.overrideReason === null ? '' : `  override${line.overrideReason === '' ? '' : `: ${line.overrideReason}`}`;
    process.stdout.write(
      `${line.schedule.padEnd(scheduleWidth)}  ${line.person.padEnd(personWidth)}  ${until}${why}\n`,
    );
  }
}

/** Each schedule's person now, by the overrides in force read through `access`, in config order. */
export async function whoIsOnCall(
  access: Pick<RecordAccess, 'overrides'>,
  directory: OnCallDirectory,
  now: Date,
): Promise<OnCallNow[]> {
  const schedules = [...directory.schedules.values()];
  if (schedules.length === 0) return [];
  const overrides = await access.overrides(schedules.map((schedule) => schedule.name));
  return schedules.map((schedule) => onCallAt(schedule, overrides, directory.people, now));
}

const names = (map: ReadonlyMap<string, unknown>): string => (map.size === 0 ? 'none' : [...map.keys()].join(', '));

async function run(
  options: StoreOptions,
  act: (access: RecordAccess, directory: OnCallDirectory) => Promise<void>,
): Promise<void> {
  try {
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
    const directory = await readDirectory(options);
    const access = await openAccess(options);
    try {
      await act(access, directory);
    } finally {
      await access.close();
    }
  } catch (error) {
    fail(error);
  }
}

/** The people and schedules of the config the relay runs with. */
async function readDirectory({ config, env }: StoreOptions): Promise<OnCallDirectory> {
  return (await loadRunningConfig({ config, env })).onCall;
}
