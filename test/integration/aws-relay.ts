import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, DynamoDBStreamEvent } from 'aws-lambda';
import { createStore, type MessageStore } from '../../functions/store';
import { bundleHandlers, type HandlerName } from '../../infra/bundle';
import { RELAY_CONFIG_FILE, stageFunctionAsset } from '../../infra/staging';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import { type Dynalite, startDynalite } from '../helpers/dynalite';
import { DYNAMODB_LOCAL_CREDENTIALS } from '../helpers/dynamodb-local';
import { type InvokeOutcome, mappingsByLane, StreamMapping } from '../helpers/stream-mapping';
import { resourcesOfType, synthStack, type TestStack } from '../infra/support';

/**
 * The relay as deployed, for the AWS-shaped end-to-end files (`npm run test:aws`): the stack is
 * synthesized from a config, and everything a test runs comes from that template: the table (key
 * schema, indexes, stream, TTL), each function's environment and time-out, the sweeper's schedule,
 * and the stream mapping, applied to the table's real stream by a poller
 * (test/helpers/stream-mapping.ts). The functions are the esbuild bundles the stack ships, each
 * invocation a fresh Node process (a cold start), or with `warm` a kept one as Lambda keeps its
 * execution environments; the SMS service is the sandbox. A test invokes
 * the sweeper in place of its schedule. test/integration/aws-paging.test.ts uses it.
 */

const DRIVER = fileURLToPath(new URL('./driver.mjs', import.meta.url));
const RESULT_MARKER = '@@driver-result@@';
/** The driver's answer line, written whole (a chunk may end inside it). */
const ANSWER_LINE = new RegExp(`${RESULT_MARKER}.*\n`);

/** The API's own host name, as API Gateway names it in `requestContext.domainName`. */
export const API_DOMAIN = 'a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com';

export interface AwsRelayOptions {
  /** The environment's name: the stack's, the secret's. */
  readonly environmentName: string;
  /** The config as `config/<env>.yaml` would hold it. */
  readonly configText: string;
  /**
   * The config staged into the functions, when a stand-in's URL differs from the synthesized one:
   * another provider's sandbox on loopback, a URL the stack refuses (only the first provider's is
   * replaced, by `PROVIDER_BASE_URL`). @default configText
   */
  readonly stagedConfigText?: string;
  /** The secrets file's values (route secrets; `providerApiKey` is set to the sandbox's key). */
  readonly secrets: Readonly<Record<string, string>>;
  /** The sandbox's sender IDs. */
  readonly senderIds: readonly string[];
  /**
   * Run on the table before the stream mappings take their position (LATEST): records written here
   * reach no sender, as records a sender left PENDING while the SMS service was unreachable.
   */
  readonly beforeStream?: (store: MessageStore) => Promise<void>;
  /** Apply the mappings' `ParallelizationFactor` (see `StreamMapping`). @default false */
  readonly parallel?: boolean;
  /**
   * Keep each execution environment (a Node process) for the next invocation of its function, as
   * Lambda does: the first invocation of each pays the cold start, and an environment serves one
   * invocation at a time (concurrent invocations start more). Off, every invocation is a cold start.
   * @default false
   */
  readonly warm?: boolean;
}

