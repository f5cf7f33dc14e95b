import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadConfig } from '../../../functions/core/config/load';
import type { RelayConfigInput, SingleProviderConfigInput } from '../../../functions/core/config/schema';
import { createFileSecretSource } from '../../../functions/adapters/secrets';
import { createSmsClientSource } from '../../../functions/adapters/sms';
import { ingestWebhook, type IngestResponse } from '../../../functions/relay/ingest';
import {
  DEFAULT_RETRY_POLICY,
  type RelayContext,
  type RelayLogger,
  type RelayMetric,
  type RelayMetrics,
  type RetryPolicy,
} from '../../../functions/relay/ports';
import { createStore, ensureTable, type MessageRecord, type MessageStore } from '../../../functions/store';
import { reportUndecodable } from '../../../functions/relay/undecodable';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startSandbox } from '../../../local/sandbox/server';
import type { DeliveredMessage, RunningSandbox, SandboxOptions } from '../../../local/sandbox/types';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';

export const T0 = new Date('2025-06-02T08:00:00.000Z');

/** Secret values: random per run, so a match in a log line can only be a leak. */
export const SECRETS = {
  providerApiKey: `sms-key-${randomBytes(12).toString('hex')}`,
  alertsToken: `alerts-${randomBytes(12).toString('hex')}`,
  githubSecret: `gh-${randomBytes(12).toString('hex')}`,
  genericToken: `generic-${randomBytes(12).toString('hex')}`,
} as const;

export const SENDER_IDS = ['ALERTS', 'SMSRELAY', 'OPS'] as const;

/** The on-call number of the Alertmanager fixture, in its `255` form, and the GitHub route's. */
export const ONCALL = '255712345678';
export const OPS = '255754111222';

const FIXTURES = new URL('../../../examples/', import.meta.url);

export function fixtureText(path: string): string {
  return readFileSync(new URL(path, FIXTURES), 'utf8');
}

/** The relay's routes for these tests; each test picks what it needs. */
export function baseConfig(baseUrl: string): SingleProviderConfigInput {
  const alerts: RelayConfigInput['routes'][string] = {
    source: 'alertmanager',
    secret: 'alerts-token',
    recipients: ['+255 712 345 678', '{{ commonAnnotations.oncall_phone }}'],
    when: "status == 'firing'",
    template: '[{{ status | upcase }}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary }}',
    senderId: 'ALERTS',
    // Explicit: an alerting source defaults to at-least-once; these tests need both policies.
    delivery: 'at-most-once',
  };
  return {
    provider: { baseUrl, defaultSenderId: 'SMSRELAY', timeoutMs: 5_000 },
    secrets: 'sms-relay/test',
    routes: {
      alerts,
      'alerts-alo': { ...alerts, delivery: 'at-least-once' },
      github: { source: 'github', secret: 'github-secret', recipients: ['0754111222'], senderId: 'OPS' },
      ops: { source: 'generic', secret: 'generic-token', recipients: ['0754111222'], senderId: 'OPS' },
      'ops-alo': {
        source: 'generic',
        secret: 'generic-token',
        recipients: ['0754111222'],
        senderId: 'OPS',
        delivery: 'at-least-once',
      },
      unapproved: { source: 'generic', secret: 'generic-token', recipients: ['0754111222'], senderId: 'NOTAPPROVED' },
      limited: {
        source: 'generic',
        secret: 'generic-token',
        recipients: ['0754111222'],
        senderId: 'OPS',
        limits: { messages: 1, window: 60 },
      },
      fan: {
        source: 'generic',
        secret: 'generic-token',
        recipients: ['0754111222'],
        fanOut: 'items',
        when: 'item.send',
        template: '{{ item.text }}',
      },
    },
  };
}

/** Lines written through the relay's logger port, kept for assertions. */
export class RecordingLogger implements RelayLogger {
  public readonly lines: { level: string; message: string; attributes?: Record<string, unknown> }[] = [];
  public debug = this.write('debug');
  public info = this.write('info');
  public warn = this.write('warn');
  public error = this.write('error');

  /** Every line as the JSON a log shipper would see. */
  public text(): string {
    return this.lines.map((line) => JSON.stringify(line, errorsAsObjects)).join('\n');
  }

  public messages(level?: string): string[] {
    return this.lines.filter((line) => level === undefined || line.level === level).map((line) => line.message);
  }

  private write(level: string) {
    return (message: string, attributes?: Record<string, unknown>): void => {
      this.lines.push({ level, message, ...(attributes === undefined ? {} : { attributes }) });
    };
  }
}

/** Errors stringify to `{}`; a leak in a message, stack or cause must show. */
function errorsAsObjects(_key: string, value: unknown): unknown {
  if (value instanceof Error)
    return { name: value.name, message: value.message, stack: value.stack, cause: value.cause };
  return value;
}

