import { resolve } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { loadConfigFile, type LoadedConfig } from '../../functions/core/config/load';
import { SANDBOX_DEFAULTS } from '../sandbox/options';
import { startSandbox } from '../sandbox/server';
import type { RunningSandbox } from '../sandbox/types';
import { DEFAULT_RETRY_POLICY, staleSendingProblem } from '../../functions/relay/ports';
import { renderBanner } from './banner';
import { InvalidSettingError } from './errors';
import { announceRuntime, withdrawRuntime } from './discovery';
import { lambdaContext, scheduledEvent } from './events';
import { HANDLER_TIMEOUT_MS, handlerEnvironment, loadHandlers } from './handlers';
import { openLocalStore, LOCAL_REGION, type LocalStore } from './local-store';
import { createRedactor, formatLogEntry, formatWebhook, parseLogLine } from './log-format';
import { localSchedule, repeat, type Repeating } from './schedule';
import { ensureSecretsFile, PROVIDER_API_KEY_NAME } from './secrets';
import { createRelayServer, type HealthReport } from './server';
import { displayPath, RUNTIME_DEFAULTS, type RuntimeSettings } from './settings';
import { StreamFeeder } from './stream';
import { createTerminal, type Terminal } from './terminal';

/** The deployed default when a config has no `balance.schedule` (infra `DEFAULT_BALANCE_SCHEDULE`). */
const DEFAULT_BALANCE_SCHEDULE = 'rate(1 hour)';

export interface RuntimeOptions {
  /**
   * Show every handler log line, not only sends, balances and warnings.
   * @default false
   */
  readonly verbose?: boolean;
}

export interface RunningRuntime {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly providerBaseUrl: string;
  readonly sandbox: RunningSandbox | undefined;
  /** Resolves once the runtime has stopped (after `stop`). */
  readonly stopped: Promise<void>;
  /**
   * Stops accepting webhooks, lets sends in flight finish (bounded by the shutdown time-out),
   * then closes the sandbox and the store. Idempotent.
   */
  stop(): Promise<void>;
}

/**
 * Runs the relay on this machine with the same four handlers as on AWS: an HTTP server in place
 * of API Gateway, dynalite on disk in place of DynamoDB, a stream emulation feeding the sender,
 * timers in place of the EventBridge schedules, and the sandbox SMS service unless
 * `PROVIDER_BASE_URL` names another. Check order: config, secrets, port, store — the cheap,
 * likely mistakes fail first and leave nothing behind.
 *
 * @throws {ConfigError} the config is invalid
 * @throws {SecretsFileError} the secrets file is unreadable or invalid
 * @throws {PortInUseError} the port is taken
 * @throws {DataDirLockedError} another process holds the store
 *
 * @example
 * ```ts
 * const runtime = await startRuntime(resolveRuntimeSettings({}, process.env));
 * process.once('SIGINT', () => void runtime.stop());
 * await runtime.stopped;
 * ```
 */
