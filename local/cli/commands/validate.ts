import { Command, Option } from 'commander';
import { loadConfigFile, readConfigText, type LoadedConfig } from '../../../functions/core/config/load';
import { readYaml } from '../../../functions/core/config/parse';
import { pagingWarnings } from '../../../functions/core/paging/compile';
import { creditWarnings, responderWarnings } from '../../../functions/core/config/warnings';
import { CliError } from '../../shared/errors';
import { fail } from '../output';
import { readSecretsFile } from '../../shared/secrets-file';
import { secretsFileProblems } from '../../runtime/secrets';

interface ValidateOptions {
  readonly config: string;
  readonly secrets?: string;
}

/**
 * `sms-relay validate`: loads a config exactly as the relay and `cdk synth` do, templates included;
 * with `--secrets`, also checks that the file holds `providerApiKey` and every route's secret, each
 * usable (named by its name, never its value).
 */
export function validateCommand(): Command {
  return new Command('validate')
    .description(
      'Check a config file: schema, sources, templates, conditions and literal recipients (and, with --secrets, the route secrets)',
    )
    .requiredOption('--config <file>', 'config file, e.g. config/prod.yaml')
    .addOption(
      new Option(
        '--secrets <file>',
        'secrets JSON (as .relay/secrets.json, or the deployed secret saved to a file): check providerApiKey and each route secret are present and usable',
      ),
    )
    .action(({ config, secrets }: ValidateOptions) => {
      try {
        const loaded = loadConfigFile(config);
        if (secrets !== undefined) {
          const problems = secretsFileProblems(loaded, readSecretsFile(secrets));
          if (problems.length > 0)
            throw new CliError(
              `${secrets}: ${problems.length} unusable secret${problems.length === 1 ? '' : 's'}\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
            );
        }
        process.stdout.write(
          `${config}: valid (${loaded.routes.size} route${loaded.routes.size === 1 ? '' : 's'}: ${[...loaded.routes.keys()].join(', ')})${secrets === undefined ? '' : `; secrets in ${secrets} usable`}\n`,
        );
        process.stdout.write(`${deliveryTable(loaded, readConfigText(config))}\n`);
        for (const warning of [
          ...pagingWarnings(loaded.routes),
          ...creditWarnings(loaded),
          ...responderWarnings(loaded),
        ])
          process.stderr.write(`warning: ${warning}\n`);
      } catch (error) {
        fail(error);
      }
    });
}

/**
 * Each route's effective delivery policy, and where it comes from: the route's own `delivery`, or
 * its source's default (alerting sources at-least-once, the others at-most-once).
 *
 * @example
 * ```ts
 * deliveryTable(loaded, text); // '  oncall  alertmanager  at-least-once  default for alertmanager\n  …'
 * ```
 */
export function deliveryTable(loaded: LoadedConfig, text: string): string {
  const raw = (readYaml(text) as { routes?: Record<string, { delivery?: unknown } | null> } | null)?.routes ?? {};
  const rows = [...loaded.routes.values()].map((route) => [
    route.id,
    route.pack.name,
    route.config.delivery,
    raw[route.id]?.delivery === undefined ? `default for ${route.pack.name}` : 'set by the route',
  ]);
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) => `  ${row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join('  ')}`)
    .join('\n');
}
