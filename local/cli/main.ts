import { Command, Help } from 'commander';

/**
 * The commands, in the order `sms-relay --help` lists them. Each lives in its own module under
 * `commands/` and exports a factory returning a commander `Command`; a module is imported only when
 * its command is run or its help asked for, since most of them pull in the AWS SDK, dynalite or
 * LiquidJS, which take longer to load than the whole of a quick command.
 */
const COMMANDS = {
  preview: async () => (await import('./commands/preview')).previewCommand(),
  validate: async () => (await import('./commands/validate')).validateCommand(),
  sandbox: async () => (await import('./commands/sandbox')).sandboxCommand(),
  start: async () => (await import('./commands/start')).startCommand(),
  'send-test': async () => (await import('./commands/send-test')).sendTestCommand(),
  balance: async () => (await import('./commands/balance')).balanceCommand(),
  providers: async () => (await import('./commands/providers')).providersCommand(),
  logs: async () => (await import('./commands/logs')).logsCommand(),
  redrive: async () => (await import('./commands/redrive')).redriveCommand(),
  dismiss: async () => (await import('./commands/dismiss')).dismissCommand(),
  mute: async () => (await import('./commands/mute')).muteCommand(),
  unmute: async () => (await import('./commands/mute')).unmuteCommand(),
  mutes: async () => (await import('./commands/mute')).mutesCommand(),
  oncall: async () => (await import('./commands/oncall')).oncallCommand(),
  incidents: async () => (await import('./commands/incidents')).incidentsCommand(),
  ack: async () => (await import('./commands/incidents')).ackCommand(),
  circuit: async () => (await import('./commands/circuit')).circuitCommand(),
  console: async () => (await import('./commands/console')).consoleCommand(),
} as const satisfies Readonly<Record<string, () => Promise<Command>>>;

/** The commands' names, in the order `sms-relay --help` lists them. */
export const COMMAND_NAMES = Object.keys(COMMANDS) as readonly (keyof typeof COMMANDS)[];

/**
 * What `sms-relay --help` shows of one command, recorded by the build (`local/cli/build.ts`) so that
 * the built CLI lists the commands without importing their modules.
 */
export interface CommandListing {
  readonly name: string;
  readonly aliases: readonly string[];
  /** The command's term in the list, e.g. `validate [options]`. */
  readonly term: string;
  readonly description: string;
}

export interface ProgramOptions {
  /** The arguments after `node sms-relay`: which command, if any, is defined in full. */
  readonly args?: readonly string[];
  /** The commands as the build recorded them; without them, a help that lists the commands imports every module. */
  readonly listings?: readonly CommandListing[];
}

/**
 * Builds the `sms-relay` command line. The command that `args` names (`validate …`, `help
 * validate`) is defined in full; the others are stand-ins that carry only what the top-level help
 * lists, from `listings`, or, without listings, are defined in full when that help may be printed.
 */
export async function buildProgram({ args = [], listings }: ProgramOptions = {}): Promise<Command> {
  const program = new Command('sms-relay')
    .description('Webhook-to-SMS relay: webhooks in, templated SMS out through a prepaid bulk SMS service.')
    .showHelpAfterError();
  const named = invokedCommand(args);
  const listed = new Map(listings?.map((listing) => [listing.name, listing]));
  const standIns = new Map<Command, CommandListing>();
  for (const [name, define] of Object.entries(COMMANDS)) {
    const listing = listed.get(name);
    if (name === named || (named === undefined && listing === undefined)) {
      program.addCommand(await define());
    } else {
      const standIn = new Command(name).aliases(listing?.aliases ?? []).description(listing?.description ?? '');
      if (listing !== undefined) standIns.set(standIn, listing);
      program.addCommand(standIn);
    }
  }
  if (standIns.size > 0) {
    program.configureHelp({
      subcommandTerm(this: Help, command: Command): string {
        return standIns.get(command)?.term ?? Help.prototype.subcommandTerm.call(this, command);
      },
    });
  }
  return program;
}

/** The command the arguments run or ask help for; the root has no options of its own but `--help`. */
function invokedCommand([first, second]: readonly string[]): keyof typeof COMMANDS | undefined {
  const name = first === 'help' ? second : first;
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? (name as keyof typeof COMMANDS) : undefined;
}

/** Every command as `sms-relay --help` lists it: what the build records. */
export async function commandListings(): Promise<CommandListing[]> {
  const help = new Help();
  return Promise.all(
    Object.values(COMMANDS).map(async (define) => {
      const command = await define();
      return {
        name: command.name(),
        aliases: command.aliases(),
        term: help.subcommandTerm(command),
        description: help.subcommandDescription(command),
      };
    }),
  );
}

export async function main(
  argv: readonly string[],
  { listings }: Pick<ProgramOptions, 'listings'> = {},
): Promise<void> {
  const program = await buildProgram({ args: argv.slice(2), ...(listings === undefined ? {} : { listings }) });
  await program.parseAsync([...argv]);
}
