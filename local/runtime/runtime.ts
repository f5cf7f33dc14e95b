import { balanceCurrency } from '../../functions/core/config/view';
import { BALANCE_SCHEDULE, DIGEST } from '../../functions/core/defaults';
import { localSendConcurrency } from '../../functions/core/provider-rate';
import { join, resolve } from 'node:path';
import { createStoreApi } from '../console/api';
import { createConsoleHandler } from '../console/http';
import { FIXTURES_DIR, rawRoutesOf } from '../console/standalone';
import { type ConsoleAccess, createConsoleAccess, newConsoleSecret } from '../console/access';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { loadConfig, readConfigText, type LoadedConfig } from '../../functions/core/config/load';
import { SANDBOX_DEFAULTS } from '../sandbox/options';
import type { RunningSandbox } from '../sandbox/types';
import { providerKeyName } from '../../functions/core/provider/kinds/common';
import {
  pointProvidersAt,
  providerEndpoints,
  startProviderSandboxes,
  type ProviderSandbox,
} from './provider-sandboxes';
import { createFileSecretSource } from '../../functions/adapters/secrets';
import { createSmsClientSource } from '../../functions/adapters/sms';
import { createProviderSource } from '../../functions/adapters/providers';
import { checkProviderBalances } from '../../functions/relay/provider-balances';
import { ingestWebhook } from '../../functions/relay/ingest';
import { answerOpsgenieApi } from '../../functions/relay/opsgenie-api';
import { defaultSourceFetch } from '../../functions/relay/https-get';
import type { SourceFetch } from '../../functions/core/sources/types';
import { localDocumentsFetch } from './local-documents';
import { localClock } from './local-clock';
import {
  type RelayContext,
  type RelayLogger,
  type RelayMetrics,
  type RetryPolicy,
  staleSendingProblem,
} from '../../functions/relay/ports';
import { reportUndecodable } from '../../functions/relay/undecodable';
import { createStore, type MessageStore } from '../../functions/store';
import { sendMessage } from '../../functions/relay/sender';
import { sweep } from '../../functions/relay/sweeper';
import { recordEscalations } from '../../functions/relay/paging';
import { needsAttention } from '../../functions/relay/attention';
import { renderBanner } from './banner';
import { examplePayloads } from '../shared/fixture-headers';
import { invalidSetting, type RuntimeError } from '../shared/errors';
import { announceRuntime, withdrawRuntime } from '../shared/discovery';
import { withCrashPoint } from './crash-store';
import { openLocalStore, type LocalStore } from '../shared/local-store';
import { createRedactor, formatWebhook } from './log-format';
import { attentionWatch } from './attention-line';
import { localSchedule, repeat, type Repeating } from './schedule';
import { assertUsableSecrets, ensureSecretsFile, PROVIDER_API_KEY_NAME } from './secrets';
import { createRelayServer, type HealthReport, type RelayServer } from './server';
import { displayPath, type RuntimeSettings } from '../shared/settings';
import { createSendQueue, type SendQueue } from './send-queue';
import { sweepStores } from './sweep-store';
import { Lane } from '../../functions/core/lanes';
import { createTerminal } from './terminal';
import { createTerminalLogger } from './terminal-logger';
import { takeTurns } from './turns';

/** Metrics go nowhere locally: the terminal shows what they would count. */
const NO_METRICS: RelayMetrics = { add: () => undefined };

/**
 * The sweeper's share of the runtime's time at most (see `repeat`): every second, less often when a
 * sweep is slow (the first, which scans the table; a large backlog). A sweep only reads, recovers
 * stale claims and feeds the send queue, so this bounds the reading, never the sending.
 */
const SWEEPER_MAX_SHARE = 0.1;
/** The longest pause between sweeps however long one took: a retry that comes due waits no more than this. */
const SWEEPER_MAX_PAUSE_MS = 5_000;
/**
 * The listings' share of the runtime's time at most (see `takeTurns`): `logs`, scripts and the
 * console polling while a backlog is sent must leave the sender most of the local store's time.
 */
const LISTINGS_MAX_SHARE = 0.25;
/**
 * How often the runtime records due escalation and renotify steps, apart from the sweep: the sweep
 * may pause up to `SWEEPER_MAX_PAUSE_MS` on a large table, and a page must go within 5 s of its due
 * time. Reading the open incidents is one small query.
 */
