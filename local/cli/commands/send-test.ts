import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfigFile } from '../../../functions/core/config/load';
import { maskNumbersInText } from '../../../functions/core/recipients';
import { findRunningRuntime } from '../../shared/discovery';
import { fixtureHeaders } from '../../shared/fixture-headers';
import { readExistingSecrets } from '../../runtime/secrets';
import { signWebhook } from '../../runtime/signers';
import { displayPath, localPath, parsePort, RUNTIME_DEFAULTS } from '../../shared/settings';
import { CliError, RuntimeError } from '../../shared/errors';
import { fail } from '../output';

/** `send-test`'s options, as its flags give them. */
export interface SendTestOptions {
  readonly route: string;
  readonly payload: string;
  readonly url?: string;
  readonly config?: string;
  readonly secrets?: string;
  readonly header: readonly [string, string][];
  readonly query: readonly [string, string][];
}

/**
 * `sms-relay send-test`: signs a payload file the way the route's source signs its webhooks, with
 * the route's secret from the local secrets file, and posts it to the relay.
 *
 * @example
 * // npx sms-relay send-test --route github --payload examples/github/ping.json   (X-GitHub-Event: ping, from the name)
 * program.addCommand(sendTestCommand());
 */
export function sendTestCommand(): Command {
  return new Command('send-test')
    .description(
      "Post a payload file to a route, signed as the route's source would sign it, and print the relay's answer",
    )
    .requiredOption('--route <id>', 'route id from the config, e.g. github')
    .requiredOption('--payload <file>', 'body to send, byte for byte (e.g. examples/github/push.json)')
    .addOption(
      new Option(
        '--url <base>',
        `relay base URL (default: the running local relay, else http://127.0.0.1:$PORT, PORT default ${RUNTIME_DEFAULTS.port})`,
      ),
    )
    .addOption(new Option('--config <file>', `relay config (env RELAY_CONFIG, default ${RUNTIME_DEFAULTS.configPath})`))
    .addOption(
      new Option(
        '--secrets <file>',
        `local secrets JSON (env RELAY_SECRETS_FILE, default ${RUNTIME_DEFAULTS.secretsPath})`,
      ),
    )
    .addOption(
      new Option(
        '--header <header>',
        "extra header 'Name: value', repeatable; overrides a generated one (e.g. 'X-GitHub-Event: issues')",
      )
        .argParser(collectHeader)
        .default([]),
    )
    .addOption(
      new Option(
        '--query <parameter>',
        "query parameter 'name=value' for the route's URL, repeatable (e.g. 'to=255712345678' for a goalert route's {{ query.to }})",
      )
        .argParser(collectQuery)
        .default([]),
    )
    .addHelpText(
      'after',
      `
Signatures: GitHub X-Hub-Signature-256 (+ X-GitHub-Event, default push, and a new X-GitHub-Delivery);
Shopify X-Shopify-Hmac-Sha256; WooCommerce X-WC-Webhook-Signature; Stripe Stripe-Signature t=…,v1=…;
Standard Webhooks webhook-id/-timestamp/-signature; Alertmanager, Grafana, generic, GoAlert, Grafana
OnCall: Authorization: Bearer (a GoAlert route with publicKey cannot be signed here); Opsgenie:
Authorization: GenieKey, posted to the route's /v2/alerts as Opsgenie's integrations post a create;
hmac: the route's own signature settings (header, algorithm, encoding, prefix, signed, timestamp, dedupe).
Svix names: give --header 'svix-id: msg_1' for svix-id/-timestamp/-signature instead of webhook-*.
SNS: only AWS can sign; the file's own SNS signature is sent with SNS's headers and a Bearer token
(a genuine message captured within the last hour is accepted, a hand-written one is refused 401).
An example payload in a directory named after its source (examples/github/ping.json) also gets
the event its file name says, as the console's Templates page does: X-GitHub-Event (ping),
Sentry-Hook-Resource, X-Shopify-Topic (orders-create: orders/create), X-WC-Webhook-Topic.
Exits 1 when the relay answers anything but 2xx, and 3 when it answers duplicate (nothing sent).

Examples:
  $ npx sms-relay send-test --route notify --payload examples/generic/backup-failed.json
  $ npx sms-relay send-test --route payments --payload examples/stripe/payment_intent.succeeded.json
  $ npx sms-relay send-test --route goalert --payload examples/goalert/alert.json --query to=0712345678
  $ npx sms-relay send-test --route og --payload examples/opsgenie/alertmanager-create.json`,
    )
    .action(async (options: SendTestOptions) => {
      try {
        process.exitCode = await runSendTest(options, (text) => process.stdout.write(text));
      } catch (error) {
        fail(error);
      }
    });
}

