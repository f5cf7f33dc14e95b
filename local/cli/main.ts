import { Command } from 'commander';
import { previewCommand } from './commands/preview';
import { sandboxCommand } from './commands/sandbox';
import { validateCommand } from './commands/validate';

/**
 * Builds the `sms-relay` command line. Each command lives in its own module under `commands/`
 * and exports a factory returning a commander `Command`.
 */
export function buildProgram(): Command {
  const program = new Command('sms-relay')
    .description('Webhook-to-SMS relay: webhooks in, templated SMS out through a prepaid bulk SMS service.')
    .showHelpAfterError();
  program.addCommand(previewCommand());
  program.addCommand(validateCommand());
  program.addCommand(sandboxCommand());
  return program;
}

export async function main(argv: readonly string[]): Promise<void> {
  await buildProgram().parseAsync([...argv]);
}
