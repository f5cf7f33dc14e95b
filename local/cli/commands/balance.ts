import { Command, Option } from 'commander';
import { loadConfigFile } from '../../../functions/core/config/load';
import { createSmsClient, describeSmsError, SmsErrorCode, type SmsClient } from '../../../functions/core/provider';
import { findRunningRuntime } from '../../shared/discovery';
import { readExistingSecrets, PROVIDER_API_KEY_NAME } from '../../runtime/secrets';
import { displayPath, localPath, RUNTIME_DEFAULTS } from '../../shared/settings';
import { CliError, RuntimeError } from '../../shared/errors';
import { fail } from '../output';

interface BalanceOptions {
  readonly config?: string;
  readonly secrets?: string;
  readonly url?: string;
  readonly json?: boolean;
}

/**
 * `sms-relay balance`: asks the SMS service for the account's balance, currency and rate.
 *
 * @example
 * // npx sms-relay balance                     (the running local relay's SMS service)
 * // PROVIDER_BASE_URL=https://sms.example PROVIDER_API_KEY=… npx sms-relay balance
 * program.addCommand(balanceCommand());
 */
export function balanceCommand(): Command {
  return new Command('balance')
    .description('Show the SMS account balance, currency and rate per SMS from the SMS service')
    .addOption(
      new Option(
        '--config <file>',
        `relay config, for provider.baseUrl (env RELAY_CONFIG, default ${RUNTIME_DEFAULTS.configPath})`,
      ),
    )
    .addOption(
      new Option(
        '--secrets <file>',
        `secrets JSON holding providerApiKey (env RELAY_SECRETS_FILE, default ${RUNTIME_DEFAULTS.secretsPath})`,
      ),
    )
    .addOption(new Option('--url <base>', 'SMS service base URL, overriding everything else'))
    .addOption(new Option('--json', 'print {baseUrl, balance, currency, smsRate} as JSON'))
    .addHelpText(
      'after',
      `
The service is, first found: --url; PROVIDER_BASE_URL; the SMS service of the relay running on
RELAY_DATA_DIR (its sandbox); the config's provider.baseUrl. The key is PROVIDER_API_KEY, else
"providerApiKey" from --secrets, else from the running relay's own secrets file (a relay started
with PROVIDER_API_KEY has none: give balance the same), else from RELAY_SECRETS_FILE or
.relay/secrets.json. The key is never printed.`,
    )
    .action(async (options: BalanceOptions) => {
      try {
        await runBalance(options);
      } catch (error) {
        fail(error);
      }
    });
}

/** Failures with no complete answer from the service. */
const UNREACHABLE: ReadonlySet<SmsErrorCode> = new Set([
  SmsErrorCode.TIMEOUT,
  SmsErrorCode.RESET,
  SmsErrorCode.REFUSED,
  SmsErrorCode.DNS,
  SmsErrorCode.NETWORK,
]);

async function runBalance(options: BalanceOptions): Promise<void> {
  const { baseUrl, origin, secretsPath } = await serviceUrl(options);
  const apiKey =
    process.env['PROVIDER_API_KEY'] ||
    (secretsPath === undefined ? undefined : readExistingSecrets(secretsPath)[PROVIDER_API_KEY_NAME]);
  if (secretsPath === undefined && !apiKey) {
    throw new CliError(
      `the running relay was given its SMS service key in PROVIDER_API_KEY, not in a secrets file: run balance with the same PROVIDER_API_KEY`,
    );
  }
  if (apiKey === undefined || apiKey === '')
    throw new CliError(`no API key: set PROVIDER_API_KEY or "${PROVIDER_API_KEY_NAME}" in the secrets file`);

  let client: SmsClient | undefined;
  try {
    client = createSmsClient({ baseUrl, apiKey });
    const { balance, currency, smsRate } = await client.getBalance();
    if (options.json === true) {
      process.stdout.write(`${JSON.stringify({ baseUrl, balance, currency, smsRate })}\n`);
      return;
    }
    const left = smsRate > 0 ? `, about ${Math.floor(balance / smsRate)} SMS left` : '';
    process.stdout.write(
      `SMS service  ${baseUrl} (${origin})\nBalance      ${formatAmount(balance)} ${currency}\nRate         ${formatAmount(smsRate)} ${currency} per SMS${left}\n`,
    );
  } catch (error) {
    const described = describeSmsError(error);
    if (described.code === SmsErrorCode.UNAUTHORIZED)
      throw new RuntimeError(`the SMS service at ${baseUrl} refused the API key (401)`, { cause: error });
    const detail = [described.name, described.status, described.code, described.systemCode, described.serviceError]
      .filter((part) => part !== undefined)
      .join(' ');
    const what =
      described.code !== undefined && UNREACHABLE.has(described.code)
        ? 'cannot reach the SMS service'
        : 'the SMS service failed';
    throw new RuntimeError(`${what} at ${baseUrl} (${detail})`, { cause: error });
  } finally {
    client?.close();
  }
}

/**
 * The service to ask, and the secrets file whose `providerApiKey` it takes: none when the running
 * relay took its key from PROVIDER_API_KEY (only that variable has it then).
 */
async function serviceUrl(
  options: BalanceOptions,
): Promise<{ baseUrl: string; origin: string; secretsPath: string | undefined }> {
  const secretsPath = localPath('secrets', options.secrets);
  if (options.url !== undefined) return { baseUrl: options.url, origin: '--url', secretsPath };
  const fromEnv = process.env['PROVIDER_BASE_URL'];
  if (fromEnv !== undefined && fromEnv.trim() !== '')
    return { baseUrl: fromEnv.trim(), origin: 'PROVIDER_BASE_URL', secretsPath };
  const running = await findRunningRuntime(localPath('dataDir', undefined));
  if (running !== undefined) {
    // Its sandbox knows only the key the relay was started with: the one in the relay's own secrets file.
    return {
      baseUrl: running.providerBaseUrl,
      origin: `SMS service of the running relay, pid ${running.pid}`,
      secretsPath: options.secrets === undefined ? running.secretsPath : secretsPath,
    };
  }
  const configPath = localPath('config', options.config);
  return {
    baseUrl: loadConfigFile(configPath).settings.provider.baseUrl,
    origin: `provider.baseUrl of ${displayPath(configPath)}`,
    secretsPath,
  };
}

function formatAmount(value: number): string {
  return new Intl.NumberFormat('en', { maximumFractionDigits: 4 }).format(value);
}
