import { Command, Option } from 'commander';
import { formatTime } from '../../../functions/core/time-format';
import { type DeliveredIncident, pendingOf, type StepSms } from '../../../functions/relay/incident-story';
import { ID_PATTERN } from '../../../functions/store/id-pattern';
import { CliError } from '../../shared/errors';
import { fail } from '../output';
import { openAccess, type StoreOptions, tzOption, withStoreOptions } from '../options';

/** One element of `sms-relay incidents --json`. */
export interface IncidentLine {
  readonly id: string;
  readonly route: string;
  readonly key: string;
  readonly openedAt: string;
  /** 0: the route's recipients; n: the n-th escalation step reached. */
  readonly level: number;
  /** When the next escalation or renotify is due; `null` when none is left. */
  readonly nextDueAt: string | null;
  readonly text: string;
  /** The incident's story, oldest first: each line with the state of the SMS it recorded (`sms`, on escalations and renotifies). */
  readonly story: readonly {
    readonly at: string;
    readonly event: string;
    readonly detail: string;
    readonly sms: readonly StepSms[] | null;
  }[];
  /** What the incident waits for, in words: SMS not delivered yet, then the next step or that none is left. */
  readonly pending: string;
}

/**
 * `sms-relay incidents [--json]`: the open incidents (paging), oldest first, with the level each
 * reached and when it escalates next.
 *
 * @example
 * // npx sms-relay incidents --env prod --json
 * program.addCommand(incidentsCommand());
 */
export function incidentsCommand(): Command {
  return withStoreOptions(
    new Command('incidents')
      .description('List the open incidents of paging routes, with the escalation level each reached')
      .addOption(tzOption())
      .addOption(
        new Option(
          '--json',
          'print a JSON array of {id, route, key, openedAt, level, nextDueAt, text, story, pending}',
        ),
      ),
  )
    .addHelpText('after', '\nExamples:\n  $ npx sms-relay incidents\n  $ npx sms-relay incidents --env prod --json')
    .action(async (options: StoreOptions & { readonly json?: boolean; readonly tz?: string }) => {
      await run(options, async (access) => {
        const incidents = await access.incidents();
        if (options.json === true) {
          // ISO-8601 UTC, whatever --tz says: for programs.
          const iso = (at: string): string => at;
          process.stdout.write(
            `${JSON.stringify(
              incidents.map((each) => line(each, iso)),
              null,
              2,
            )}\n`,
          );
          return;
        }
        if (incidents.length === 0) {
          process.stdout.write(`No open incidents (${access.description}).\n`);
          return;
        }
        const now = new Date();
        const when = (at: string): string =>
          formatTime(at, { now, ...(options.tz === undefined ? {} : { zone: options.tz }) });
        process.stdout.write(`${incidents.map((incident) => describeIncident(incident, when)).join('\n')}`);
      });
    });
}

/**
 * `sms-relay ack <incident>`: acknowledges an open incident as its link's button does: its
 * escalation and renotify stop.
 *
 * @example
 * // npx sms-relay ack 01JD4Z… --env prod
 * program.addCommand(ackCommand());
 */
export function ackCommand(): Command {
  return withStoreOptions(
    new Command('ack')
      .description('Acknowledge an open incident: its escalation and renotify stop')
      .argument('<incident>', 'the incident id, as "sms-relay incidents" lists it'),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ npx sms-relay ack 01JD4ZP6Q3K8V0M2N7R5T9W1XY\n  $ npx sms-relay ack 01JD4ZP6Q3K8V0M2N7R5T9W1XY --env prod',
    )
    .action(async (id: string, options: StoreOptions) => {
      await run(options, async (access) => {
        if (!ID_PATTERN.test(id)) throw new CliError(`"${id}" is not an incident id; "sms-relay incidents" lists them`);
        const outcome = await access.acknowledge(id);
        if (outcome.closed) {
          process.stdout.write(
            `Incident ${id} of route ${outcome.incident.route} acknowledged; its escalation has stopped (${access.description}).\n`,
          );
          return;
        }
        if (outcome.incident === undefined) throw new CliError(`no incident ${id} (${access.description})`);
        process.stdout.write(
          `Incident ${id} was already ${outcome.incident.state.toLowerCase()} by ${outcome.incident.closedBy ?? 'someone'} at ${outcome.incident.closedAt ?? '?'}; nothing changed.\n`,
        );
      });
    });
}

const line = (incident: DeliveredIncident, when: (at: string) => string): IncidentLine => ({
  id: incident.id,
  route: incident.route,
  key: incident.key,
  openedAt: incident.openedAt,
  level: incident.level,
  nextDueAt: incident.nextDueAt ?? null,
  text: incident.text,
  story: incident.timeline.map((entry) => ({
    at: entry.at,
    event: entry.event,
    detail: entry.detail,
    sms: entry.sms ?? null,
  })),
  pending: pendingOf(incident, when),
});

/**
 * An incident as a person reads it: its header, its story with each step's SMS state, and what it
 * waits for.
 *
 * @example
 * ```ts
 * describeIncident(incident, (at) => formatTime(at));
 * // '01JD…  alerts  level 1  opened 16:51 (12 min ago)  "disk full"\n  16:51  sent to 2557****678\n  17:01  escalated to 2557****111  PARKED\n  pending: …'
 * ```
 */
export function describeIncident(incident: DeliveredIncident, when: (at: string) => string): string {
  const story = incident.timeline.map((entry) => {
    const states = entry.sms === undefined ? '' : `  ${smsStates(entry.sms)}`;
    return `  ${when(entry.at)}  ${entry.detail}${states}\n`;
  });
  return [
    `${incident.id}  ${incident.route}  level ${incident.level}  opened ${when(incident.openedAt)}  ${JSON.stringify(incident.text)}\n`,
    ...story,
    `  pending: ${pendingOf(incident, when)}\n`,
  ].join('');
}

/** `SENT`, `PARKED`, `2 SENT, 1 PARKED`. */
function smsStates(sms: readonly StepSms[]): string {
  if (sms.length === 0) return 'no SMS';
  const counts = new Map<string, number>();
  for (const { state } of sms) counts.set(state, (counts.get(state) ?? 0) + 1);
  if (counts.size === 1 && sms.length === 1) return sms[0]!.state;
  return [...counts].map(([state, count]) => `${count} ${state}`).join(', ');
}

async function run(
  options: StoreOptions,
  act: (access: Awaited<ReturnType<typeof openAccess>>) => Promise<void>,
): Promise<void> {
  try {
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
    const access = await openAccess(options);
    try {
      await act(access);
    } finally {
      await access.close();
    }
  } catch (error) {
    fail(error);
  }
}
