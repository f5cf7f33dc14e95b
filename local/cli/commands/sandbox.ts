import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError, Option } from 'commander';
import { InvalidSandboxOptionsError } from '../../sandbox/errors';
import { SANDBOX_DEFAULTS } from '../../sandbox/options';
import { startSandbox } from '../../sandbox/server';
import { AT_DEFAULT_SENDER, AT_SANDBOX_USERNAME, startAfricasTalkingSandbox } from '../../sandbox/africastalking';
import { HTTP_GATEWAY_BODY, HTTP_GATEWAY_SEND_PATH, startHttpGatewaySandbox } from '../../sandbox/http-gateway';
import type { DeliveredMessage, RunningSandbox } from '../../sandbox/types';
import { maskMsisdn } from '../../../functions/core/recipients/mask';

/** Conventional exit status for a command-line usage error. */
export const USAGE_ERROR_EXIT_CODE = 2;

/** People run the sandbox by hand more than tests do, so it gets a fixed, memorable port by default. */
export const DEFAULT_CLI_PORT = 4010;

const AMOUNT = /^\d+(\.\d{1,4})?$/;
const CURRENCY_CODE = /^[A-Z]{3}$/;
/** Enough recipients per line to recognise a send without flooding the terminal. */
const MAX_NUMBERS_PER_LINE = 3;

/** The provider types a sandbox stands in for (`providers.<name>.type`). */
export const SANDBOX_TYPES = ['sms-service', 'africastalking', 'http'] as const;
type SandboxType = (typeof SANDBOX_TYPES)[number];

interface SandboxCliOptions {
  readonly type: SandboxType;
  readonly username: string;
  readonly port: number;
  readonly host: string;
  readonly apiKey?: string;
  readonly balance: number;
  readonly rate: number;
  readonly currency: string;
  readonly senderIds: readonly string[];
  readonly defaultSenderId?: string;
}

/**
 * `sms-relay sandbox`: runs the sandbox SMS service in the foreground until SIGINT/SIGTERM.
 *
 * @example
 * // npx sms-relay sandbox --port 4010 --api-key dev-key --balance 500 --rate 25 --sender-ids ACME,ALERTS
 * program.addCommand(sandboxCommand());
 */
export function sandboxCommand(): Command {
  return new Command('sandbox')
    .description(
      'Run a local stand-in for an SMS provider: the bulk SMS service (GET /v1/account/balance, POST /v1/sms/send), ' +
        "Africa's Talking (--type africastalking: POST /version1/messaging, GET /version1/user) or a JSON " +
        `gateway (--type http: POST ${HTTP_GATEWAY_SEND_PATH}), with control endpoints under /_sandbox for tests. ` +
        'Prints its base URL on the first line.',
    )
    .addOption(
      new Option('--type <type>', 'the provider type to stand in for').choices(SANDBOX_TYPES).default('sms-service'),
    )
    .addOption(
      new Option('--username <name>', "africastalking: the account's username every request must name")
        .default(AT_SANDBOX_USERNAME)
        .argParser(parseNonEmpty),
    )
    .addOption(
      new Option('--port <port>', 'port to listen on; 0 picks a free one')
        .default(DEFAULT_CLI_PORT)
        .argParser(parsePort),
    )
    .addOption(
      new Option('--host <host>', 'interface to listen on').default(SANDBOX_DEFAULTS.host).argParser(parseNonEmpty),
    )
    .addOption(
      new Option(
        '--api-key <key>',
        'API key clients must send as X-API-Key (default: a random key, printed once at start-up)',
      )
        .env('SANDBOX_API_KEY')
        .argParser(parseNonEmpty),
    )
    .addOption(
      new Option('--balance <amount>', 'starting SMS balance').default(SANDBOX_DEFAULTS.balance).argParser(parseAmount),
    )
    .addOption(
      new Option('--rate <amount>', 'cost of one SMS to one recipient')
        .default(SANDBOX_DEFAULTS.rate)
        .argParser(parseAmount),
    )
    .addOption(
      new Option('--currency <code>', 'three-letter currency code')
        .default(SANDBOX_DEFAULTS.currency)
        .argParser(parseCurrency),
    )
    .addOption(
      new Option('--sender-ids <ids>', 'comma-separated approved sender IDs')
        .default([...SANDBOX_DEFAULTS.senderIds], SANDBOX_DEFAULTS.senderIds.join(','))
        .argParser(parseSenderIds),
    )
    .addOption(
      new Option(
        '--default-sender-id <id>',
        'sender ID used when a send omits senderId (default: first of --sender-ids)',
      ).argParser(parseNonEmpty),
    )
    .addHelpText(
      'after',
      `
Control endpoints (loopback only, no key; every --type): GET/DELETE /_sandbox/messages, GET /_sandbox/account,
POST /_sandbox/balance {"balance":n}, POST/DELETE /_sandbox/faults, POST/DELETE /_sandbox/outage,
GET/DELETE /_sandbox/requests.
A POST needs Content-Type: application/json; a foreign Origin or cross-site Sec-Fetch-Site is refused.

Examples:
  $ sms-relay sandbox --api-key dev-key --balance 500 --rate 25
  $ sms-relay sandbox --type africastalking --username acme --currency KES --rate 0.8 --port 4020
  $ sms-relay sandbox --type http --port 4030
  $ SANDBOX_API_KEY=test-key sms-relay sandbox --port 0 --sender-ids SMSRELAY,ALERTS,DUKA   # config/local.yaml's`,
    )
    .showHelpAfterError('(run "sms-relay sandbox --help" for usage)')
    .exitOverride((error) => {
      // Commander exits 1 on its own usage errors; scripts expect 2 for "you called me wrong". Help stays 0,
      // and errors this command raises itself (code 'sandbox.*') keep the exit code they chose.
      if (error.exitCode !== 0 && error.code.startsWith('commander.')) process.exit(USAGE_ERROR_EXIT_CODE);
    })
    .action(async (options: SandboxCliOptions, command: Command) => {
      await runSandbox(options, command);
    });
}

