import { Command } from 'commander';
import { loadConfigFile } from '../../../functions/core/config/load';
import { fail } from '../output';

/** `sms-relay validate`: loads a config exactly as the relay and `cdk synth` do, templates included. */
export function validateCommand(): Command {
  return new Command('validate')
    .description('Check a config file: schema, sources, templates, conditions and literal recipients')
    .requiredOption('--config <file>', 'config file, e.g. config/prod.yaml')
    .action(({ config }: { config: string }) => {
      try {
        const loaded = loadConfigFile(config);
        process.stdout.write(`${config}: valid (${loaded.routes.size} route${loaded.routes.size === 1 ? '' : 's'}: ${[...loaded.routes.keys()].join(', ')})\n`);
      } catch (error) {
        fail(error);
      }
    });
}
