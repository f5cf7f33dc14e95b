import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LoadedConfig } from '../../functions/core/config/load';
import { providerKeyName } from '../../functions/core/provider/kinds/common';
import { providerSecretNames } from '../../functions/core/provider/registry';
import { routeSecretProblems } from '../../functions/core/sources/secret-check';
import type { SecretKind as SourceSecretKind } from '../../functions/core/sources/types';
import { readSecretsFile } from '../shared/secrets-file';
import { CliError, RuntimeError, secretsFileProblem } from '../shared/errors';

/** The name of the SMS service's API key inside the secrets file (as in the deployed secret). */
export const PROVIDER_API_KEY_NAME = 'providerApiKey';

/** What a secret is for, which decides the shape of a generated value: a pack's `secretKind`, or the SMS service's key. */
export type SecretKind = SourceSecretKind | 'provider';

export interface SecretsFile {
  readonly path: string;
  readonly values: Readonly<Record<string, string>>;
  /** The file did not exist and was written now. */
  readonly created: boolean;
  /** Names that were missing from an existing file and were generated now. */
  readonly added: readonly string[];
}

/**
 * The names a config needs in its secrets file: `providerApiKey`, each provider's `<name>-key`
 * (`main`'s is `providerApiKey`) and each route's `secret`, with
 * the kind of value each takes. Two routes may share a name.
 *
 * @example
 * ```ts
 * requiredSecrets(loaded).get('stripe-secret'); // 'whsec'
 * ```
 */
export function requiredSecrets(loaded: LoadedConfig): ReadonlyMap<string, SecretKind> {
  const names = new Map<string, SecretKind>([[PROVIDER_API_KEY_NAME, 'provider']]);
  // Every provider's key under its documented name, so each local sandbox has one to check.
  for (const name of Object.keys(loaded.settings.providers)) names.set(providerKeyName(name), 'provider');
  for (const route of loaded.routes.values()) {
    const known = names.get(route.config.secret);
    // A name shared by a whsec source and another keeps the whsec shape: it satisfies both.
    if (known === undefined || route.pack.secretKind === 'whsec') names.set(route.config.secret, route.pack.secretKind);
  }
  return names;
}

/**
 * A fresh random secret shaped for its use: `whsec_<base64>` for a `whsec` pack (Stripe, Standard
 * Webhooks: their libraries reject anything else), URL-safe text for the rest (it may travel as
 * `?token=`), `sbx_`-prefixed for the SMS service.
 *
 * @example
 * ```ts
 * generateSecret(sourcePack('standard-webhooks').secretKind); // 'whsec_3q2+7w…='
 * ```
 */
export function generateSecret(kind: SecretKind): string {
  if (kind === 'whsec') return `whsec_${randomBytes(24).toString('base64')}`;
  const value = randomBytes(24).toString('base64url');
  return kind === 'provider' ? `sbx_${value}` : value;
}

/**
 * Reads the local secrets file, creating it on first run with a random value for every name the
 * config needs, and adding values for names an existing file lacks (a route added since), so
 * every route can authenticate. Values already there are never changed. The file is written
 * atomically with mode 0600.
 *
 * @throws {RuntimeError} unreadable, not a JSON object of strings, or not writable
 *
 * @example
 * ```ts
 * const { values, created } = ensureSecretsFile('.relay/secrets.json', loadConfigFile('config/local.yaml'));
 * ```
 */
export function ensureSecretsFile(path: string, loaded: LoadedConfig): SecretsFile {
  const required = requiredSecrets(loaded);
  const exists = existsSync(path);
  const current = exists ? readExisting(path) : {};
  const missing = [...required].filter(([name]) => current[name] === undefined);
  if (exists && missing.length === 0) return { path, values: current, created: false, added: [] };

  const values = { ...current, ...Object.fromEntries(missing.map(([name, kind]) => [name, generateSecret(kind)])) };
  writeSecrets(path, values);
  return { path, values, created: !exists, added: exists ? missing.map(([name]) => name) : [] };
}