export async function startRuntime(settings: RuntimeSettings, { verbose = false }: RuntimeOptions = {}): Promise<RunningRuntime> {
  const loaded = loadConfigFile(settings.configPath);
  const staleSendingMs = Number(process.env['STALE_SENDING_MS'] || DEFAULT_RETRY_POLICY.staleSendingMs);
  const stale = staleSendingProblem(staleSendingMs, loaded.config.provider.timeoutMs);
  if (stale !== undefined) throw new InvalidSettingError('STALE_SENDING_MS', stale.replace(/^STALE_SENDING_MS \((\d+)\) /, '$1 '));
  const balanceSchedule = localSchedule(loaded.config.balance?.schedule ?? DEFAULT_BALANCE_SCHEDULE);
  const secrets = ensureSecretsFile(settings.secretsPath, loaded);
  const providerApiKey = settings.providerApiKey ?? secrets.values[PROVIDER_API_KEY_NAME]!;
  const terminal = createTerminal({ redact: createRedactor([...Object.values(secrets.values), providerApiKey]) });

  const cleanup: { readonly name: string; readonly run: () => Promise<void> }[] = [];
  const unwind = async ({ keepStore = false } = {}): Promise<void> => {
    for (const step of cleanup.reverse()) {
      // dynalite throws (uncaught) at requests that arrive after it closed; a handler still running
      // would bring the process down. Its writes are on disk already, so exiting without closing loses nothing.
      if (keepStore && step.name === 'store') continue;
      await step.run().catch(() => undefined);
    }
  };
  try {
    const relay = createRelayServer();
    const port = await relay.listen(settings.port, settings.host);
    cleanup.push({ name: 'server', run: () => relay.close() });
    const url = `http://${settings.host}:${port}`;

    const local = await openLocalStore({ dataDir: settings.dataDir, tableName: settings.tableName });
    cleanup.push({ name: 'store', run: () => local.close() });

    const sandbox = settings.providerBaseUrl === undefined ? await startLocalSandbox(loaded, providerApiKey) : undefined;
    if (sandbox !== undefined) cleanup.push({ name: 'sandbox', run: () => sandbox.close() });
    const providerBaseUrl = settings.providerBaseUrl ?? sandbox!.baseUrl;

    Object.assign(process.env, handlerEnvironment({ settings, dynamodbEndpoint: local.endpoint, providerBaseUrl }));
    terminal.capture((line, stream) => printCaptured(terminal, line, stream, settings.jsonLogs, verbose));
    cleanup.push({ name: 'terminal', run: async () => terminal.restore() });
    const handlers = await loadHandlers();

    const problem = (message: string, error?: unknown): void => terminal.printError(`${clockNow()}  error    ${message}${describeError(error)}`);
    const feeder = new StreamFeeder({
      client: local.client,
      source: { tableName: settings.tableName, region: LOCAL_REGION, label: new Date().toISOString().slice(0, 23) },
      sender: handlers.sender,
      onProblem: problem,
    });
    const startedAt = new Date().toISOString();
    relay.attach({
      maxBodyBytes: settings.maxBodyBytes,
      ingest: async (event) => await handlers.ingest(event, lambdaContext('ingest', HANDLER_TIMEOUT_MS.ingest)),
      onAccepted: (ids) => feeder.feed(ids),
      onWebhook: (report) => terminal.print(formatWebhook(report)),
      onError: problem,
      health: async () => await health({ local, settings, providerBaseUrl, sandbox, loaded, startedAt }),
      store: local.store,
    });

    const timers: Repeating[] = [
      repeat(async () => void (await handlers.sweeper(scheduledEvent('SweepSchedule', LOCAL_REGION), lambdaContext('sweeper', HANDLER_TIMEOUT_MS.sweeper))), {
        intervalMs: settings.sweepIntervalMs,
        immediately: true,
        onError: (error) => problem('the sweeper failed', error),
      }),
      repeat(
        async () => void (await handlers.balanceWatch(scheduledEvent('BalanceSchedule', LOCAL_REGION), lambdaContext('balance-watch', HANDLER_TIMEOUT_MS['balance-watch']))),
        { intervalMs: balanceSchedule.intervalMs, immediately: true, onError: (error) => problem('the balance watch failed', error) },
      ),
    ];

    announceRuntime({ pid: process.pid, url, dataDir: settings.dataDir, providerBaseUrl, startedAt });
    const exampleRoute = [...loaded.routes.values()].find((route) => route.pack.name === 'generic');
    terminal.printVerbatim(
      renderBanner({
        url,
        routes: [...loaded.routes.values()].map((route) => ({ id: route.id, source: route.pack.name })),
        sandboxUrl: sandbox?.baseUrl,
        sandboxAccount: `balance ${RUNTIME_DEFAULTS.sandbox.balance} ${RUNTIME_DEFAULTS.sandbox.currency}, ${RUNTIME_DEFAULTS.sandbox.rate} ${RUNTIME_DEFAULTS.sandbox.currency} per SMS`,
        providerBaseUrl,
        configPath: displayPath(settings.configPath),
        secretsPath: displayPath(settings.secretsPath),
        secretsCreated: secrets.created,
        secretsAdded: secrets.added,
        dataDir: displayPath(settings.dataDir),
        balanceSchedule: balanceSchedule.description,
        example: exampleRoute === undefined ? undefined : { route: exampleRoute.id, secretName: exampleRoute.config.secret, secretsFile: resolve(settings.secretsPath) },
      }),
    );

    let resolveStopped!: () => void;
    const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        terminal.print(`${clockNow()}  stopping: no new webhooks; waiting for sends in flight`);
        const drained = (async () => {
          const closing = relay.close();
          feeder.stop();
          await Promise.all([...timers.map(async (timer) => await timer.stop()), feeder.idle(), closing]);
        })();
        const finished = await Promise.race([drained.then(() => true), delay(settings.shutdownTimeoutMs).then(() => false)]);
        if (!finished) terminal.printError(`${clockNow()}  warning  sends still in flight after ${settings.shutdownTimeoutMs / 1000} s; stopping anyway`);
        withdrawRuntime(settings.dataDir);
        terminal.print(`${clockNow()}  stopped`);
        await unwind({ keepStore: !finished });
        resolveStopped();
      })();
      return stopping;
    };
    return { url, port, providerBaseUrl, sandbox, stopped, stop };
  } catch (error) {
    await unwind();
    throw error;
  }
}

