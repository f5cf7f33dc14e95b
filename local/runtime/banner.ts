/** What the start-up banner shows. Paths are as a person would type them. */
export interface BannerInfo {
  readonly url: string;
  /** The console's one-time sign-in link (`…/console/?token=…`). */
  readonly consoleLink: string;
  readonly routes: readonly { readonly id: string; readonly source: string }[];
  /** The in-process sandbox's base URL; absent when PROVIDER_BASE_URL is used. */
  readonly sandboxUrl: string | undefined;
  /**
   * Every provider's sandbox when the config has several (each its own inbox and controls); with
   * one, `sandboxUrl` alone is shown as before.
   */
  readonly providerSandboxes?: readonly { readonly name: string; readonly type: string; readonly url: string }[];
  /** The sandbox account, e.g. `10000 TZS, 20 TZS per SMS`. */
  readonly sandboxAccount?: string;
  readonly providerBaseUrl: string;
  readonly configPath: string;
  readonly secretsPath: string;
  readonly secretsCreated: boolean;
  readonly secretsAdded: readonly string[];
  readonly dataDir: string;
  readonly balanceSchedule: string;
  /**
   * A generic route and the name of its token in the secrets file, for the example request. The
   * command reads the token from the file when it runs, so the banner never prints a secret.
   */
  readonly example: { readonly route: string; readonly secretName: string; readonly secretsFile: string } | undefined;
  /** A signed route and one of its source's example payloads (a path as typed), for the `send-test` line. */
  readonly signedExample?: { readonly route: string; readonly payload: string };
}

/** The example webhook body; the `notify` route of config/local.yaml sends it to its own recipient. */
export const EXAMPLE_BODY = '{"message":"Hello from sms-relay"}';

/** A shell expression that prints one value of a JSON secrets file (no secret in the banner). */
export function secretLookup(secretsFile: string, name: string): string {
  return `$(node -p 'require(process.argv[1])[process.argv[2]]' '${secretsFile}' '${name}')`;
}

/**
 * The start-up banner: where to post webhooks, where the SMS land, where the secrets are, and a
 * request to copy that produces an SMS. The request reads the route's token from the secrets file
 * as it runs: start-up output ends up in terminals' scrollback and CI logs, so it shows no secret
 * and no phone number.
 *
 * @example
 * ```ts
 * terminal.printVerbatim(renderBanner(info));
 * ```
 */
export function renderBanner(info: BannerInfo): string {
  const routes = info.routes.map((route) => `${route.id} (${route.source})`).join(', ');
  const lines = [
    '',
    'sms-relay is running',
    '',
    `  Webhooks   ${info.url}/hooks/<route>`,
    `             routes: ${routes}`,
    `  Console    ${info.consoleLink}`,
    `             one-time link: it signs one browser in (a cookie); the next link is printed when it is used`,
    `  Health     ${info.url}/health`,
    ...smsLines(info),
    `  Config     ${info.configPath}`,
    `  Secrets    ${info.secretsPath}${secretsNote(info)}`,
    `  Store      ${info.dataDir} (dynalite on disk: records survive a restart)`,
    `  Balance    checked now and ${info.balanceSchedule}`,
    '',
  ];
  if (info.example !== undefined) {
    lines.push(
      `Send an SMS through route "${info.example.route}":`,
      `  curl -sS -X POST ${info.url}/hooks/${info.example.route} \\`,
      `    -H "Authorization: Bearer ${secretLookup(info.example.secretsFile, info.example.secretName)}" \\`,
      `    -H 'Content-Type: application/json' \\`,
      `    -d '${EXAMPLE_BODY}'`,
      '',
    );
  }
  const signed = info.routes.find((route) => route.source !== 'generic') ?? info.routes[0];
  if (info.signedExample !== undefined) {
    lines.push(
      `Sign a payload as its source would: npx sms-relay send-test --route ${info.signedExample.route} --payload ${info.signedExample.payload}`,
    );
  } else if (signed !== undefined) {
    lines.push(`Sign a payload as its source would: npx sms-relay send-test --route ${signed.id} --payload <file>`);
  }
  lines.push(
    'Records: npx sms-relay logs (or the console)    Re-send parked: npx sms-relay redrive    Stop: Ctrl-C',
    '',
  );
  return lines.join('\n');
}

function smsLines(info: BannerInfo): string[] {
  if (info.sandboxUrl === undefined) return [`  SMS        ${info.providerBaseUrl} (PROVIDER_BASE_URL)`];
  const account = info.sandboxAccount === undefined ? '' : ` (${info.sandboxAccount})`;
  const sandboxes = info.providerSandboxes ?? [];
  if (sandboxes.length <= 1) {
    return [
      `  SMS        sandbox SMS service at ${info.sandboxUrl}${account}; set PROVIDER_BASE_URL to use another`,
      `  Inbox      ${info.sandboxUrl}/_sandbox/messages`,
    ];
  }
  const width = Math.max(...sandboxes.map(({ name, type }) => `${name} (${type})`.length));
  return [
    `  SMS        a sandbox per provider${account}; set PROVIDER_BASE_URL to send the first through another`,
    ...sandboxes.map(
      ({ name, type, url }) =>
        `             ${`${name} (${type})`.padEnd(width)}  ${url}  inbox ${url}/_sandbox/messages`,
    ),
  ];
}

function secretsNote({ secretsCreated, secretsAdded }: BannerInfo): string {
  if (secretsCreated) return ' (created now with random values, mode 0600)';
  if (secretsAdded.length > 0) return ` (added random values for: ${secretsAdded.join(', ')})`;
  return '';
}