const LOCAL_PAGING_INTERVAL_MS = 1_000;
/** How often the runtime looks at what needs a person (bounded store reads, see `needsAttention`). */
const LOCAL_ATTENTION_INTERVAL_MS = 2_000;
/** Due records per sweep page, the store's largest: the first sweep after a start lists them from a scan of the table. */
const LOCAL_SWEEP_PAGE = 1_000;

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
  /** The first provider's sandbox; absent with `PROVIDER_BASE_URL`. */
  readonly sandbox: RunningSandbox | undefined;
  /** Every provider's sandbox, in the config's order; none with `PROVIDER_BASE_URL`. */
  readonly sandboxes: readonly ProviderSandbox[];
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
 * timers in place of the EventBridge schedules, and a sandbox for every provider of the config
 * unless `PROVIDER_BASE_URL` names the first provider's service (then none: the others use their
 * configured `baseUrl`/`url`). Check order: config, secrets, port, store — the cheap,
 * likely mistakes fail first and leave nothing behind.
 *
 * @throws {ConfigError} the config is invalid
 * @throws {RuntimeError} the secrets file is unreadable or invalid
 * @throws {PortInUseError} the port is taken
 * @throws {RuntimeError} another process holds the store
 *
 * @example
 * ```ts
 * const runtime = await startRuntime(resolveRuntimeSettings({}, process.env));
 * process.once('SIGINT', () => void runtime.stop());
 * await runtime.stopped;
 * ```
 */
export async function startRuntime(
  settings: RuntimeSettings,
  { verbose = false }: RuntimeOptions = {},
): Promise<RunningRuntime> {
  const setup = checkSetup(settings);
  const cleanup = newCleanup();
  try {
    const relay = createRelayServer();
    const port = await relay.listen(settings.port, settings.host);
    cleanup.add('server', () => relay.close());
    const url = `http://${settings.host}:${port}`;
    const storeWatch = watchStore(setup.terminal);
    const logger = createTerminalLogger(setup.terminal, { verbose, json: settings.jsonLogs });
    const local = await openRuntimeStore(settings, setup, logger, storeWatch);
    cleanup.add('store', () => local.close());
    const sandboxes =
      settings.providerBaseUrl === undefined
        ? await startProviderSandboxes(setup.loaded, keyOfProvider(settings, setup))
        : [];
    for (const { name, sandbox } of sandboxes) cleanup.add(`sandbox ${name}`, () => sandbox.close());
    const sandbox = sandboxes[0]?.sandbox;
    const providerBaseUrl = settings.providerBaseUrl ?? sandboxes[0]!.endpoint;
    const providers = pointProvidersAt(
      setup.loaded,
      providerEndpoints(setup.loaded, sandboxes, settings.providerBaseUrl),
    );
    const started: StartedRuntime = {
      settings,
      setup,
      url,
      local,
      sandbox,
      sandboxes,
      providers,
      providerBaseUrl,
      startedAt: new Date().toISOString(),
      consoleSecret: newConsoleSecret(),
    };
    const context = runtimeContext(started, logger);
    const problem = reportProblem(setup.terminal);
    const sender = startSender(context, problem);
    const consoleAccess = attachRelay(relay, context, sender, problem, started);
    const timers = startTimers(context, sender, problem, started);
    announce(started);
    printBanner(consoleAccess, started);
    const stopping = stopper({
      relay,
      store: context.store,
      sender,
      timers,
      cleanup,
      terminal: setup.terminal,
      settings,
    });
    storeWatch.stopWith(() => void stopping.stop());
    return { url, port, providerBaseUrl, sandbox, sandboxes, ...stopping };
  } catch (error) {
    await cleanup.unwind();
    throw error;
  }
}

/** What the runtime checked and read before it binds a port or opens the store. */
interface RuntimeSetup {
  readonly configText: string;
  readonly loaded: LoadedConfig;
  readonly balanceSchedule: ReturnType<typeof localSchedule>;
  readonly secrets: ReturnType<typeof ensureSecretsFile>;
  readonly providerApiKey: string;
  readonly terminal: ReturnType<typeof createTerminal>;
  readonly clock: () => Date;
}

