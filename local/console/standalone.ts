import type { Server, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loadConfig, readConfigText, type LoadedConfig } from '../../functions/core/config/load';
import { readYaml } from '../../functions/core/config/parse';
import { createStore, type MessageStore } from '../../functions/store';
import { findRunningRuntime } from '../shared/discovery';
import { createGuardedServer, requestPath, sendJson } from '../http';
import { openLocalStore, undecodableToStderr, type LocalStore } from '../shared/local-store';
import { checkAwsAccess, findStackTable } from '../shared/aws';
import { listen } from '../shared/listen';
import { createStoreApi, type ConsoleApi } from './api';
import { createConsoleAccess } from './access';
import { CONSOLE_PATH, createConsoleHandler, isConsolePath } from './http';
import type { ConsoleSource } from './source';

/** `sms-relay console --port`, default. */
export const CONSOLE_PORT = 3400;
/** Example payloads offered by the template playground: the senders' payloads the tests use. */
export const FIXTURES_DIR = fileURLToPath(new URL('../../examples', import.meta.url));

/**
 * The routes as written in the config file, for "copy as YAML": no defaults filled in.
 *
 * @example
 * ```ts
 * rawRoutesOf(readConfigText('config/local.yaml')).alerts?.source; // 'alertmanager'
 * ```
 */
export function rawRoutesOf(configText: string): Record<string, Record<string, unknown>> {
  const routes = (readYaml(configText) as { routes?: Record<string, Record<string, unknown>> } | null)?.routes;
  return routes ?? {};
}

export interface ConsoleOptions {
  /** @default 3400 */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
  readonly configPath: string;
  /** Without it, the local store; with it, the deployed stack `SmsRelay-<environment>`. */
  readonly environment?: string;
  /** Local: the runtime's `RELAY_DATA_DIR`. */
  readonly dataDir: string;
  readonly tableName: string;
  /** Local: where the runtime would listen, for the webhook URLs when none is running. */
  readonly runtimePort: number;
  /** With `environment`: the table's name; found by the stack's name prefix otherwise. */
  readonly table?: string;
  /** With `environment`: the stack's AWS region; the SDK's (AWS_REGION, the profile's) otherwise. */
  readonly region?: string;
  readonly onError?: (error: unknown) => void;
  /** Told when a one-time link was used, with a fresh one for the next browser (for the terminal). */
  readonly onSignIn?: (nextLink: string) => void;
}

export interface RunningConsole {
  /** `http://127.0.0.1:3400/console` */
  readonly url: string;
  /** A one-time link that signs a browser in (`…/console/?token=…`); each call makes a new one. */
  newLink(): string;
  readonly server: Server;
  close(): Promise<void>;
}

/**
 * `sms-relay console`: the console on its own port. Locally it asks the running runtime when there
 * is one (its store is locked to it), else opens the local store for the length of each request,
 * so `npm start` can start at any time; with `environment` it reads the deployed table with the
 * caller's AWS credentials.
 *
 * @throws {PortInUseError} the port is taken
 *
 * @example
 * ```ts
 * const running = await startConsole({ configPath, dataDir, tableName: 'sms-relay', runtimePort: 3000 });
 * console.log(`Console: ${running.url}`);
 * ```
 */
