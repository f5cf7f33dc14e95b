import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { loadConfigFile } from '../../../functions/core/config/load';
import { looksFormEncoded, previewEvaluation, type PreviewResult } from '../../shared/preview';
import { readSecretsFile } from '../../shared/secrets-file';
import { CliError } from '../../shared/errors';
import { fail } from '../output';

/**
 * `sms-relay preview`: shows, as one JSON object, what a payload would become on a route, without
 * sending or storing anything.
 */
export function previewCommand(): Command {
  return new Command('preview')
    .description('Render a payload through a route and print the SMS it would produce (nothing is sent)')
    .requiredOption('--config <file>', 'config file, e.g. config/local.yaml')
    .requiredOption('--route <id>', 'route id in the config')
    .requiredOption('--payload <file>', 'webhook body as the sender would post it')
    .option(
      '--header <header>',
      "request header 'Name: value' (repeatable)",
      collectHeader,
      {} as Record<string, string>,
    )
    .option(
      '--query <parameter>',
      "query parameter 'name=value' of the route's URL, repeatable (e.g. 'to=0712345678' for a goalert route's {{ query.to }})",
      collectQuery,
      {} as Record<string, string>,
    )
    .option('--secrets <file>', 'JSON secrets file; when given, the payload must be authenticated like a real delivery')
    .action((options: PreviewOptions) => {
      try {
        process.stdout.write(`${JSON.stringify(preview(options), null, 2)}\n`);
      } catch (error) {
        fail(error);
      }
    });
}

interface PreviewOptions {
  readonly config: string;
  readonly route: string;
  readonly payload: string;
  readonly header: Record<string, string>;
  readonly query?: Record<string, string>;
  readonly secrets?: string;
}

export function preview({
  config: configPath,
  route: routeId,
  payload,
  header,
  query = {},
  secrets,
}: PreviewOptions): PreviewResult {
  const loaded = loadConfigFile(configPath);
  const route = loaded.routes.get(routeId);
  if (route === undefined)
    throw new CliError(`route "${routeId}" is not in ${configPath} (routes: ${[...loaded.routes.keys()].join(', ')})`);

  const body = readPayload(payload);
  const headers = { ...header };
  headers['content-type'] ??= looksFormEncoded(body) ? 'application/x-www-form-urlencoded' : 'application/json';

  let secret: string | undefined;
  if (secrets !== undefined) {
    secret = readSecretsFile(secrets)[route.config.secret];
    if (secret === undefined)
      throw new CliError(`${secrets} has no value named "${route.config.secret}" (the secret of route "${routeId}")`);
  }

  return previewEvaluation(route, body, headers, secret, query);
}

function readPayload(path: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new CliError(`cannot read payload ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: error,
    });
  }
}

function collectHeader(value: string, headers: Record<string, string>): Record<string, string> {
  const colon = value.indexOf(':');
  if (colon <= 0) throw new CliError(`--header must look like 'Name: value', got "${value}"`);
  return { ...headers, [value.slice(0, colon).trim().toLowerCase()]: value.slice(colon + 1).trim() };
}

function collectQuery(value: string, query: Record<string, string>): Record<string, string> {
  const equals = value.indexOf('=');
  if (equals < 1) throw new CliError(`--query must look like 'name=value', got "${value}"`);
  return { ...query, [value.slice(0, equals).trim()]: value.slice(equals + 1).trim() };
}