/** What the steps after the store share: the setup, the runtime's URL, store and SMS service. */
interface StartedRuntime {
  readonly settings: RuntimeSettings;
  readonly setup: RuntimeSetup;
  readonly url: string;
  readonly local: LocalStore;
  readonly sandbox: RunningSandbox | undefined;
  readonly sandboxes: readonly ProviderSandbox[];
  /** The config with each provider's `baseUrl`/`url` pointed where this run sends (its sandbox, or `PROVIDER_BASE_URL`). */
  readonly providers: LoadedConfig;
  readonly providerBaseUrl: string;
  readonly startedAt: string;
  readonly consoleSecret: string;
}

/** The cheap, likely mistakes first, leaving nothing behind: the config, the stale-sending age, the secrets. */
function checkSetup(settings: RuntimeSettings): RuntimeSetup {
  const configText = readConfigText(settings.configPath);
  const loaded = loadConfig(configText, settings.configPath);
  const stale = staleSendingProblem(settings.policy.staleSendingMs, loaded.settings.provider.timeoutMs);
  if (stale !== undefined)
    throw invalidSetting('STALE_SENDING_MS', stale.replace(/^STALE_SENDING_MS \((\d+)\) /, '$1 '));
  const balanceSchedule = localSchedule(loaded.settings.balance?.schedule ?? BALANCE_SCHEDULE);
  const secrets = ensureSecretsFile(settings.secretsPath, loaded);
  assertUsableSecrets(settings.secretsPath, loaded, secrets.values);
  const providerApiKey = settings.providerApiKey ?? secrets.values[PROVIDER_API_KEY_NAME]!;
  const terminal = createTerminal({ redact: createRedactor([...Object.values(secrets.values), providerApiKey]) });
  const clock = settings.localClockPath === undefined ? () => new Date() : localClock(settings.localClockPath);
  return { configText, loaded, balanceSchedule, secrets, providerApiKey, terminal, clock };
}

/**
 * The key each provider's sandbox accepts: the one the relay sends with, `PROVIDER_API_KEY` for the
 * first provider when set, else the secrets file's (`providerApiKey` for `main`, `<name>-key`).
 */
function keyOfProvider(settings: RuntimeSettings, setup: RuntimeSetup): (name: string) => string {
  const [first] = Object.keys(setup.loaded.settings.providers);
  return (name) =>
    (name === first ? settings.providerApiKey : undefined) ?? setup.secrets.values[providerKeyName(name)]!;
}

/** What a failed start closes, last opened first; a stop that timed out keeps the store for the sends still in flight. */
function newCleanup() {
  const steps: { readonly name: string; readonly run: () => Promise<void> }[] = [];
  return {
    add(name: string, run: () => Promise<void>): void {
      steps.push({ name, run });
    },
    async unwind({ keepStore = false } = {}): Promise<void> {
      for (const step of steps.reverse()) {
        if (keepStore && step.name === 'store') continue;
        await step.run().catch(() => undefined);
      }
    },
  };
}

/**
 * The store's worker dying leaves nothing to record webhooks in: say so and stop, not hang. It may
 * die before the runtime can stop (while it starts): the stop then runs as soon as it is known.
 */
function watchStore(terminal: RuntimeSetup['terminal']) {
  let failure: RuntimeError | undefined;
  let stop: (() => void) | undefined;
  return {
    failed(error: RuntimeError): void {
      terminal.printError(`${clockNow()}  error    ${error.message}; stopping`);
      failure = error;
      stop?.();
    },
    stopWith(run: () => void): void {
      stop = run;
      if (failure !== undefined) run();
    },
  };
}

async function openRuntimeStore(
  settings: RuntimeSettings,
  { clock }: RuntimeSetup,
  logger: RelayLogger,
  storeWatch: ReturnType<typeof watchStore>,
): Promise<LocalStore> {
  return await openLocalStore({
    dataDir: settings.dataDir,
    tableName: settings.tableName,
    offThread: true,
    onFailure: (error) => storeWatch.failed(error),
    onUndecodable: reportUndecodable(logger, NO_METRICS),
    clock,
  });
}