async function runSandbox(options: SandboxCliOptions, command: Command): Promise<void> {
  const keyWasGenerated = options.apiKey === undefined;
  const apiKey = options.apiKey ?? `sbx_${randomBytes(18).toString('base64url')}`;
  let sandbox: RunningSandbox;
  try {
    const common = {
      port: options.port,
      host: options.host,
      apiKey,
      balance: options.balance,
      rate: options.rate,
      currency: options.currency,
      senderIds: options.senderIds,
      onDelivered: (message: DeliveredMessage) => writeLine(describeDelivery(message, options.currency)),
    };
    sandbox =
      options.type === 'africastalking'
        ? await startAfricasTalkingSandbox({ ...common, username: options.username })
        : options.type === 'http'
          ? await startHttpGatewaySandbox({ ...common, defaultSenderId: options.defaultSenderId })
          : await startSandbox({ ...common, defaultSenderId: options.defaultSenderId });
  } catch (error) {
    const exitCode = error instanceof InvalidSandboxOptionsError ? USAGE_ERROR_EXIT_CODE : 1;
    command.error(`error: ${error instanceof Error ? error.message : String(error)}`, {
      exitCode,
      code: 'sandbox.start',
    });
  }

  writeLine(`Sandbox SMS service listening on ${sandbox.baseUrl}`);
  // The key is the sandbox's own and made up on the spot; showing it once is how the caller learns it.
  if (keyWasGenerated) writeLine(`API key (generated; send it as ${KEY_HEADER[options.type]}): ${apiKey}`);
  writeLine(describeType(options, sandbox.baseUrl));
  writeLine(describeAccount(options));
  writeLine(`Control endpoints under ${sandbox.baseUrl}/_sandbox — Ctrl+C stops.`);

  await new Promise<void>((resolve, reject) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      writeLine(`Received ${signal}, stopping the sandbox`);
      sandbox.close().then(() => {
        writeLine('Sandbox stopped');
        resolve();
      }, reject);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

const KEY_HEADER: Readonly<Record<SandboxType, string>> = {
  'sms-service': 'X-API-Key',
  africastalking: 'apiKey',
  http: 'X-API-Key',
};

/** What a config's provider entry needs to point at this sandbox. */
function describeType({ type, username }: SandboxCliOptions, baseUrl: string): string {
  if (type === 'africastalking') {
    return `Africa's Talking SMS API (username ${username}): providers.<name>: { type: africastalking, username: ${username}, baseUrl: ${baseUrl} }`;
  }
  if (type === 'http') {
    return `JSON gateway: providers.<name>: { type: http, url: ${baseUrl}${HTTP_GATEWAY_SEND_PATH}, headers: { X-API-Key: "{{ secret.<name>-key }}" }, body: '${HTTP_GATEWAY_BODY}' }`;
  }
  return `Bulk SMS service of docs/sms-service.md: provider: { baseUrl: ${baseUrl} }`;
}

function describeAccount({ type, balance, rate, currency, senderIds, defaultSenderId }: SandboxCliOptions): string {
  return (
    `Balance ${balance} ${currency}, ${rate} ${currency} per SMS per recipient, ` +
    `sender IDs ${senderIds.join(', ')} (default ${type === 'africastalking' ? AT_DEFAULT_SENDER : (defaultSenderId ?? senderIds[0] ?? '')})`
  );
}

function describeDelivery(message: DeliveredMessage, currency: string): string {
  const shown = message.phoneNumbers.slice(0, MAX_NUMBERS_PER_LINE).map(maskMsisdn).join(', ');
  const hidden = message.phoneNumbers.length - MAX_NUMBERS_PER_LINE;
  const to = hidden > 0 ? `${shown} (+${hidden} more)` : shown;
  return (
    `${message.at} sent ${message.message.length}-char SMS from ${message.senderId} to ${to}; ` +
    `deducted ${message.deducted} ${currency}, balance ${message.remainingBalance} ${currency}`
  );
}

function writeLine(line: string): void {
  process.stdout.write(`${line}\n`);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new InvalidArgumentError('Expected an integer from 0 to 65535 (0 picks a free port).');
  }
  return port;
}

function parseAmount(value: string): number {
  // Stricter than Number(): '1e3', '0x10', ' ' and '' are typos here, not amounts.
  if (!AMOUNT.test(value))
    throw new InvalidArgumentError('Expected a number ≥ 0 with at most 4 decimals, e.g. 1000 or 0.35.');
  return Number(value);
}

function parseCurrency(value: string): string {
  if (!CURRENCY_CODE.test(value))
    throw new InvalidArgumentError('Expected a three-letter upper-case code such as TZS.');
  return value;
}

function parseSenderIds(value: string): readonly string[] {
  const senderIds = value.split(',').map((senderId) => senderId.trim());
  if (senderIds.some((senderId) => senderId.length === 0)) {
    throw new InvalidArgumentError('Expected a comma-separated list of non-empty names, e.g. ACME,ALERTS.');
  }
  return senderIds;
}

function parseNonEmpty(value: string): string {
  if (value.trim().length === 0) throw new InvalidArgumentError('Expected a non-empty value.');
  return value;
}
