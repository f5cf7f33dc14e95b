import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { isTimeZone } from '../../functions/core/local-time';
import type { LoadedConfig } from '../../functions/core/config/compile';
import { findRunningRuntime } from '../shared/discovery';
import { CliError } from '../shared/errors';
import { openDeployedRecordAccess, openLocalRecordAccess, type RecordAccess } from '../shared/record-access';
import { relayClient, type RelayClient } from '../shared/relay-client';
import { displayPath, localPath, RUNTIME_DEFAULTS } from '../shared/settings';

/**
 * The options every command that reaches the records' store shares (`logs`, `redrive`, `dismiss`,
 * `mute`, `oncall`, `incidents`, `circuit`, `console`…), and what they open: the local store, or a
 * deployed stack's table.
 */

/** Where a store command reads and writes: the options {@link withStoreOptions} adds. */
export interface StoreOptions {
  readonly config?: string;
  readonly env?: string;
  readonly table?: string;
  readonly region?: string;
  readonly dataDir?: string;
}

/** How one command words its store options in `--help`, where it reads more than records. */
export interface StoreOptionsHelp {
  /** The `--config` option and what the config names for the command (e.g. 'routes'); absent: no `--config`. */
  readonly configNames?: string;
  /** `--config`'s description in full, instead of the one made from `configNames`. */
  readonly configHelp?: string;
  /** `--env`'s description, where the command reads more of the environment than its table. */
  readonly envHelp?: string;
}

const ENV_HELP = 'the deployed stack SmsRelay-<name> instead of the local relay (AWS credentials from the usual chain)';

/**
 * Adds the store options to a command, after its own: `--env`, `--config` (with `configNames` or
 * `configHelp`), `--table`, `--region` and `--data-dir`.
 *
 * @example
 * ```ts
 * withStoreOptions(new Command('oncall').description('…'), { configNames: 'schedules' }).action(…);
 * ```
 */
export function withStoreOptions(command: Command, help: StoreOptionsHelp = {}): Command {
  command.addOption(new Option('--env <name>', help.envHelp ?? ENV_HELP));
  const configHelp =
    help.configHelp ??
    (help.configNames === undefined
      ? undefined
      : `the config naming the ${help.configNames} (default: config/<env>.yaml with --env, else env RELAY_CONFIG or ${RUNTIME_DEFAULTS.configPath})`);
  if (configHelp !== undefined) command.addOption(new Option('--config <file>', configHelp));
  return command
    .addOption(new Option('--table <name>', 'with --env: the table name (stack output TableName)').env('TABLE_NAME'))
    .addOption(regionOption())
    .addOption(new Option('--data-dir <dir>', `local store (env RELAY_DATA_DIR, default ${RUNTIME_DEFAULTS.dataDir})`));
}

/** `--region`, for the commands that reach a deployed stack; otherwise the SDK's (AWS_REGION, the profile's). */
export function regionOption(): Option {
  return new Option(
    '--region <region>',
    "with --env: the AWS region of the stack (default: AWS_REGION, or your profile's region)",
  );
}

/** The records' store the options name: the deployed stack's table with `--env`, else the local one. */
export async function openAccess(options: StoreOptions): Promise<RecordAccess> {
  return options.env === undefined
    ? await openLocalRecordAccess({ dataDir: localPath('dataDir', options.dataDir) })
    : await openDeployedRecordAccess({
        environment: options.env,
        ...(options.table === undefined ? {} : { table: options.table }),
        ...(options.region === undefined ? {} : { region: options.region }),
      });
}

/**
 * The config the relay runs with, for the names a store command checks (routes, people,
 * schedules): `--config`, else `config/<env>.yaml` with `--env`, else the local runtime's. The
 * config's compiler (yaml, zod, LiquidJS, libphonenumber) is loaded here, only by the commands
 * that read a config.
 */
export async function loadRunningConfig({ config, env }: Pick<StoreOptions, 'config' | 'env'>): Promise<LoadedConfig> {
  const path =
    config !== undefined
      ? resolve(config)
      : env !== undefined
        ? resolve(`config/${env}.yaml`)
        : localPath('config', undefined);
  if (!existsSync(path))
    throw new CliError(`no config at ${displayPath(path)}: pass --config <file>, the config the relay runs with`);
  const { loadConfigFile } = await import('../../functions/core/config/load');
  return loadConfigFile(path);
}

/** A running relay's `/_relay` API, and how a command names it. */
export interface RunningRelay {
  readonly relay: RelayClient;
  /** `the running relay (pid …, http://127.0.0.1:…)`, as {@link openAccess}'s description says it. */
  readonly description: string;
}

/**
 * The running relay of the local data directory, when the options name neither `--config` nor
 * `--env`: a command that would load the config only for names and time zones asks the relay,
 * which compiled it at its start (`GET /_relay/routes`, `GET /_relay/oncall`), and answers in a
 * fraction of the time the config's compiler takes to load. `undefined` otherwise.
 */
export async function runningRelayOf(options: StoreOptions): Promise<RunningRelay | undefined> {
  if (options.config !== undefined || options.env !== undefined) return undefined;
  const running = await findRunningRuntime(localPath('dataDir', options.dataDir));
  if (running === undefined) return undefined;
  return {
    relay: relayClient({ url: running.url, consoleSecret: running.consoleSecret }),
    description: `the running relay (pid ${running.pid}, ${running.url})`,
  };
}

/**
 * `--tz <zone>`: the zone a command shows its times in, unlabelled (other zones are named); the
 * machine's (`TZ`) when absent. `--json` keeps ISO-8601 UTC whatever it is.
 */
export function tzOption(): Option {
  return new Option('--tz <zone>', "show times in this IANA zone (default: the machine's, env TZ)").argParser(
    (value: string) => {
      if (!isTimeZone(value)) throw new InvalidArgumentError('Expected an IANA time zone, e.g. Africa/Dar_es_Salaam.');
      return value;
    },
  );
}
