import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { CliError, PortInUseError } from '../../shared/errors';
import { localPath, parsePort, resolveRuntimeSettings, RUNTIME_DEFAULTS } from '../../shared/settings';
import { CONSOLE_PORT, startConsole } from '../../console/standalone';
import { fail } from '../output';
import { type StoreOptions, withStoreOptions } from '../options';

interface ConsoleCommandOptions extends StoreOptions {
  readonly port: string;
}

/**
 * `sms-relay console`: the web console on 127.0.0.1, over the local store (through the running
 * relay when there is one) or, with `--env`, the deployed stack's table.
 *
 * @example
 * // npx sms-relay console
 * // npx sms-relay console --env prod --port 3401
 * program.addCommand(consoleCommand());
 */
export function consoleCommand(): Command {
  const command = new Command('console')
    .description('Open the web console on 127.0.0.1: activity, templates, credit and routes')
    .addOption(new Option('--port <port>', `port to listen on (0 picks a free one)`).default(String(CONSOLE_PORT)));
  return withStoreOptions(command, {
    envHelp: 'read the deployed stack SmsRelay-<name> (AWS credentials from the usual chain) and config/<name>.yaml',
    configHelp: `relay config (default: config/<env>.yaml with --env, else env RELAY_CONFIG or ${RUNTIME_DEFAULTS.configPath})`,
  })
    .addHelpText(
      'after',
      `
The console is local only: it listens on 127.0.0.1, refuses any other Host or Origin, and nothing of
it is deployed. "npm start" serves the same console at /console.

Examples:
  $ npx sms-relay console
  $ npx sms-relay console --env prod`,
    )
    .action(async (options: ConsoleCommandOptions) => {
      await runConsole(options);
    });
}

async function runConsole(options: ConsoleCommandOptions): Promise<void> {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  let running;
  try {
    const port = parsePort(options.port, '--port');
    const settings = resolveRuntimeSettings(
      { ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }) },
      process.env,
    );
    const configPath =
      options.config !== undefined
        ? resolve(options.config)
        : options.env !== undefined
          ? resolve(`config/${options.env}.yaml`)
          : settings.configPath;
    running = await startConsole({
      port,
      configPath,
      ...(options.env === undefined ? {} : { environment: options.env }),
      dataDir: localPath('dataDir', options.dataDir),
      tableName: settings.tableName,
      runtimePort: settings.port,
      ...(options.table === undefined ? {} : { table: options.table }),
      ...(options.region === undefined ? {} : { region: options.region }),
      onSignIn: (nextLink) => process.stdout.write(`console: a browser signed in; next one-time link: ${nextLink}\n`),
      onError: (error) =>
        process.stderr.write(
          `console: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`,
        ),
    });
  } catch (error) {
    fail(
      error instanceof PortInUseError
        ? new CliError(`port ${error.port} is in use; pass --port <another> (0 picks a free one)`, { cause: error })
        : error,
    );
  }
  process.stdout.write(
    `sms-relay console: ${running.newLink()}  (one-time link; ${options.env === undefined ? 'local' : `environment ${options.env}`}; Ctrl-C stops it)\n`,
  );
  const stop = (): void => void running.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