export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const { port = CONSOLE_PORT, host = '127.0.0.1', configPath, environment, onError, onSignIn } = options;
  const configText = readConfigText(configPath);
  const loaded = loadConfig(configText, configPath);
  const rawRoutes = rawRoutesOf(configText);
  const access = createConsoleAccess();
  let api: ConsoleApi;
  let closeSource: () => Promise<void> = async () => undefined;
  if (environment === undefined) {
    api = localApi(options, loaded, rawRoutes);
  } else {
    const client = new DynamoDBClient(options.region === undefined ? {} : { region: options.region });
    let tableName: string;
    try {
      const region = await checkAwsAccess(client, environment);
      tableName = options.table ?? (await findStackTable(environment, { region }));
    } catch (error) {
      client.destroy();
      throw error;
    }
    const store = createStore({ client, tableName, onUndecodable: undecodableToStderr() });
    api = createStoreApi({
      description: `table ${tableName} (${environment})`,
      environment,
      loaded,
      rawRoutes,
      // The API's URL is a stack output (WebhookUrl); the page shows the path to append to it.
      webhookBase: undefined,
      fixturesDir: FIXTURES_DIR,
      withStore: async (use) => await use(store),
    });
    closeSource = async () => client.destroy();
  }
  let base = '';
  const handle = createConsoleHandler({
    access,
    api,
    onSignIn: () => onSignIn?.(access.newLink(base)),
    ...(onError === undefined ? {} : { onError }),
  });
  const server = createGuardedServer((request, response) => {
    const path = requestPath(request.url);
    const answer = isConsolePath(path)
      ? handle(request, response, path)
      : Promise.resolve(path === '/' ? redirect(response) : notFound(response, path));
    answer.catch((error: unknown) => {
      onError?.(error);
      if (!response.headersSent) response.writeHead(500).end();
      else response.destroy();
    });
  });
  const bound = await listen(server, port, host);
  base = `http://${host}:${bound}`;
  return {
    url: `${base}${CONSOLE_PATH}`,
    newLink: () => access.newLink(base),
    server,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await closeSource();
    },
  };
}

function localApi(options: ConsoleOptions, loaded: LoadedConfig, rawRoutes: ConsoleSource['rawRoutes']): ConsoleApi {
  const lease = storeLease(() => openLocalStore({ dataDir: options.dataDir, tableName: options.tableName }));
  const storeApi = createStoreApi({
    description: `local store ${options.dataDir} (no relay running)`,
    environment: 'local',
    loaded,
    rawRoutes,
    webhookBase: `http://127.0.0.1:${options.runtimePort}`,
    fixturesDir: FIXTURES_DIR,
    withStore: lease,
  });
  return async (request) => {
    const running = await findRunningRuntime(options.dataDir);
    if (running?.consoleSecret === undefined) return await storeApi(request);
    return await forward(running.url, running.consoleSecret, request);
  };
}

/**
 * Asks the running runtime's console API, which holds the store, with the forwarding secret of its
 * runtime.json (the user's alone): a secret of its own, never a browser's session cookie.
 */
async function forward(
  url: string,
  secret: string,
  { method, path, query, body }: Parameters<ConsoleApi>[0],
): ReturnType<ConsoleApi> {
  const search = query.toString();
  const response = await fetch(`${url}${CONSOLE_PATH}/api${path}${search === '' ? '' : `?${search}`}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(60_000),
  });
  return {
    status: response.status,
    body: await response.json().catch(() => ({ error: `the running relay answered ${response.status}` })),
  };
}

/**
 * Opens the local store while requests need it and closes it when the last one is done: LevelDB
 * admits one process, and the runtime must be able to take the store between two requests.
 */
function storeLease(open: () => Promise<LocalStore>): <T>(use: (store: MessageStore) => Promise<T>) => Promise<T> {
  let current: Promise<LocalStore> | undefined;
  // A store being closed still holds LevelDB's lock: the next open waits for it.
  let closing: Promise<void> = Promise.resolve();
  let users = 0;
  return async (use) => {
    users += 1;
    const opening = (current ??= closing.then(open));
    try {
      return await use((await opening).store);
    } finally {
      users -= 1;
      if (users === 0 && current === opening) {
        current = undefined;
        closing = opening.then(
          async (local) => await local.close(),
          () => undefined,
        );
        await closing;
      }
    }
  };
}

function redirect(response: ServerResponse): void {
  response.writeHead(302, { location: CONSOLE_PATH, 'content-length': 0 }).end();
}

function notFound(response: ServerResponse, path: string): void {
  sendJson(response, 404, { error: `not found: ${path}; the console is at ${CONSOLE_PATH}` });
}