/** Datapoints added through the relay's metrics port. */
export class RecordingMetrics implements RelayMetrics {
  public readonly points: { name: RelayMetric; value: number; route?: string; provider?: string }[] = [];

  public add(name: RelayMetric, value: number, route?: string, provider?: string): void {
    this.points.push({
      name,
      value,
      ...(route === undefined ? {} : { route }),
      ...(provider === undefined ? {} : { provider }),
    });
  }

  public total(name: RelayMetric, route?: string): number {
    return this.points
      .filter((point) => point.name === name && (route === undefined || point.route === route))
      .reduce((sum, point) => sum + point.value, 0);
  }
}

/** A clock the test moves by hand: retries and windows fall due without waiting. */
export class TestClock {
  public now: Date;

  public constructor(start: Date = T0) {
    this.now = start;
  }

  public readonly read = (): Date => this.now;

  public advance(ms: number): Date {
    this.now = new Date(this.now.getTime() + ms);
    return this.now;
  }
}

export interface Harness {
  readonly tableName: string;
  readonly context: RelayContext;
  readonly store: MessageStore;
  readonly logger: RecordingLogger;
  readonly metrics: RecordingMetrics;
  readonly clock: TestClock;
  /** Rewrites the secrets file (a rotation); the source sees it on its next refresh. */
  writeSecrets(values: Record<string, string>): void;
  ingest(
    routeId: string,
    body: string,
    options?: {
      readonly headers?: Record<string, string>;
      readonly query?: Record<string, string>;
      readonly maxBodyBytes?: number;
    },
  ): Promise<IngestResponse>;
  /** Every message record of a route, oldest first. */
  records(route: string): Promise<readonly MessageRecord[]>;
  record(id: string): Promise<MessageRecord>;
}

export interface HarnessOptions {
  readonly db: Dynalite;
  readonly baseUrl: string;
  readonly config?: (config: SingleProviderConfigInput) => RelayConfigInput;
  readonly policy?: Partial<RetryPolicy>;
  readonly secrets?: Record<string, string>;
  /** An existing table: another process (a cold Lambda container, a restarted runtime) on the same data. */
  readonly tableName?: string;
  readonly clock?: TestClock;
  /** The store's DynamoDB client (one with its own middleware, say); the server's shared client by default. */
  readonly client?: DynamoDBClient;
  /** The store's spend window (`createStore`'s `spendWindowMs`); the relay's by default. */
  readonly spendWindowMs?: number;
}