/**
 * What the command does once its flags are read: signs and posts the payload, writes what the
 * command prints to `write`, and resolves to its exit code (0, or one of {@link SEND_TEST_EXIT});
 * a {@link CliError} or {@link RuntimeError} when it cannot post. Exported so that tests can check
 * many payloads in one process; the command's own wiring is tested through its process.
 */
export async function runSendTest(options: SendTestOptions, write: (text: string) => void): Promise<number> {
  const configPath = localPath('config', options.config);
  const secretsPath = localPath('secrets', options.secrets);
  const loaded = loadConfigFile(configPath);
  const route = loaded.routes.get(options.route);
  if (route === undefined)
    throw new CliError(
      `no route "${options.route}" in ${displayPath(configPath)}; routes: ${[...loaded.routes.keys()].join(', ')}`,
    );
  const secret = readExistingSecrets(secretsPath)[route.config.secret];
  if (secret === undefined)
    throw new CliError(
      `${displayPath(secretsPath)} has no value named "${route.config.secret}" (route ${route.id}); "npm start" adds missing ones`,
    );

  let body: Buffer;
  try {
    body = readFileSync(options.payload);
  } catch (error) {
    throw new CliError(`cannot read payload ${options.payload} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: error,
    });
  }
  // An example payload's name says its event, as in the console (github/ping.json is a ping); --header wins.
  const given = Object.fromEntries(options.header);
  const inferred = Object.entries(fixtureHeaders(route.pack.name, options.payload)).filter(
    ([name]) => !Object.keys(given).some((key) => key.toLowerCase() === name),
  );
  const headers = signWebhook(route.pack.name, {
    body,
    secret,
    headers: { ...Object.fromEntries(inferred), ...given },
    route: route.config,
  });
  const query = options.query.length === 0 ? '' : `?${new URLSearchParams([...options.query]).toString()}`;
  // A source whose sender posts below the route's URL (Opsgenie's v2/alerts) is posted there, as its sender posts.
  const path = route.pack.createPath === undefined ? '' : `/${route.pack.createPath}`;
  const target = `${(options.url ?? (await defaultUrl())).replace(/\/+$/, '')}/hooks/${encodeURIComponent(route.id)}${path}${query}`;

  const named = inferred.map(([name, value]) => `, ${name}: ${value} from the file name`).join('');
  // The URL can name a person's number (?to=): masked like every number the CLI prints.
  write(
    `POST ${maskNumbersInText(target)}  (${route.pack.name}, signed with "${route.config.secret}" from ${displayPath(secretsPath)}${named})\n`,
  );
  let response: Response;
  try {
    response = await fetch(target, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    throw new RuntimeError(`cannot reach the relay at ${target} (${causeOf(error)}); is "npm start" running?`, {
      cause: error,
    });
  }
  const text = await response.text();
  write(`${response.status} ${response.statusText}\n${maskNumbersInText(pretty(text))}\n`);
  if (!response.ok) return SEND_TEST_EXIT.Refused;
  if (statusOf(text) !== 'duplicate') return 0;
  // A 200 the sender is meant to read as "done": the person trying a payload must not.
  write(
    'duplicate: the relay had already accepted this delivery, so nothing was sent this time. Send another by changing what its source dedupes on (a delivery id header, the payload).\n',
  );
  return SEND_TEST_EXIT.Duplicate;
}

/** `send-test`'s exit codes besides 0 (accepted, filtered, a ping: what the relay did is in its answer). */
export const SEND_TEST_EXIT = {
  /** The relay refused the webhook (a non-2xx answer). */
  Refused: 1,
  /** The relay answered 200 `duplicate`: it had accepted this delivery before and sent nothing now. */
  Duplicate: 3,
} as const;

function statusOf(text: string): unknown {
  try {
    return (JSON.parse(text) as { status?: unknown }).status;
  } catch {
    return undefined;
  }
}

async function defaultUrl(): Promise<string> {
  const port = process.env['PORT'];
  if (port !== undefined && port.trim() !== '' && port.trim() !== '0')
    return `http://${RUNTIME_DEFAULTS.host}:${parsePort(port)}`;
  // PORT=0 or unset: a running relay says where it listens.
  const running = await findRunningRuntime(localPath('dataDir', undefined));
  return running?.url ?? `http://${RUNTIME_DEFAULTS.host}:${RUNTIME_DEFAULTS.port}`;
}

function collectHeader(value: string, previous: readonly [string, string][]): [string, string][] {
  const colon = value.indexOf(':');
  const name = colon < 0 ? '' : value.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~\w-]+$/.test(name)) throw new InvalidArgumentError("Expected 'Name: value'.");
  return [...previous, [name, value.slice(colon + 1).trim()]];
}

function collectQuery(value: string, previous: readonly [string, string][]): [string, string][] {
  const equals = value.indexOf('=');
  if (equals < 1) throw new InvalidArgumentError("Expected 'name=value'.");
  return [...previous, [value.slice(0, equals).trim(), value.slice(equals + 1).trim()]];
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