/** The relay context of the runtime's operations, on the runtime's store and SMS service. */
function runtimeContext(
  { settings, setup, url, local, providers, providerBaseUrl }: StartedRuntime,
  logger: RelayLogger,
): RelayContext {
  return createLocalContext({
    loaded: providers,
    store: withCrashPoint(local.store, settings.crashAt),
    secretsPath: settings.secretsPath,
    providerBaseUrl,
    providerApiKey: setup.providerApiKey,
    logger,
    policy: settings.policy,
    clock: setup.clock,
    ...(settings.localDocumentsPath === undefined
      ? {}
      : { fetch: localDocumentsFetch(settings.localDocumentsPath, defaultSourceFetch) }),
    publicUrl: url,
  });
}

/** Tells the CLI and `sms-relay console` where the running relay is (see `announceRuntime`). */
function announce({
  settings,
  setup,
  sandboxes,
  url,
  providerBaseUrl,
  startedAt,
  consoleSecret,
}: StartedRuntime): void {
  announceRuntime({
    pid: process.pid,
    url,
    dataDir: settings.dataDir,
    providerBaseUrl,
    providerEndpoints: providerEndpoints(setup.loaded, sandboxes, settings.providerBaseUrl),
    startedAt,
    consoleSecret,
    ...(settings.providerApiKey === undefined ? { secretsPath: settings.secretsPath } : {}),
  });
}

type Problem = (message: string, error?: unknown) => void;

function reportProblem(terminal: RuntimeSetup['terminal']): Problem {
  return (message, error) => terminal.printError(`${clockNow()}  error    ${message}${describeError(error)}`);
}

/**
 * The stream emulation: accepted records go to a send queue that sends them at the deployed
 * sender's concurrency on one shard (its batches per shard of 4 concurrent sends; the batches
 * follow `provider.maxPerSecond`).
 */
function startSender(context: RelayContext, problem: Problem): SendQueue {
  const sender: SendQueue = createSendQueue({
    send: (id) => sendMessage(context, id, { onRetry: (at, lane) => sender.feedAt(id, at, lane) }),
    concurrency: localSendConcurrency(context.config.settings.provider.maxPerSecond),
    onError: (id, error) => problem(`send of ${id} failed; the sweeper retries it`, error),
    now: () => context.clock().getTime(),
  });
  return sender;
}

/** Feeds ids whose lanes are known (ingest's answer), each to its lane, in order. */
function feedInLanes(sender: SendQueue, ids: readonly string[], lanes: readonly Lane[]): void {
  for (const lane of [Lane.Critical, Lane.Bulk])
    sender.feed(
      ids.filter((_, index) => (lanes[index] ?? Lane.Bulk) === lane),
      lane,
    );
}

/**
 * Feeds records whose lanes only the records know (a redrive's): read first, then fed in order, each
 * to its lane. A record not read stays PENDING for the sweeper.
 */
function feedRecorded(context: RelayContext, sender: SendQueue, ids: readonly string[], problem: Problem): void {
  void Promise.all(ids.map(async (id) => await context.store.getMessage(id))).then(
    (records) =>
      feedInLanes(
        sender,
        ids,
        records.map((record) => record?.lane ?? Lane.Bulk),
      ),
    (error: unknown) => problem('re-queued records not read; the sweeper sends them', error),
  );
}