/**
 * Every reason a secrets file cannot serve a config: its `providerApiKey` missing or empty (nothing
 * could be sent), each other provider's values missing or empty, then each route secret that is missing or could never authenticate its route
 * (see `routeSecretProblems`). Names only, never values.
 *
 * @example
 * ```ts
 * secretsFileProblems(loaded, { 'alerts-token': 't' });
 * // ['secret "providerApiKey" (the SMS service\'s API key): is missing: add a value with this name', 'secret "github-secret" (route github): is missing: …']
 * ```
 */
export function secretsFileProblems(loaded: LoadedConfig, values: Readonly<Record<string, string>>): string[] {
  const keyProblem = providerValueProblem(values, PROVIDER_API_KEY_NAME, 'the SMS service');
  return [
    ...(keyProblem === undefined
      ? []
      : [`secret "${PROVIDER_API_KEY_NAME}" (the SMS service's API key): ${keyProblem}`]),
    ...providerSecretProblems(loaded, values),
    ...routeSecretProblems(loaded.routes.values(), values),
  ];
}

/** Each value another provider reads (`<name>-key`, an http type's `secret.<name>`) that is missing or empty. */
function providerSecretProblems(loaded: LoadedConfig, values: Readonly<Record<string, string>>): string[] {
  return Object.entries(loaded.settings.providers).flatMap(([provider, config]) =>
    providerSecretNames(provider, config)
      .filter((name) => name !== PROVIDER_API_KEY_NAME)
      .flatMap((name) => {
        const problem = providerValueProblem(values, name, 'the provider');
        return problem === undefined ? [] : [`secret "${name}" (provider ${provider}): ${problem}`];
      }),
  );
}

/** Why a value a provider reads cannot serve it (missing, or empty: `refuser` would refuse every send), if it cannot. */
function providerValueProblem(
  values: Readonly<Record<string, string>>,
  name: string,
  refuser: string,
): string | undefined {
  const value = Object.hasOwn(values, name) ? values[name] : undefined;
  if (value === undefined) return 'is missing: add a value with this name';
  return value === '' ? `is empty: ${refuser} would refuse every send` : undefined;
}

/**
 * Refuses to start with a route secret that could never authenticate its route (see
 * `secretProblem`): every such secret is named, by its name, never its value.
 *
 * @throws {RuntimeError}
 *
 * @example
 * ```ts
 * assertUsableSecrets(secrets.path, loaded, secrets.values);
 * ```
 */
export function assertUsableSecrets(
  path: string,
  loaded: LoadedConfig,
  values: Readonly<Record<string, string>>,
): void {
  const problems = routeSecretProblems(loaded.routes.values(), values);
  if (problems.length > 0) throw new RuntimeError(secretsFileProblem(path, problems.join('; ')));
}

/**
 * Reads a secrets file that must already exist (`send-test`, `balance`): they never create one.
 *
 * @throws {RuntimeError}
 */
export function readExistingSecrets(path: string): Readonly<Record<string, string>> {
  if (!existsSync(path)) {
    throw new RuntimeError(
      secretsFileProblem(
        path,
        'does not exist; "npm start" creates it on first run, or point --secrets / RELAY_SECRETS_FILE at yours',
      ),
    );
  }
  return readExisting(path);
}

function readExisting(path: string): Record<string, string> {
  try {
    return readSecretsFile(path);
  } catch (error) {
    // readSecretsFile's messages name the file and the problem, never a value.
    if (error instanceof CliError) throw new RuntimeError(error.message, { cause: error });
    throw error;
  }
}

function writeSecrets(path: string, values: Readonly<Record<string, string>>): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, `${JSON.stringify(values, null, 2)}\n`, { mode: 0o600, flag: 'w' });
    // The mode given to writeFileSync is filtered by the umask; the file must end up 0600 regardless.
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new RuntimeError(secretsFileProblem(path, `cannot write it (${code})`), { cause: error });
  }
}
