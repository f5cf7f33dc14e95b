import { Command, Option } from 'commander';
import { loadConfigFile } from '../../../functions/core/config/load';
import { CliError, fail } from '../output';
import { readSecretsFile } from '../secrets-file';
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
    .description('Check a config file: schema, sources, templates, conditions and literal recipients (and, with --secrets, the route secrets)')
    .requiredOption('--config <file>', 'config file, e.g. config/prod.yaml')
    .addOption(new Option('--secrets <file>', 'secrets JSON (as .relay/secrets.json, or the deployed secret saved to a file): check providerApiKey and each route secret are present and usable'))
    .action(({ config, secrets }: ValidateOptions) => {
      try {
        const loaded = loadConfigFile(config);
        if (secrets !== undefined) {
          const problems = secretsFileProblems(loaded, readSecretsFile(secrets));
          if (problems.length > 0) throw new CliError(`${secrets}: ${problems.length} unusable secret${problems.length === 1 ? '' : 's'}\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
        }
        process.stdout.write(`${config}: valid (${loaded.routes.size} route${loaded.routes.size === 1 ? '' : 's'}: ${[...loaded.routes.keys()].join(', ')})${secrets === undefined ? '' : `; secrets in ${secrets} usable`}\n`);
      } catch (error) {
        fail(error);
      }
    });
}