/** Routes the HTTP server: webhooks to ingest (then the send queue), the CLI's and the console's requests to the store. */
function attachRelay(
  relay: RelayServer,
  context: RelayContext,
  sender: SendQueue,
  problem: Problem,
  { settings, setup, url, local, sandboxes, providerBaseUrl, startedAt, consoleSecret }: StartedRuntime,
): ConsoleAccess {
  const { loaded, terminal, clock } = setup;
  // Contended while the sender has work: the runtime's own reads (a sweep, the attention line) are
  // no send to make room for, and pausing for them slowed an idle relay's console at random.
  const listings = takeTurns({ maxShare: LISTINGS_MAX_SHARE, contended: () => sender.pending() > 0 });
  const consoleAccess = createConsoleAccess({ forwardSecret: consoleSecret });
  const consoleApi = createStoreApi({
    description: `the running relay (pid ${process.pid}, ${url})`,
    environment: 'local',
    loaded,
    rawRoutes: rawRoutesOf(setup.configText),
    webhookBase: url,
    fixturesDir: FIXTURES_DIR,
    withStore: async (use) => await listings.run(async () => await use(local.store)),
    onRequeued: (id) => feedRecorded(context, sender, [id], problem),
    clock,
  });
  relay.attach({
    maxBodyBytes: settings.maxBodyBytes,
    ingest: async (request) => await ingestWebhook(context, request, { maxBodyBytes: settings.maxBodyBytes }),
    api: async (call, create) => await answerOpsgenieApi(context, call, create),
    onAccepted: (ids, lanes) =>
      lanes === undefined ? feedRecorded(context, sender, ids, problem) : feedInLanes(sender, ids, lanes),
    onWebhook: (report) => terminal.print(formatWebhook(report)),
    onError: problem,
    health: async () => await health({ local, settings, providerBaseUrl, sandboxes, loaded, startedAt }),
    store: local.store,
    routes: new Map([...loaded.routes].map(([id, route]) => [id, route.config.timeZone])),
    onCall: loaded.onCall,
    paging: loaded,
    listings,
    // One secret for every local caller that acts for the user: the CLI on /_relay, `sms-relay console` on the console's API.
    isOperator: consoleAccess.isForwarder,
    clock,
    console: createConsoleHandler({
      access: consoleAccess,
      api: consoleApi,
      onSignIn: () =>
        terminal.print(
          `${clockNow()}  console  a browser signed in; next one-time link: ${consoleAccess.newLink(url)}`,
        ),
      onError: (error) => problem('console request failed', error),
    }),
  });
  return consoleAccess;
}

/** Timers in place of the EventBridge schedules: the sweeper and the balance watch. */
function startTimers(
  context: RelayContext,
  sender: SendQueue,
  problem: Problem,
  { settings, setup, local }: StartedRuntime,
): Repeating[] {
  // The same table reading its indexes: for the sweeps after the first, and for what needs
  // attention (shown, not acted on: its counts by the index, not by a scan of the table every 2 s).
  // On the background client: their reads reach the store one at a time, so a webhook landing
  // meanwhile waits for one of them, not for all (the trickle's p99, docs/decisions/0010).
  const indexed = createStore({
    client: local.backgroundClient,
    tableName: local.tableName,
    clock: setup.clock,
    onUndecodable: reportUndecodable(context.logger, NO_METRICS),
  });
  const stores = sweepStores(context.store, indexed);
  const attention = attentionWatch((line) => setup.terminal.print(line));
  const currency = balanceCurrency(setup.loaded);
  return [
    // Due records go to the send queue, so a backlog (a restart after a crash) leaves at the sender's
    // rate; sending inside the sweep made the next sweep wait nine times the whole backlog's send time.
    repeat(
      async () =>
        void (await sweep(
          { ...context, store: await stores.next() },
          {
            pendingGraceMs: 0,
            limit: LOCAL_SWEEP_PAGE,
            dispatch: (ids, lane) => sender.feed(ids, lane),
            digests: { graceMs: DIGEST.localGraceMs },
          },
        )),
      {
        intervalMs: settings.sweepIntervalMs,
        maxShare: SWEEPER_MAX_SHARE,
        maxIntervalMs: SWEEPER_MAX_PAUSE_MS,
        immediately: true,
        onError: (error) => problem('the sweeper failed', error),
      },
    ),
    // Due escalations and renotifies, each second: on time whatever the sweep's pace (the sweep
    // records them too; the steps' conditional writes record each once).
    repeat(
      async () =>
        sender.feed((await recordEscalations(context, context.clock(), { gauges: false })).ids, Lane.Critical),
      {
        intervalMs: LOCAL_PAGING_INTERVAL_MS,
        onError: (error) => problem('escalations not recorded; trying again in a second', error),
      },
    ),
    repeat(async () => void (await checkProviderBalances(context)), {
      intervalMs: setup.balanceSchedule.intervalMs,
      immediately: true,
      onError: (error) => problem('the balance watch failed', error),
    }),
    // What waits for a person (parked, held, unknown, the service unreachable, a route muted): a
    // line when it starts or changes, not every time it is looked at.
    repeat(
      async () => {
        const now = context.clock();
        attention(await needsAttention(indexed, now, { currency }), now);
      },
      {
        intervalMs: LOCAL_ATTENTION_INTERVAL_MS,
        onError: (error) => problem('what needs attention was not read; trying again', error),
      },
    ),
  ];
}

