import { Command, Option } from 'commander';
import type { Incident } from '../../../functions/core/paging/incident';
import { ID_PATTERN } from '../../../functions/store/id-pattern';
import { CliError } from '../../shared/errors';
import { fail } from '../output';
import { openAccess, type StoreOptions, withStoreOptions } from '../options';

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
      .addOption(new Option('--json', 'print a JSON array of {id, route, key, openedAt, level, nextDueAt, text}')),
  )
    .addHelpText('after', '\nExamples:\n  $ npx sms-relay incidents\n  $ npx sms-relay incidents --env prod --json')
    .action(async (options: StoreOptions & { readonly json?: boolean }) => {
      await run(options, async (access) => {
        const incidents = await access.incidents();
        if (options.json === true) {
          process.stdout.write(`${JSON.stringify(incidents.map(line), null, 2)}\n`);
          return;
        }
        if (incidents.length === 0) {
          process.stdout.write(`No open incidents (${access.description}).\n`);
          return;
        }
        for (const incident of incidents) {
          const next = incident.nextDueAt === undefined ? 'no step left' : `next step ${incident.nextDueAt}`;
          process.stdout.write(
            `${incident.id}  ${incident.route}  level ${incident.level}  opened ${incident.openedAt}  ${next}  ${incident.text}\n`,
          );
        }
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

const line = (incident: Incident): IncidentLine => ({
  id: incident.id,
  route: incident.route,
  key: incident.key,
  openedAt: incident.openedAt,
  level: incident.level,
  nextDueAt: incident.nextDueAt ?? null,
  text: incident.text,
});

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
