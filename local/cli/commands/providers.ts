import { existsSync } from 'node:fs';
import { Command, Option } from 'commander';
import { createProviderSource } from '../../../functions/adapters/providers';
import type { SecretSource } from '../../../functions/relay/ports';
import { findRunningRuntime } from '../../shared/discovery';
import { readExistingSecrets } from '../../runtime/secrets';
import { localPath } from '../../shared/settings';
import { pointProvidersAt } from '../../runtime/provider-sandboxes';
import { MAIN_PROVIDER } from '../../../functions/store/keys';
import { fail } from '../output';
import { loadRunningConfig, openAccess, type StoreOptions, withStoreOptions } from '../options';

interface ProvidersOptions extends StoreOptions {
  readonly json?: boolean;
  readonly secrets?: string;
}

/** One provider as `sms-relay providers --json` prints it (the contract). */
export interface ProviderStatus {
  readonly name: string;
  readonly type: string;
  /** Whether its balance endpoint answered; `null` for a type without one (`http`) or a provider that could not be created. */
  readonly reachable: boolean | null;
  /** `closed`, `probation` or `open`. */
  readonly circuit: string;
  readonly balance: number | null;
  readonly currency: string | null;
  readonly pricePerSms: number | null;
}

/**
 * `sms-relay providers [--json]`: each configured provider, its type, whether it answers, its
 * circuit, its balance and currency and its price per SMS, from the local relay (running or its
 * store) or a deployed stack (`--env`).
 *
 * @example
 * // npx sms-relay providers --json
 * program.addCommand(providersCommand());
 */
export function providersCommand(): Command {
  return withStoreOptions(
    new Command('providers')
      .description('Show each SMS provider: type, reachable, circuit, balance and currency, price per SMS')
      .addOption(
        new Option('--json', 'print [{name, type, reachable, circuit, balance, currency, pricePerSms}] as JSON'),
      )
      .addOption(
        new Option(
          '--secrets <file>',
          "secrets JSON with the providers' keys (<name>-key, providerApiKey for main); default: the running relay's, else RELAY_SECRETS_FILE or .relay/secrets.json",
        ),
      ),
    { configNames: 'providers' },
  )
    .addHelpText(
      'after',
      `
Each provider is asked where the running relay sends it (its sandbox), else at its configured URL;
PROVIDER_BASE_URL, when set, for the first. Keys are never printed.

Examples:
  $ npx sms-relay providers
  $ npx sms-relay providers --env prod --json`,
    )
    .action(async (options: ProvidersOptions) => {
      try {
        process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
        const statuses = await providerStatuses(options);
        process.stdout.write(options.json === true ? `${JSON.stringify(statuses, null, 2)}\n` : describe(statuses));
      } catch (error) {
        fail(error);
      }
    });
}

async function providerStatuses(options: ProvidersOptions): Promise<ProviderStatus[]> {
  const loaded = await loadRunningConfig(options);
  const running =
    options.env === undefined ? await findRunningRuntime(localPath('dataDir', options.dataDir)) : undefined;
  const fromEnv = process.env['PROVIDER_BASE_URL']?.trim();
  const firstBaseUrl = fromEnv !== undefined && fromEnv !== '' ? fromEnv : running?.providerBaseUrl;
  // Each provider where the running relay sends it (its sandbox), not at the config's URL.
  const settings =
    running?.providerEndpoints === undefined
      ? loaded.settings
      : pointProvidersAt(loaded, running.providerEndpoints).settings;
  const secretsPath = options.secrets ?? running?.secretsPath ?? localPath('secrets', undefined);
  const values = existsSync(secretsPath) ? readExistingSecrets(secretsPath) : {};
  const secrets: SecretSource = { get: async (name) => values[name], refresh: async () => undefined };
  const apiKey = process.env['PROVIDER_API_KEY'];
  const providers = createProviderSource({
    secrets,
    settings,
    ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
    ...(firstBaseUrl === undefined ? {} : { firstBaseUrl }),
  });
  const access = await openAccess(options);
  try {
    return await Promise.all(
      Object.entries(loaded.settings.providers).map(async ([name, entry]): Promise<ProviderStatus> => {
        const [balance, circuit] = await Promise.all([
          balanceOf(providers, name),
          access.circuit(name === MAIN_PROVIDER ? undefined : name),
        ]);
        // The contract's key order: name, type, reachable, circuit, balance, currency, pricePerSms.
        const { reachable, ...money } = balance;
        return { name, type: entry.type, reachable, circuit: circuit.state, ...money };
      }),
    );
  } finally {
    providers.close();
    await access.close();
  }
}

async function balanceOf(
  providers: ReturnType<typeof createProviderSource>,
  name: string,
): Promise<Pick<ProviderStatus, 'reachable' | 'balance' | 'currency' | 'pricePerSms'>> {
  const unknown = { balance: null, currency: null, pricePerSms: null };
  let provider;
  try {
    provider = await providers.get(name);
  } catch {
    return { reachable: null, ...unknown };
  }
  if (provider.balance === undefined) return { reachable: null, ...unknown };
  const read = await provider.balance();
  if (!read.ok) return { reachable: false, ...unknown };
  return { reachable: true, balance: read.balance, currency: read.currency, pricePerSms: read.pricePerSms ?? null };
}

function describe(statuses: readonly ProviderStatus[]): string {
  const rows = statuses.map((status) => [
    status.name,
    status.type,
    status.reachable === null ? '-' : status.reachable ? 'reachable' : 'UNREACHABLE',
    `circuit ${status.circuit}`,
    status.balance === null ? 'balance -' : `balance ${status.balance} ${status.currency ?? ''}`.trim(),
    status.pricePerSms === null ? '' : `${status.pricePerSms} ${status.currency ?? ''} per SMS`.trim(),
  ]);
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]!.length))) ?? [];
  return `${rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
