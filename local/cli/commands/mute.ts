import { Command, Option } from 'commander';
import type { RouteConfig } from '../../../functions/core/config/schema';
import { parseDurationSeconds } from '../../../functions/core/config/duration';
import { clockTime } from '../../../functions/core/local-time';
import { MAX_MUTE_REASON_CHARS, MAX_MUTE_SECONDS } from '../../../functions/core/defaults';
import type { Mute } from '../../../functions/store';
import type { RecordAccess } from '../../shared/record-access';
import { CliError } from '../../shared/errors';
import { fail } from '../output';
import { loadRunningConfig, openAccess, runningRelayOf, type StoreOptions, withStoreOptions } from '../options';

interface MuteOptions extends StoreOptions {
  readonly for: string;
  readonly reason?: string;
}

/**
 * `sms-relay mute <route> --for 2h --reason "db upgrade"`: the route's messages are recorded
 * DROPPED, with the reason, until the mute lapses by itself (or `unmute`).
 *
 * @example
 * // npx sms-relay mute alerts --for 2h --reason "db upgrade"
 * program.addCommand(muteCommand());
 */
export function muteCommand(): Command {
  return withStoreOptions(
    new Command('mute')
      .description(
        'Mute a route for a while (a maintenance window): its messages are recorded DROPPED with the reason and never sent',
      )
      .argument('<route>', 'the route id')
      .addOption(
        new Option(
          '--for <duration>',
          `how long: 30m, 2h, 1d (at most ${MAX_MUTE_SECONDS / 86_400}d)`,
        ).makeOptionMandatory(),
      )
      .addOption(new Option('--reason <text>', 'why, shown in every dropped record')),
    { configNames: 'routes' },
  )
    .addHelpText(
      'after',
      `
The mute is kept in the table: it survives restarts and ends by itself. Muting again replaces it.

Examples:
  $ npx sms-relay mute alerts --for 2h --reason "db upgrade"
  $ npx sms-relay mute orders --for 30m --env prod`,
    )
    .action(async (route: string, options: MuteOptions) => {
      await run(options, async (access, routes, zoneOf) => {
        known(route, routes);
        const forSeconds = parseDurationSeconds(options.for);
        if (forSeconds === undefined || forSeconds > MAX_MUTE_SECONDS)
          throw new CliError(
            `--for "${options.for}" is not a duration of up to ${MAX_MUTE_SECONDS / 86_400}d; use e.g. 30m, 2h, 1d`,
          );
        const reason = (options.reason ?? '').trim();
        if (reason.length > MAX_MUTE_REASON_CHARS)
          throw new CliError(`--reason is at most ${MAX_MUTE_REASON_CHARS} characters`);
        const mute = await access.mute({ route, forSeconds, reason });
        process.stdout.write(
          `Muted route ${route} until ${until(mute, zoneOf(route))}${reason === '' ? '' : `: ${reason}`} (${access.description}).\n`,
        );
      });
    });
}

/** `sms-relay unmute <route>`: ends a route's mute now. */
export function unmuteCommand(): Command {
  return withStoreOptions(
    new Command('unmute').description("End a route's mute now").argument('<route>', 'the route id'),
    { configNames: 'routes' },
  )
    .addHelpText('after', '\nExample:\n  $ npx sms-relay unmute alerts')
    .action(async (route: string, options: StoreOptions) => {
      await run(options, async (access, routes) => {
        known(route, routes);
        const ended = await access.unmute(route);
        process.stdout.write(
          ended ? `Unmuted route ${route}: its messages are sent again.\n` : `Route ${route} was not muted.\n`,
        );
      });
    });
}

/** `sms-relay mutes`: the mutes in force. */
export function mutesCommand(): Command {
  return withStoreOptions(
    new Command('mutes')
      .description('List the routes muted now, until when and why')
      .addOption(new Option('--json', 'print a JSON array of {route, until, reason, mutedAt}')),
    { configNames: 'routes' },
  )
    .addHelpText('after', '\nExamples:\n  $ npx sms-relay mutes\n  $ npx sms-relay mutes --env prod --json')
    .action(async (options: StoreOptions & { readonly json?: boolean }) => {
      const print = (mutes: readonly Mute[], zoneOf: Zones, description: string): void => {
        if (options.json === true) {
          process.stdout.write(`${JSON.stringify(mutes, null, 2)}\n`);
          return;
        }
        if (mutes.length === 0) {
          process.stdout.write(`No route is muted (${description}).\n`);
          return;
        }
        for (const mute of mutes)
          process.stdout.write(
            `${mute.route}  muted until ${until(mute, zoneOf(mute.route))}${mute.reason === '' ? '' : `  ${mute.reason}`}\n`,
          );
      };
      try {
        const running = await runningRelayOf(options);
        if (running !== undefined) {
          const [{ mutes }, { routes }] = await Promise.all([
            running.relay('GET /mutes'),
            running.relay('GET /routes'),
          ]);
          const zones = new Map(routes.map(({ id, timeZone }) => [id, timeZone]));
          print(mutes, (route) => zones.get(route) ?? 'UTC', running.description);
          return;
        }
      } catch (error) {
        fail(error);
      }
      await run(options, async (access, _routes, zoneOf) => print(await access.mutes(), zoneOf, access.description));
    });
}

type Zones = (route: string) => string;

async function run(
  options: StoreOptions,
  act: (access: RecordAccess, routes: ReadonlyMap<string, RouteConfig>, zoneOf: Zones) => Promise<void>,
): Promise<void> {
  try {
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
    const routes = await readRoutes(options);
    const access = await openAccess(options);
    try {
      await act(access, routes, (route) => routes.get(route)?.timeZone ?? 'UTC');
    } finally {
      await access.close();
    }
  } catch (error) {
    fail(error);
  }
}

/** The routes of the config the relay runs with: the mute's route must be one, and its time zone says the time. */
async function readRoutes({ config, env }: StoreOptions): Promise<ReadonlyMap<string, RouteConfig>> {
  const loaded = await loadRunningConfig({ config, env });
  return new Map([...loaded.routes].map(([id, route]) => [id, route.config]));
}

function known(route: string, routes: ReadonlyMap<string, RouteConfig>): void {
  if (!routes.has(route))
    throw new CliError(`unknown route "${route}"; the config's routes: ${[...routes.keys()].join(', ')}`);
}

/** `14:30 Africa/Dar_es_Salaam`, with the date when it is not today there. */
function until(mute: Mute, zone: string): string {
  return `${clockTime(new Date(mute.until), zone, new Date())} ${zone}`;
}