function printBanner(
  consoleAccess: ConsoleAccess,
  {
    settings,
    setup: { loaded, secrets, balanceSchedule, terminal },
    url,
    sandbox,
    sandboxes,
    providerBaseUrl,
  }: StartedRuntime,
): void {
  const exampleRoute = [...loaded.routes.values()].find((route) => route.pack.name === 'generic');
  // A new user's next step: a signed route and an example payload of its source, ready to paste.
  const signedRoute = [...loaded.routes.values()].find(
    (route) => route.pack.name !== 'generic' && examplePayloads(FIXTURES_DIR, route.pack.name).length > 0,
  );
  const signedPayload =
    signedRoute === undefined
      ? undefined
      : join(FIXTURES_DIR, signedRoute.pack.name, examplePayloads(FIXTURES_DIR, signedRoute.pack.name)[0]!);
  terminal.printVerbatim(
    renderBanner({
      url,
      consoleLink: consoleAccess.newLink(url),
      routes: [...loaded.routes.values()].map((route) => ({ id: route.id, source: route.pack.name })),
      sandboxUrl: sandbox?.baseUrl,
      providerSandboxes: sandboxes.map(({ name, type, sandbox: { baseUrl } }) => ({ name, type, url: baseUrl })),
      sandboxAccount: `balance ${SANDBOX_DEFAULTS.balance} ${SANDBOX_DEFAULTS.currency}, ${SANDBOX_DEFAULTS.rate} ${SANDBOX_DEFAULTS.currency} per SMS`,
      providerBaseUrl,
      configPath: displayPath(settings.configPath),
      secretsPath: displayPath(settings.secretsPath),
      secretsCreated: secrets.created,
      secretsAdded: secrets.added,
      dataDir: displayPath(settings.dataDir),
      balanceSchedule: balanceSchedule.description,
      example:
        exampleRoute === undefined
          ? undefined
          : {
              route: exampleRoute.id,
              secretName: exampleRoute.config.secret,
              secretsFile: resolve(settings.secretsPath),
            },
      ...(signedPayload === undefined
        ? {}
        : { signedExample: { route: signedRoute!.id, payload: displayPath(signedPayload) } }),
    }),
  );
}

interface StopperInput {
  readonly relay: RelayServer;
  /** The runtime's store: the spend its sends counted is written before it closes. */
  readonly store: MessageStore;
  readonly sender: SendQueue;
  readonly timers: readonly Repeating[];
  readonly cleanup: ReturnType<typeof newCleanup>;
  readonly terminal: RuntimeSetup['terminal'];
  readonly settings: RuntimeSettings;
}

/** The runtime's `stop` (idempotent) and `stopped`: no new webhooks, sends in flight finish within the shutdown time-out, the spend they counted is written, then everything closes. */
function stopper({
  relay,
  store,
  sender,
  timers,
  cleanup,
  terminal,
  settings,
}: StopperInput): Pick<RunningRuntime, 'stop' | 'stopped'> {
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      terminal.print(`${clockNow()}  stopping: no new webhooks; waiting for sends in flight`);
      const drained = (async () => {
        const closing = relay.close();
        sender.stop();
        await Promise.all([...timers.map(async (timer) => await timer.stop()), sender.idle(), closing]);
      })();
      const finished = await Promise.race([
        drained.then(() => true),
        delay(settings.shutdownTimeoutMs).then(() => false),
      ]);
      if (!finished)
        terminal.printError(
          `${clockNow()}  warning  sends still in flight after ${settings.shutdownTimeoutMs / 1000} s; stopping anyway`,
        );
      // The day's spend counter is written per window (`recordSpend`): what the last sends counted
      // is written before the store closes, so a stop loses none of it.
      await store
        .flushSpend()
        .catch((error: unknown) =>
          terminal.printError(`${clockNow()}  error    spend not counted before stopping${describeError(error)}`),
        );
      withdrawRuntime(settings.dataDir);
      terminal.print(`${clockNow()}  stopped`);
      await cleanup.unwind({ keepStore: !finished });
      resolveStopped();
    })();
    return stopping;
  };
  return { stop, stopped };
}

