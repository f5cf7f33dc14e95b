import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  Context,
  DynamoDBBatchResponse,
  DynamoDBStreamEvent,
  ScheduledEvent,
} from 'aws-lambda';
import { HandlerLoadError } from './errors';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-store';
import { HANDLER_TUNING_VARIABLES, type RuntimeSettings } from './settings';

/** The deployed functions' time-outs (infra), reported to handlers as their remaining time. */
export const HANDLER_TIMEOUT_MS = {
  ingest: 10_000,
  sender: 60_000,
  sweeper: 55_000,
  'balance-watch': 30_000,
} as const;

type AsyncHandler<TEvent, TResult> = (event: TEvent, context: Context) => Promise<TResult>;

/** The four Lambda handlers, called in-process exactly as AWS would call them. */
export interface RelayHandlers {
  readonly ingest: AsyncHandler<APIGatewayProxyEventV2, APIGatewayProxyResultV2>;
  readonly sender: AsyncHandler<DynamoDBStreamEvent, DynamoDBBatchResponse | void>;
  readonly sweeper: AsyncHandler<ScheduledEvent, unknown>;
  readonly balanceWatch: AsyncHandler<ScheduledEvent, unknown>;
}

export interface HandlerEnvironmentInput {
  readonly settings: RuntimeSettings;
  readonly dynamodbEndpoint: string;
  /** The SMS service the handlers call: the sandbox's URL or `PROVIDER_BASE_URL`. */
  readonly providerBaseUrl: string;
}

/**
 * The environment the handlers read at their first invocation, as on AWS but pointing at local
 * things: the dynalite endpoint, the secrets file instead of Secrets Manager, the provider URL.
 * Fixed local credentials replace any real ones: these handlers only ever talk to dynalite.
 *
 * @example
 * ```ts
 * Object.assign(process.env, handlerEnvironment({ settings, dynamodbEndpoint: local.endpoint, providerBaseUrl: sandbox.baseUrl }));
 * ```
 */
export function handlerEnvironment({ settings, dynamodbEndpoint, providerBaseUrl }: HandlerEnvironmentInput): Record<string, string> {
  return {
    RELAY_CONFIG: settings.configPath,
    TABLE_NAME: settings.tableName,
    DYNAMODB_ENDPOINT: dynamodbEndpoint,
    RELAY_SECRETS_FILE: settings.secretsPath,
    PROVIDER_BASE_URL: providerBaseUrl,
    ...(settings.providerApiKey === undefined ? {} : { PROVIDER_API_KEY: settings.providerApiKey }),
    MAX_BODY_BYTES: String(settings.maxBodyBytes),
    // The runtime feeds the sender directly after each 202, so the sweeper may take any due record at once.
    SWEEP_PENDING_GRACE_MS: '0',
    AWS_REGION: LOCAL_REGION,
    AWS_DEFAULT_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    POWERTOOLS_SERVICE_NAME: 'sms-relay',
    POWERTOOLS_METRICS_NAMESPACE: 'SmsRelay/local',
    POWERTOOLS_METRICS_DISABLED: 'true',
    ...Object.fromEntries(HANDLER_TUNING_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : []))),
  };
}

/**
 * Imports the handler modules from `functions/handlers/`. Call it after the environment is set:
 * handlers may read it as they load.
 *
 * @throws {HandlerLoadError} a module is missing, fails to load, or exports no `handler` function
 *
 * @example
 * ```ts
 * const handlers = await loadHandlers();
 * const answer = await handlers.ingest(event, lambdaContext('ingest', HANDLER_TIMEOUT_MS.ingest));
 * ```
 */
export async function loadHandlers(): Promise<RelayHandlers> {
  // Literal specifiers, so the type checker and tsx both see the real modules.
  const [ingest, sender, sweeper, balanceWatch] = await Promise.all([
    load('ingest', () => import('../../functions/handlers/ingest')),
    load('sender', () => import('../../functions/handlers/sender')),
    load('sweeper', () => import('../../functions/handlers/sweeper')),
    load('balance-watch', () => import('../../functions/handlers/balance-watch')),
  ]);
  return {
    ingest: ingest as RelayHandlers['ingest'],
    sender: sender as RelayHandlers['sender'],
    sweeper: sweeper as RelayHandlers['sweeper'],
    balanceWatch: balanceWatch as RelayHandlers['balanceWatch'],
  };
}

async function load(name: string, importer: () => Promise<{ readonly handler?: unknown }>): Promise<AsyncHandler<never, unknown>> {
  let module: { readonly handler?: unknown };
  try {
    module = await importer();
  } catch (error) {
    throw new HandlerLoadError(name, `could not be loaded: ${(error as Error).message}`, { cause: error });
  }
  const handler = module.handler;
  if (typeof handler !== 'function') throw new HandlerLoadError(name, 'exports no "handler" function');
  // Whatever the declared signature (a middy wrapper, a Powertools-decorated class method), AWS calls it with (event, context).
  return async (event: never, context: Context) => await (handler as (event: unknown, context: Context) => unknown)(event, context);
}