const scratch = mkdtempSync(join(tmpdir(), 'relay-test-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

/** The secret file's values for {@link SECRETS}. */
export function secretValues(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    providerApiKey: SECRETS.providerApiKey,
    'alerts-token': SECRETS.alertsToken,
    'github-secret': SECRETS.githubSecret,
    'generic-token': SECRETS.genericToken,
    ...overrides,
  };
}

/**
 * A relay context on a fresh table of the shared dynalite server and the shared sandbox, with the
 * real secret source (a JSON file) and SMS client source, and recording logger and metrics.
 */
export async function harness({
  db,
  baseUrl,
  config = (c) => c,
  policy = {},
  secrets = secretValues(),
  tableName = `relay-${randomUUID()}`,
  clock = new TestClock(),
  client = db.client,
  spendWindowMs,
}: HarnessOptions): Promise<Harness> {
  await ensureTable(db.client, tableName);
  const logger = new RecordingLogger();
  const metrics = new RecordingMetrics();
  // As the Lambda wiring and the runtime do: a record this version cannot read is logged and counted.
  const store = createStore({
    client,
    tableName,
    clock: clock.read,
    onUndecodable: reportUndecodable(logger, metrics),
    ...(spendWindowMs === undefined ? {} : { spendWindowMs }),
  });
  const loaded = loadConfig(stringify(config(baseConfig(baseUrl))), 'relay-test.yaml');
  const secretsPath = join(scratch, `${tableName}.json`);
  const writeSecrets = (values: Record<string, string>): void => writeFileSync(secretsPath, JSON.stringify(values));
  writeSecrets(secrets);
  const secretSource = createFileSecretSource(secretsPath);
  const context: RelayContext = {
    config: loaded,
    store,
    secrets: secretSource,
    sms: createSmsClientSource({
      secrets: secretSource,
      baseUrl: loaded.settings.provider.baseUrl,
      timeoutMs: loaded.settings.provider.timeoutMs,
    }),
    logger,
    metrics,
    clock: clock.read,
    policy: { ...DEFAULT_RETRY_POLICY, ...policy },
  };
  const records = async (route: string): Promise<readonly MessageRecord[]> =>
    (await store.listByRoute(route, { limit: 1000 })).items;
  return {
    tableName,
    context,
    store,
    logger,
    metrics,
    clock,
    writeSecrets,
    ingest: (routeId, body, { headers = {}, query = {}, maxBodyBytes } = {}) =>
      ingestWebhook(
        context,
        {
          routeId,
          body: new TextEncoder().encode(body),
          headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
          query,
          receivedAt: clock.now,
        },
        maxBodyBytes === undefined ? {} : { maxBodyBytes },
      ),
    records,
    record: async (id) => {
      const record = await store.getMessage(id);
      if (record === undefined) throw new Error(`no record ${id}`);
      return record;
    },
  };
}

/** An Alertmanager notification: the fixture with its own fingerprint, so each is a new delivery. */
export function alertBody({
  fingerprint = randomUUID(),
  status = 'firing',
  summary,
  startsAt,
}: {
  fingerprint?: string;
  status?: string;
  summary?: string;
  /** When the alert began firing: a new firing of the same alert has a new one. */
  startsAt?: string;
} = {}): string {
  const body = JSON.parse(fixtureText('alertmanager/firing-single.json')) as {
    status: string;
    alerts: { status: string; fingerprint: string; startsAt: string }[];
    commonAnnotations: { summary: string };
  };
  body.status = status;
  for (const alert of body.alerts) {
    alert.status = status;
    alert.fingerprint = fingerprint;
    if (startsAt !== undefined) alert.startsAt = startsAt;
  }
  if (summary !== undefined) body.commonAnnotations.summary = summary;
  return JSON.stringify(body);
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Resolves when the sandbox has accepted `count` sends in all (the time-out tests: a held send lands late). */
export class DeliveryWatch {
  private waiters: { count: number; resolve: () => void }[] = [];
  private delivered = 0;

  public readonly onDelivered = (_message: DeliveredMessage): void => {
    this.delivered += 1;
    this.waiters = this.waiters.filter((waiter) => {
      if (this.delivered < waiter.count) return true;
      waiter.resolve();
      return false;
    });
  };

  public reset(): void {
    this.delivered = 0;
  }

  /** Waits for the `count`-th delivery since the last reset. The test's time-out bounds the wait. */
  public async reached(count: number): Promise<void> {
    if (this.delivered >= count) return;
    await new Promise<void>((resolve) => this.waiters.push({ count, resolve }));
  }
}

/** A loopback port with nothing listening: connections to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export function resetSandbox(sandbox: RunningSandbox, watch: DeliveryWatch, balance = 1000): void {
  sandbox.clearFaults();
  sandbox.clearMessages();
  sandbox.clearRequests();
  sandbox.setBalance(balance);
  watch.reset();
}

/** The servers a relay suite runs against: one dynalite and one sandbox for the whole file. */
export interface RelayServers {
  readonly db: Dynalite;
  readonly sandbox: RunningSandbox;
  /** Resolves as the sandbox's deliveries arrive. */
  readonly watch: DeliveryWatch;
}

/**
 * Starts dynalite and the sandbox (with `sandbox` options over the suite's API key and sender IDs)
 * before the file's tests, empties the sandbox and tops it up to `balance` before each test, and
 * closes both after the file.
 *
 * @example
 * ```ts
 * const servers = useRelayServers({ rate: 1 });
 * it('sends', async () => { const relay = await harness({ db: servers.db, baseUrl: servers.sandbox.baseUrl }); });
 * ```
 */
export function useRelayServers(
  sandbox: Partial<SandboxOptions> = {},
  { balance = 1000 }: { readonly balance?: number } = {},
): RelayServers {
  const watch = new DeliveryWatch();
  let started: { db: Dynalite; sandbox: RunningSandbox } | undefined;
  beforeAll(async () => {
    const [db, running] = await Promise.all([
      startDynalite(),
      startSandbox({
        apiKey: SECRETS.providerApiKey,
        senderIds: SENDER_IDS,
        balance: 1000,
        rate: 1,
        onDelivered: watch.onDelivered,
        ...sandbox,
      }),
    ]);
    started = { db, sandbox: running };
  });
  afterAll(async () => {
    await Promise.all([started?.db.close(), started?.sandbox.close()]);
  });
  beforeEach(() => {
    if (started !== undefined) resetSandbox(started.sandbox, watch, balance);
  });
  const get = (): { db: Dynalite; sandbox: RunningSandbox } => {
    if (started === undefined) throw new Error('the relay servers start in beforeAll');
    return started;
  };
  return {
    get db() {
      return get().db;
    },
    get sandbox() {
      return get().sandbox;
    },
    watch,
  };
}
