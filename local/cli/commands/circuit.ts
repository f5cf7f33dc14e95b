import { Command, Option } from 'commander';
import { parseDurationSeconds } from '../../../functions/core/config/duration';
import { formatSpan } from '../../../functions/core/local-time';
import { CircuitPosition, type CircuitView, MAX_CIRCUIT_OPEN_SECONDS } from '../../records/circuit-view';
import type { RecordAccess } from '../../shared/record-access';
import { CliError } from '../../shared/errors';
import { fail } from '../output';
import { openAccess, type StoreOptions, withStoreOptions } from '../options';

interface CircuitOptions extends StoreOptions {
  readonly json?: boolean;
}

/**
 * `sms-relay circuit [--json]`: the SMS service's circuit (closed, on probation or open, since
 * when, failures and next probe); `sms-relay circuit close` and `sms-relay circuit open --for 30m`
 * act on it, locally (the running relay or its store) or on a deployed stack (`--env`).
 *
 * @example
 * // npx sms-relay circuit --env prod
 * program.addCommand(circuitCommand());
 */
export function circuitCommand(): Command {
  const command = withStoreOptions(
    new Command('circuit')
      .description(
        "Show the SMS service's circuit (open: sends paused while the service is unreachable), or open or close it by hand",
      )
      .addOption(
        new Option(
          '--json',
          'print {state, since, failures, probes, nextProbeAt, lastError, lastFailureAt, openedBy} as JSON',
        ),
      ),
  )
    .addHelpText(
      'after',
      `
The circuit is one item in the table, shared by every sender: 3 sends failing in a row (refused,
time-outs, 5xx) open it, sends wait PENDING and the service is probed at a backoff; a probe that
finds it answering lets one send at a time through until one goes through. Senders read it at most
every 3 s, so a change by hand reaches them within 3 s.

Examples:
  $ npx sms-relay circuit
  $ npx sms-relay circuit --env prod --json
  $ npx sms-relay circuit close --env prod      # the service is back, or its balance endpoint is broken: send now
  $ npx sms-relay circuit open --for 30m        # the service announced maintenance: hold every SMS`,
    )
    .action(async (options: CircuitOptions) => {
      await run(options, async (access) => {
        const circuit = await access.circuit();
        process.stdout.write(
          options.json === true ? `${JSON.stringify(circuit, null, 2)}\n` : describe(circuit, access.description),
        );
      });
    });
  command.addCommand(
    withStoreOptions(new Command('close').description('Close the circuit now: sends start at once'))
      .addHelpText('after', '\nExample:\n  $ npx sms-relay circuit close --env prod')
      .action(async (_options: StoreOptions, self: Command) => {
        await run(self.optsWithGlobals<StoreOptions>(), async (access) => {
          const { before } = await access.changeCircuit({ action: 'close' });
          process.stdout.write(
            before.state === CircuitPosition.Closed && before.failures === 0
              ? `The circuit was closed (${access.description}).\n`
              : `Closed the circuit (${before.state} since ${before.since ?? 'its failures'}): sends start at once, failures and probes forgotten (${access.description}).\n`,
          );
        });
      }),
  );
  command.addCommand(
    withStoreOptions(
      new Command('open')
        .description('Open the circuit for a while: no SMS is sent until then (they wait PENDING), then it is probed')
        .addOption(
          new Option(
            '--for <duration>',
            `how long: 30m, 2h (at most ${MAX_CIRCUIT_OPEN_SECONDS / 3_600}h)`,
          ).makeOptionMandatory(),
        ),
    )
      .addHelpText('after', '\nExample:\n  $ npx sms-relay circuit open --for 30m --env prod')
      .action(async (_options: StoreOptions & { readonly for: string }, self: Command) => {
        const options = self.optsWithGlobals<StoreOptions & { readonly for: string }>();
        await run(options, async (access) => {
          const forSeconds = parseDurationSeconds(options.for);
          if (forSeconds === undefined || forSeconds < 1 || forSeconds > MAX_CIRCUIT_OPEN_SECONDS)
            throw new CliError(
              `--for "${options.for}" is not a duration of up to ${MAX_CIRCUIT_OPEN_SECONDS / 3_600}h; use e.g. 30m, 2h`,
            );
          const { circuit } = await access.changeCircuit({ action: 'open', forSeconds });
          process.stdout.write(
            `Opened the circuit until ${circuit.nextProbeAt}: no SMS is sent until then, they wait PENDING; then the service is probed (${access.description}).\n`,
          );
        });
      }),
  );
  return command;
}

/** The circuit in a few lines, as an operator reads it during an incident. */
function describe(circuit: CircuitView, where: string, now: Date = new Date()): string {
  const ago = (at: string | null): string =>
    at === null
      ? ''
      : ` (${formatSpan(Math.abs(now.getTime() - Date.parse(at)))} ${Date.parse(at) > now.getTime() ? 'from now' : 'ago'})`;
  const last =
    circuit.lastError === null
      ? ''
      : `, last ${circuit.lastError}${circuit.lastFailureAt === null ? '' : ` at ${circuit.lastFailureAt}`}`;
  const lines = [`SMS service circuit (${where}): ${circuit.state.toUpperCase()}`];
  if (circuit.state === CircuitPosition.Open) {
    lines.push(
      `  since ${circuit.since}${ago(circuit.since)}${circuit.openedBy === null ? '' : `, opened by ${circuit.openedBy}`}: no SMS is sent, they wait PENDING`,
      `  next probe ${circuit.nextProbeAt ?? 'now'}${ago(circuit.nextProbeAt)}, ${circuit.probes} failed so far`,
    );
  } else if (circuit.state === CircuitPosition.Probation) {
    lines.push(
      `  since ${circuit.since}${ago(circuit.since)}: a probe found the service answering; one send at a time until one goes through`,
    );
  } else lines.push('  sends go out');
  lines.push(`  failures in a row: ${circuit.failures}${last}`);
  return `${lines.join('\n')}\n`;
}

async function run(options: StoreOptions, act: (access: RecordAccess) => Promise<void>): Promise<void> {
  try {
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
    const access = await openAccess(options);
    try {
      await act(access);
    } finally {
      await access.close();
    }
  } catch (error) {
    fail(error);
  }
}