export interface LocalContextInput {
  /** The config, loaded once. */
  readonly loaded: LoadedConfig;
  readonly store: MessageStore;
  readonly secretsPath: string;
  /** The SMS service the relay calls: the sandbox's URL, or `PROVIDER_BASE_URL`. */
  readonly providerBaseUrl: string;
  /** `PROVIDER_API_KEY`, else the secrets file's `providerApiKey`. */
  readonly providerApiKey: string;
  readonly logger: RelayLogger;
  readonly policy: RetryPolicy;
  /** The source packs' network access; the network itself (`defaultSourceFetch`) unless set. */
  readonly fetch?: SourceFetch;
  /**
   * The relay's time.
   * @default the system clock
   */
  readonly clock?: () => Date;
  /** The runtime's own URL: the acknowledge link's origin on a route whose `ack` names no `baseUrl`. */
  readonly publicUrl?: string;
}

/**
 * The local composition root: the relay context the local runtime hands to the relay operations
 * (`ingestWebhook`, `sendMessage`, `sweep`, `checkBalance`), as the Lambda handlers build theirs
 * from the environment. Metrics go nowhere locally.
 *
 * @example
 * ```ts
 * const context = createLocalContext({ loaded, store, secretsPath, providerBaseUrl, providerApiKey, logger, policy });
 * await ingestWebhook(context, request);
 * ```
 */
export function createLocalContext({
  loaded,
  store,
  secretsPath,
  providerBaseUrl,
  providerApiKey,
  logger,
  policy,
  fetch,
  clock = () => new Date(),
  publicUrl,
}: LocalContextInput): RelayContext {
  const secrets = createFileSecretSource(secretsPath);
  const { timeoutMs } = loaded.settings.provider;
  return {
    config: {
      ...loaded,
      settings: { ...loaded.settings, provider: { ...loaded.settings.provider, baseUrl: providerBaseUrl } },
    },
    store,
    secrets,
    sms: createSmsClientSource({ secrets, baseUrl: providerBaseUrl, timeoutMs, apiKey: providerApiKey }),
    // The first provider at the runtime's provider URL (its sandbox, or PROVIDER_BASE_URL); the others at their own.
    providers: createProviderSource({
      secrets,
      settings: loaded.settings,
      apiKey: providerApiKey,
      firstBaseUrl: providerBaseUrl,
    }),
    logger,
    metrics: NO_METRICS,
    clock,
    policy,
    ...(fetch === undefined ? {} : { fetch }),
    ...(publicUrl === undefined ? {} : { publicUrl }),
  };
}

interface HealthInput {
  readonly local: LocalStore;
  readonly settings: RuntimeSettings;
  readonly providerBaseUrl: string;
  readonly sandboxes: readonly ProviderSandbox[];
  readonly loaded: LoadedConfig;
  readonly startedAt: string;
}

async function health({
  local,
  settings,
  providerBaseUrl,
  sandboxes,
  loaded,
  startedAt,
}: HealthInput): Promise<HealthReport> {
  let reachable: boolean;
  try {
    reachable =
      (await local.client.send(new DescribeTableCommand({ TableName: settings.tableName }))).Table?.TableStatus ===
      'ACTIVE';
  } catch {
    reachable = false;
  }
  return {
    ok: reachable,
    pid: process.pid,
    startedAt,
    store: { engine: 'dynalite', dataDir: settings.dataDir, table: settings.tableName, ok: reachable },
    provider: { baseUrl: providerBaseUrl, sandbox: sandboxes.length > 0 },
    // The first provider's, as before there were several; `sandboxes` lists every provider's.
    sandbox: sandboxes[0] === undefined ? null : sandboxHealth(sandboxes[0]),
    sandboxes: sandboxes.map(sandboxHealth),
    routes: [...loaded.routes.keys()],
  };
}

function sandboxHealth({ name, type, sandbox, endpoint }: ProviderSandbox) {
  return { provider: name, type, baseUrl: sandbox.baseUrl, endpoint, inbox: `${sandbox.baseUrl}/_sandbox/messages` };
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
