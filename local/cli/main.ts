import { Command } from 'commander';
import { balanceCommand } from './commands/balance';
import { consoleCommand } from './commands/console';
import { logsCommand } from './commands/logs';
import { previewCommand } from './commands/preview';
import { redriveCommand } from './commands/redrive';
import { sandboxCommand } from './commands/sandbox';
import { sendTestCommand } from './commands/send-test';
import { startCommand } from './commands/start';
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
  program.addCommand(startCommand());
  program.addCommand(sendTestCommand());
  program.addCommand(balanceCommand());
  program.addCommand(logsCommand());
  program.addCommand(redriveCommand());
  program.addCommand(consoleCommand());
  return program;
}

export async function main(argv: readonly string[]): Promise<void> {
  await buildProgram().parseAsync([...argv]);
}
