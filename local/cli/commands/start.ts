import { Command, Option } from 'commander';
import { startRuntime } from '../../runtime/runtime';
import { resolveRuntimeSettings, RUNTIME_DEFAULTS } from '../../shared/settings';
import { fail } from '../output';

interface StartOptions {
  readonly port?: string;
  readonly config?: string;
  readonly secrets?: string;
  readonly dataDir?: string;
  readonly providerUrl?: string;
  readonly jsonLogs?: boolean;
  readonly verbose?: boolean;
}

/**
 * `sms-relay start` (what `npm start` runs): the whole relay on this machine until Ctrl-C.
 *
 * @example
 * // PORT=0 RELAY_DATA_DIR=/tmp/relay npx sms-relay start
 * program.addCommand(startCommand());
 */
export function startCommand(): Command {
  return new Command('start')
    .description(
      'Run the relay locally: webhooks on 127.0.0.1, the same handlers as on AWS, dynalite on disk, ' +
        'and a sandbox for each provider of the config unless PROVIDER_BASE_URL is set. Ctrl-C stops it cleanly.',
    )
    .addOption(
      new Option('--port <port>', `port to listen on; 0 picks a free one (env PORT, default ${RUNTIME_DEFAULTS.port})`),
    )
    .addOption(new Option('--config <file>', `relay config (env RELAY_CONFIG, default ${RUNTIME_DEFAULTS.configPath})`))
    .addOption(
      new Option(
        '--secrets <file>',
        `local secrets JSON, created with random values on first run (env RELAY_SECRETS_FILE, default ${RUNTIME_DEFAULTS.secretsPath})`,
      ),
    )
    .addOption(
      new Option(
        '--data-dir <dir>',
        `where the store keeps its records (env RELAY_DATA_DIR, default ${RUNTIME_DEFAULTS.dataDir})`,
      ),
    )
    .addOption(
      new Option(
        '--provider-url <url>',
        "the first provider's service, instead of the sandboxes: no sandbox starts and the other providers use their configured URLs (env PROVIDER_BASE_URL)",
      ),
    )
    .addOption(
      new Option(
        '--json-logs',
        "print the handlers' JSON log lines instead of one line per event (env RELAY_LOG_FORMAT=json)",
      ),
    )
    .addOption(new Option('--verbose', "also print the handlers' informational log lines"))
    .addHelpText(
      'after',
      `
Environment:
  PROVIDER_API_KEY   key for the SMS service; overrides "providerApiKey" in the secrets file
  MAX_BODY_BYTES     largest webhook body accepted (default ${RUNTIME_DEFAULTS.maxBodyBytes}); larger gets 413
  RETRY_MAX_ATTEMPTS, RETRY_BASE_DELAY_MS, STALE_SENDING_MS   passed on to the handlers

Local-only endpoints (used by "logs", "redrive" and "mute" while the runtime holds the store; each
needs Authorization: Bearer <consoleSecret of RELAY_DATA_DIR/runtime.json>, a file only you can read):
  GET /health, GET /_relay/records?route=&state=&since=&limit=, POST /_relay/redrive {"from","ids"}

Examples:
  $ npm start
  $ PORT=0 RELAY_DATA_DIR=/tmp/relay npx sms-relay start
  $ PROVIDER_BASE_URL=https://sms.example.com PROVIDER_API_KEY=… npx sms-relay start`,
    )
    .action(async (options: StartOptions) => {
      await runStart(options);
    });
}

async function runStart(options: StartOptions): Promise<void> {
  // The SDK warns about Node 20 on every start; the project supports Node 20, so it is only noise.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  let runtime;
  try {
    const settings = resolveRuntimeSettings(options, process.env);
    runtime = await startRuntime(settings, { verbose: options.verbose === true });
  } catch (error) {
    fail(error);
  }
  let signals = 0;
  const onSignal = (): void => {
    signals += 1;
    // A second Ctrl-C means "now": the store may lose nothing (records are written before answers), only time.
    if (signals > 1) process.exit(130);
    void runtime.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  await runtime.stopped;
  // Handler modules keep pooled sockets and clients open; nothing is left to do.
  process.exit(0);
}