export interface AwsRelay {
  readonly synthesized: TestStack;
  readonly db: Dynalite;
  readonly sandbox: RunningSandbox;
  readonly store: MessageStore;
  readonly tableName: string;
  /** The bulk lane's stream mapping the template declares, feeding the sender bundle. */
  readonly mapping: StreamMapping;
  /** Both of the template's stream mappings (one per lane), each feeding the sender bundle. */
  readonly mappings: Readonly<Record<'critical' | 'bulk', StreamMapping>>;
  /** A resource's properties in the template (exactly one of that type). */
  propertiesOf(type: string): Record<string, unknown>;
  /** The sweeper's schedule expression, as its rule in the template says it. */
  readonly sweepSchedule: string;
  /** The environment the template gives a function, its AWS references replaced by the local stand-ins. */
  environment(name: HandlerName): Record<string, string>;
  /** One invocation of a bundled handler, as Lambda runs it: in a fresh process, or a kept one with `warm`. */
  invoke(name: HandlerName, event: unknown): Promise<InvokeOutcome & { readonly logs: string }>;
  /** The stdout and stderr of every invocation so far (the sender's on the stream included), in order. */
  readonly logs: readonly string[];
  /** {@link invoke}, throwing a function error. */
  call<T>(name: HandlerName, event: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** Synthesizes the stack, bundles and packages its functions, creates its table and starts the sandbox and the stream mapping. */
export async function startAwsRelay({
  environmentName,
  configText,
  stagedConfigText = configText,
  secrets,
  senderIds,
  beforeStream,
  parallel = false,
  warm = false,
}: AwsRelayOptions): Promise<AwsRelay> {
  const scratch = mkdtempSync(join(tmpdir(), `sms-relay-${environmentName}-`));
  const { bundles } = bundleHandlers({ outDir: join(scratch, 'dist') });
  const synthesized = synthStack(environmentName, configText, join(scratch, 'dist'));
  // Packaged as the stack packages each function (RelayFunction: stageFunctionAsset).
  const packages = Object.fromEntries(
    bundles.map((bundle) => [
      bundle.name,
      stageFunctionAsset({ bundleDir: bundle.dir, configText: stagedConfigText, stagingRoot: join(scratch, 'assets') }),
    ]),
  ) as Record<HandlerName, string>;
  const apiKey = `sms-key-${randomUUID()}`;
  const [db, sandbox] = await Promise.all([
    startDynalite(),
    startSandbox({ apiKey, senderIds: [...senderIds], balance: 100_000, rate: 20 }),
  ]);
  const streams = new DynamoDBStreamsClient({
    region: 'local',
    endpoint: db.endpoint,
    credentials: DYNAMODB_LOCAL_CREDENTIALS,
  });
  const propertiesOf = (type: string): Record<string, unknown> => {
    const found = resourcesOfType(synthesized.resources, type);
    if (found.length !== 1) throw new Error(`the template has ${found.length} ${type}, not one`);
    return found[0]![1].Properties!;
  };
  const tableName = `${environmentName}-${randomUUID()}`;
  const streamArn = await createStackTable(db, propertiesOf('AWS::DynamoDB::Table'), tableName);
  const store = createStore({ client: db.client, tableName });
  const secretsFile = join(scratch, 'secrets.json');
  writeFileSync(secretsFile, JSON.stringify({ ...secrets, providerApiKey: apiKey }));

  const environment = (name: HandlerName): Record<string, string> => {
    const fn = synthesized.resources[synthesized.functionId(name)]!.Properties!;
    const variables = (fn['Environment'] as { Variables: Record<string, unknown> }).Variables;
    const replaced: Record<string, string | undefined> = {
      TABLE_NAME: tableName,
      SECRET_ID: undefined,
      PROVIDER_SECRET_ID: undefined,
      PROVIDER_BASE_URL: sandbox.baseUrl,
    };
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(variables)) {
      if (key in replaced) {
        if (replaced[key] !== undefined) env[key] = replaced[key];
      } else if (typeof value === 'string') {
        env[key] = value;
      } else {
        throw new Error(`${name}: the template sets ${key} to ${JSON.stringify(value)}, which has no local stand-in`);
      }
    }
    if (env['RELAY_CONFIG'] !== RELAY_CONFIG_FILE) throw new Error(`${name}: RELAY_CONFIG is not ${RELAY_CONFIG_FILE}`);
    return {
      ...env,
      PATH: process.env['PATH'] ?? '',
      LAMBDA_TASK_ROOT: packages[name],
      DYNAMODB_ENDPOINT: db.endpoint,
      RELAY_SECRETS_FILE: secretsFile,
      AWS_REGION: 'local',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      // Lambda's reserved variable: every function's clock is UTC, whatever the machine running the tests.
      TZ: ':UTC',
      DRIVER_TIMEOUT_MS: String((fn['Timeout'] as number) * 1000),
    };
  };

  const logs: string[] = [];
  const environments = new WarmEnvironments((name) =>
    spawn(process.execPath, [DRIVER, join(packages[name], 'index.mjs'), '--serve'], {
      cwd: scratch,
      env: environment(name),
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const invokeCold = async (name: HandlerName, event: unknown): Promise<Invoked> => {
    const child = spawn(process.execPath, [DRIVER, join(packages[name], 'index.mjs')], {
      cwd: scratch,
      env: environment(name),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.end(JSON.stringify(event));
    const code = await new Promise<number | null>((resolve, reject) =>
      child.once('error', reject).once('close', resolve),
    );
    return invoked(name, stdout, stderr, code === 0 ? undefined : code);
  };
  const invoke = async (name: HandlerName, event: unknown): Promise<Invoked> => {
    const outcome = warm ? await environments.invoke(name, event) : await invokeCold(name, event);
    logs.push(outcome.logs);
    return outcome;
  };

  const lanes = mappingsByLane(
    resourcesOfType(synthesized.resources, 'AWS::Lambda::EventSourceMapping').map(([, each]) => each.Properties!),
  );
  const mappingOf = (lane: 'critical' | 'bulk'): StreamMapping =>
    new StreamMapping({
      client: streams,
      streamArn,
      settings: lanes[lane],
      parallel,
      invoke: async (event: DynamoDBStreamEvent) => await invoke('sender', event),
    });
  const mappings = { critical: mappingOf('critical'), bulk: mappingOf('bulk') } as const;
  await beforeStream?.(store);
  await Promise.all([mappings.critical.start(), mappings.bulk.start()]);

  const rules = resourcesOfType(synthesized.resources, 'AWS::Events::Rule').filter(([, rule]) =>
    (rule.Properties!['Targets'] as { Arn: unknown }[]).some(
      (target) =>
        JSON.stringify(target.Arn) === JSON.stringify({ 'Fn::GetAtt': [synthesized.functionId('sweeper'), 'Arn'] }),
    ),
  );
  if (rules.length !== 1) throw new Error(`the template schedules the sweeper ${rules.length} times`);

  return {
    synthesized,
    db,
    sandbox,
    store,
    tableName,
    mapping: mappings.bulk,
    mappings,
    propertiesOf,
    sweepSchedule: rules[0]![1].Properties!['ScheduleExpression'] as string,
    logs,
    environment,
    invoke,
    call: async <T>(name: HandlerName, event: unknown): Promise<T> => {
      const outcome = await invoke(name, event);
      if ('functionError' in outcome) throw new Error(outcome.functionError);
      return outcome.result as T;
    },
    stop: async () => {
      await Promise.all([mappings.critical.stop(), mappings.bulk.stop()]);
      environments.stop();
      streams.destroy();
      await Promise.all([db.close(), sandbox.close()]);
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

type Invoked = InvokeOutcome & { readonly logs: string };

/**
 * One invocation's outcome from what its process wrote: the driver's marker line carries the
 * return value or the error; everything else is the function's log. `exitCode`: the process ended
 * before answering (a crash).
 */
function invoked(name: HandlerName, stdout: string, stderr: string, exitCode?: number | null): Invoked {
  // What the function wrote, without the driver's line carrying its return value (not a log line).
  const output = `${stdout
    .split('\n')
    .filter((each) => !each.startsWith(RESULT_MARKER))
    .join('\n')}\n${stderr}`;
  const line = stdout.split('\n').find((each) => each.startsWith(RESULT_MARKER));
  if (exitCode !== undefined || line === undefined)
    return { functionError: `${name} exited with ${exitCode}: ${stderr.slice(-2000)}`, logs: output };
  const outcome = JSON.parse(line.slice(RESULT_MARKER.length)) as {
    result?: never;
    error?: { name: string; message: string };
  };
  if (outcome.error !== undefined)
    return { functionError: `${outcome.error.name}: ${outcome.error.message}`, logs: output };
  return { result: outcome.result, logs: output };
}

/** A kept execution environment: the driver in `--serve` mode, between invocations. */
type Environment = ChildProcessWithoutNullStreams;

/**
 * Lambda's execution environments per function: an invocation takes an idle one or starts a new
 * one (a cold start), and gives it back when answered; one that crashed is never reused.
 */
class WarmEnvironments {
  readonly #idle = new Map<HandlerName, Environment[]>();
  readonly #all = new Set<Environment>();

  public constructor(private readonly start: (name: HandlerName) => Environment) {}

  public async invoke(name: HandlerName, event: unknown): Promise<Invoked> {
    const environment = this.#idle.get(name)?.pop() ?? this.#started(name);
    let stdout = '';
    let stderr = '';
    const onStdout = (chunk: string): void => void (stdout += chunk);
    const onStderr = (chunk: string): void => void (stderr += chunk);
    environment.stdout.on('data', onStdout);
    environment.stderr.on('data', onStderr);
    const answered = await new Promise<number | null | undefined>((resolve) => {
      const onExit = (code: number | null): void => resolve(code);
      environment.once('close', onExit);
      const onData = (): void => {
        if (!ANSWER_LINE.test(stdout)) return;
        environment.off('close', onExit);
        environment.stdout.off('data', onData);
        resolve(undefined);
      };
      environment.stdout.on('data', onData);
      environment.stdin.write(`${JSON.stringify(event)}\n`);
    });
    environment.stdout.off('data', onStdout);
    environment.stderr.off('data', onStderr);
    if (answered !== undefined) this.#all.delete(environment);
    else this.#idle.set(name, [...(this.#idle.get(name) ?? []), environment]);
    return invoked(name, stdout, stderr, answered);
  }

  public stop(): void {
    for (const environment of this.#all) environment.kill();
    this.#all.clear();
    this.#idle.clear();
  }

  #started(name: HandlerName): Environment {
    const environment = this.start(name);
    environment.stdout.setEncoding('utf8');
    environment.stderr.setEncoding('utf8');
    this.#all.add(environment);
    return environment;
  }
}

/** Creates a table as the template declares it (SSE and point-in-time recovery have no local effect); its stream's ARN. */
async function createStackTable(db: Dynalite, table: Record<string, unknown>, name: string): Promise<string> {
  const input: CreateTableCommandInput = {
    TableName: name,
    KeySchema: table['KeySchema'] as CreateTableCommandInput['KeySchema'],
    AttributeDefinitions: table['AttributeDefinitions'] as CreateTableCommandInput['AttributeDefinitions'],
    GlobalSecondaryIndexes: table['GlobalSecondaryIndexes'] as CreateTableCommandInput['GlobalSecondaryIndexes'],
    BillingMode: table['BillingMode'] as CreateTableCommandInput['BillingMode'],
    StreamSpecification: { StreamEnabled: true, ...(table['StreamSpecification'] as { StreamViewType: 'NEW_IMAGE' }) },
  };
  await db.client.send(new CreateTableCommand(input));
  const ttl = table['TimeToLiveSpecification'] as { AttributeName: string; Enabled: boolean };
  await db.client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: ttl }));
  const { Table: created } = await db.client.send(new DescribeTableCommand({ TableName: name }));
  return created!.LatestStreamArn!;
}

/**
 * An HTTP API request (payload format 2.0) as API Gateway hands it to ingest for the route key
 * `routeKey`: the path, the API's own domain, the arrival time (`timeEpoch`).
 */
export function httpApiEvent({
  routeKey,
  path,
  headers = {},
  body,
  timeEpoch = Date.now(),
  method = routeKey.split(' ')[0]!,
  query = '',
}: {
  readonly routeKey: 'POST /hooks/{route}' | 'GET /a/{token}' | 'POST /a/{token}' | 'ANY /hooks/{route}/{proxy+}';
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeEpoch?: number;
  /** The request's method: a route key of `ANY` takes every one. @default the route key's */
  readonly method?: string;
  /** The raw query string, without `?`. @default none */
  readonly query?: string;
}): APIGatewayProxyEventV2 {
  const last = path.split('/').at(-1)!;
  const [, route, proxy] = /^\/hooks\/([^/]+)(?:\/(.*))?$/.exec(path) ?? [];
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: query,
    headers: { host: API_DOMAIN, 'user-agent': 'aws-paging-test', ...headers },
    pathParameters: routeKey.includes('{token}')
      ? { token: last }
      : routeKey.includes('{proxy+}')
        ? { route: route!, proxy: proxy! }
        : { route: last },
    requestContext: {
      accountId: '123456789012',
      apiId: API_DOMAIN.split('.')[0]!,
      domainName: API_DOMAIN,
      domainPrefix: API_DOMAIN.split('.')[0]!,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'aws-paging-test' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: new Date(timeEpoch).toISOString(),
      timeEpoch,
    },
    ...(body === undefined ? {} : { body }),
    isBase64Encoded: false,
  };
}

/** The answer of an ingest invocation, as API Gateway returns it. */
export type HttpAnswer = APIGatewayProxyStructuredResultV2;