async function startLocalSandbox(loaded: LoadedConfig, apiKey: string): Promise<RunningSandbox> {
  const { defaultSenderId } = loaded.config.provider;
  const routeSenderIds = [...loaded.routes.values()].flatMap((route) => (route.config.senderId === undefined ? [] : [route.config.senderId]));
  const senderIds = [...new Set([...(defaultSenderId === undefined ? [] : [defaultSenderId]), ...routeSenderIds])];
  return await startSandbox({
    apiKey,
    ...RUNTIME_DEFAULTS.sandbox,
    senderIds: senderIds.length > 0 ? senderIds : SANDBOX_DEFAULTS.senderIds,
    ...(defaultSenderId === undefined ? {} : { defaultSenderId }),
  });
}

interface HealthInput {
  readonly local: LocalStore;
  readonly settings: RuntimeSettings;
  readonly providerBaseUrl: string;
  readonly sandbox: RunningSandbox | undefined;
  readonly loaded: LoadedConfig;
  readonly startedAt: string;
}

async function health({ local, settings, providerBaseUrl, sandbox, loaded, startedAt }: HealthInput): Promise<HealthReport> {
  let reachable: boolean;
  try {
    reachable = (await local.client.send(new DescribeTableCommand({ TableName: settings.tableName }))).Table?.TableStatus === 'ACTIVE';
  } catch {
    reachable = false;
  }
  return {
    ok: reachable,
    pid: process.pid,
    startedAt,
    store: { engine: 'dynalite', dataDir: settings.dataDir, table: settings.tableName, ok: reachable },
    provider: { baseUrl: providerBaseUrl, sandbox: sandbox !== undefined },
    sandbox: sandbox === undefined ? null : { baseUrl: sandbox.baseUrl, inbox: `${sandbox.baseUrl}/_sandbox/messages` },
    routes: [...loaded.routes.keys()],
  };
}

function printCaptured(terminal: Terminal, line: string, stream: 'stdout' | 'stderr', jsonLogs: boolean, verbose: boolean): void {
  if (line.trim() === '') return;
  const entry = parseLogLine(line);
  if (entry === undefined || jsonLogs) {
    (stream === 'stderr' ? terminal.printError : terminal.print)(line);
    return;
  }
  const formatted = formatLogEntry(entry, { verbose });
  if (formatted === undefined) return;
  const level = entry.level.toUpperCase();
  (level === 'ERROR' || level === 'CRITICAL' ? terminal.printError : terminal.print)(formatted);
}

function describeError(error: unknown): string {
  if (error === undefined) return '';
  return error instanceof Error ? `: ${error.name}: ${error.message}` : `: ${String(error)}`;
}

function clockNow(): string {
  return new Date().toTimeString().slice(0, 8);
}

async function delay(ms: number): Promise<void> {
  await new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
}
