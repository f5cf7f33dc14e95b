import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import {
  BALANCE_SCHEDULE,
  HANDLER_TIMEOUT_SECONDS,
  MAX_BODY_BYTES,
  STREAM,
  SWEEP_SCHEDULE,
} from '../functions/core/defaults';
import { streamParallelization } from '../functions/core/provider-rate';
import { join } from 'node:path';
import { Duration, Names, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ConfigError } from '../functions/core/config/errors';
import { ENV } from '../functions/core/environment';
import type { RelayConfig } from '../functions/core/config/schema';
import { RoutePriority } from '../functions/core/config/policies';
import { Lane } from '../functions/core/lanes';
import { MessageState, TABLE } from '../functions/store/table';
import { bundleHandlers, HANDLER_NAMES, type HandlerName } from './bundle';
import { METRICS, metricsNamespace } from '../functions/core/metrics';
import { deployProblems, providerSecretName, secretName } from './deployable';
import { pascalCase } from './names';
import { providerAlarmTargets, RelayObservability } from './observability';
import { SECRET_ACCESS, SECRET_READ_ACTIONS, TABLE_ACCESS, type TableGrant } from './permissions';
import { RelayFunction } from './relay-function';
import { scheduleProblem } from './schedule';
import { RELAY_CONFIG_FILE } from './staging';

/** Steady-state and burst request limits for the webhook endpoint. */
export interface RelayThrottle {
  /**
   * Requests per second, averaged.
   * @default 50
   */
  readonly rateLimit?: number;
  /**
   * Requests allowed at once above the rate.
   * @default 100
   */
  readonly burstLimit?: number;
}

export interface SmsRelayProps {
  /** Names the alarms, the dashboard and the function descriptions: `dev`, `prod`. */
  readonly environmentName: string;
  /** The environment's validated config (`readEnvironmentConfig(env).config`). */
  readonly config: RelayConfig;
  /**
   * The text `config` was parsed from, deployed with every function as `relay-config.json`, validated
   * and compiled at synth (`stagedConfigText`); the handlers read that file, never this stack's properties.
   */
  readonly configText: string;
  /**
   * A directory of prebuilt bundles, `<name>/index.mjs` per handler (from `bundleHandlers`).
   * @default - the handlers are bundled into `dist/handlers` during synth
   */
  readonly bundleDir?: string;
  /**
   * Memory per function, in MB; CPU scales with it.
   * @default - ingest 256, sender 256, sweeper 256, balance-watch 128
   */
  readonly memorySize?: Readonly<Partial<Record<HandlerName, number>>>;
  /**
   * How long the functions' and the API's logs are kept.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * An address e-mailed every alarm, paging and ticket alike (besides `config.alarms`).
   * @default - `config.balance.email`; none when that is unset too
   */
  readonly alarmEmail?: string;
  /**
   * Request limits for the webhook endpoint (the API's default route settings).
   * @default { rateLimit: 50, burstLimit: 100 }
   */
  readonly throttle?: RelayThrottle;
  /**
   * The largest webhook body ingest accepts, in bytes (`MAX_BODY_BYTES`).
   * @default {@link MAX_BODY_BYTES}
   */
  readonly maxBodyBytes?: number;
  /**
   * What happens to the table and the secret when the stack is deleted. The records are the
   * relay's log, and the secret holds keys nobody can recover, so both are kept by default.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * An existing table to use instead of creating one: the table a destroyed stack of this
   * environment kept (its old `TableName` output), or a point-in-time restore of it. The stack
   * neither creates, changes nor deletes it: its stream feeds the sender, the functions are
   * granted on it, and its limit counters, dedupe guards and records carry on.
   * @default - a new table, created and kept by the stack
   */
  readonly existingTable?: ExistingTable;
  /**
   * The two named secrets (`secretName` and `<secretName>/provider`) exist already, e.g. kept by a
   * destroyed stack of this environment: the stack uses them, values and all, instead of creating
   * them (a create would fail on the names).
   * @default false
   */
  readonly existingSecrets?: boolean;
  /**
   * Keep the indexes this version replaced (`TABLE.retiredIndexes`: `byState`, all attributes)
   * beside their replacements. CloudFormation adds or deletes one index per update, so a stack
   * deployed before the replacement is upgraded in two deploys: the first with `true` adds the new
   * index, the second with `false` (`cdk deploy -c keepRetiredIndexes=false`) deletes the old one.
   * A new stack starts without them; only the first deploy of that upgrade sets `true`
   * (`-c keepRetiredIndexes=true`), so no later plain deploy adds them back.
   * @default false
   */
  readonly keepRetiredIndexes?: boolean;
  /**
   * The sender's reserved concurrency (`deploy.senderConcurrency`): what other functions in the
   * account (another environment's included) can never take from it, and the most it runs at once.
   * @default - none: the sender shares the account's unreserved concurrency
   */
  readonly senderConcurrency?: number;
}

/** A table the stack adopts instead of creating (see `SmsRelayProps.existingTable`). */
export interface ExistingTable {
  readonly tableName: string;
  /** The table's stream (NEW_IMAGE or NEW_AND_OLD_IMAGES), which the sender reads. */
  readonly tableStreamArn: string;
}

/**
 * Reserved concurrency of the functions that take one: the sweeper runs two at most, a run staying
 * for its paging steps (`SWEEP_RUN.pagingWatchMs`, past the next run's start) and the next run; their
 * sends never overlap (`SWEEP_RUN.stepsMs`), and the paging steps' conditional writes record each
 * step once.
 */
export const RESERVED_CONCURRENCY = { sweeper: 2 } as const;

/**
 * The sweeper's asynchronous invocations (its schedule's events): never retried, and dropped (to
 * the dead-letter queue) when they could not start within a minute, since the next run is a minute
 * away anyway; Lambda's default retries a throttled event for up to 6 hours, a sweep long stale.
 */
export const SWEEPER_ASYNC_INVOKE = { retryAttempts: 0, maxEventAgeSeconds: 60 } as const;

/** Memory defaults, MB: the scheduled balance check makes one provider call; the others parse, template and send. */
export const DEFAULT_MEMORY_MB = {
  ingest: 256,
  sender: 256,
  sweeper: 256,
  'balance-watch': 128,
} as const satisfies Record<HandlerName, number>;

/** Where the handlers are bundled when no `bundleDir` is given. */
export const DEFAULT_BUNDLE_DIR = 'dist/handlers';
export const DEFAULT_THROTTLE = { rateLimit: 50, burstLimit: 100 } as const;
/**
 * The acknowledge link's own limits (`GET` and `POST /a/{token}`, each): a person presses a button,
 * so a few a second is plenty, and a flood of guessed tokens is refused there without touching the
 * webhooks' limits.
 */
export const ACK_THROTTLE = { rateLimit: 5, burstLimit: 10 } as const;
export {
  BALANCE_SCHEDULE as DEFAULT_BALANCE_SCHEDULE,
  MAX_BODY_BYTES,
  SWEEP_SCHEDULE,
} from '../functions/core/defaults';

// API Gateway base64-encodes binary bodies into the 6 MB synchronous Lambda payload.
const MAX_BODY_BYTES_LIMIT = 4 * 1024 * 1024;

const TIMEOUTS = Object.fromEntries(
  Object.entries(HANDLER_TIMEOUT_SECONDS).map(([name, seconds]) => [name, Duration.seconds(seconds)]),
) as Record<HandlerName, Duration>;

/**
 * The whole relay for one environment: webhook endpoint, message table, sender on the table's
 * stream, sweeper and balance watch on schedules, the environment's secret, alarms and a dashboard.
 *
 * @example
 * ```ts
 * const { config, text } = readEnvironmentConfig('prod');
 * const relay = new SmsRelay(stack, 'Relay', { environmentName: 'prod', config, configText: text });
 * new CfnOutput(stack, 'WebhookUrl', { value: relay.webhookUrl });
 * ```
 */
export class SmsRelay extends Construct {
  /** The message table: created by the stack, or an existing one adopted (`existingTable`). */
  public readonly table: dynamodb.ITable;
  /** The route secrets (ingest's): each route's secret name to its value. */
  public readonly secret: secretsmanager.ISecret;
  /** The route secrets' name, for `put-secret-value`: `secrets`, else `sms-relay/<env>`. */
  public readonly secretName: string;
  /** The provider key (the sender's, the sweeper's and the balance watch's): `{ "providerApiKey": "…" }`. */
  public readonly providerSecret: secretsmanager.ISecret;
  /** The provider key's secret name: `<secretName>/provider`. */
  public readonly providerSecretName: string;
  /** The table's global secondary indexes, as deployed. */
  public readonly indexNames: readonly string[];
  public readonly api: apigwv2.HttpApi;
  public readonly stage: apigwv2.HttpStage;
  /** The webhook endpoint's access logs (JSON, one line per request). */
  public readonly accessLogs: logs.LogGroup;
  /** `https://…/hooks/`: append a route id. */
  public readonly webhookUrl: string;
  public readonly functions: Readonly<Record<HandlerName, lambda.Function>>;
  /** Stream records the sender gave up on. */
  public readonly failureQueue: sqs.Queue;
  /** Failed asynchronous deliveries: schedule events, scheduled runs, alarm e-mails. */
  public readonly deadLetterQueue: sqs.Queue;
  public readonly observability: RelayObservability;

  public constructor(scope: Construct, id: string, props: SmsRelayProps) {
    super(scope, id);
    const { config, environmentName } = props;
    this.maxPerSecond = config.provider.maxPerSecond;
    const throttle = { ...DEFAULT_THROTTLE, ...props.throttle };
    const maxBodyBytes = props.maxBodyBytes ?? MAX_BODY_BYTES;
    const memory = { ...DEFAULT_MEMORY_MB, ...props.memorySize };
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    validateProps(throttle, maxBodyBytes, memory, props.senderConcurrency);
    const balanceSchedule = config.balance?.schedule ?? BALANCE_SCHEDULE;
    const scheduleIssue = scheduleProblem(balanceSchedule);
    // The config is valid by its schema but would fail the deploy, or could not work deployed:
    // report it like any config problem.
    const problems = [
      ...(scheduleIssue === undefined ? [] : [`balance.schedule: ${scheduleIssue}`]),
      ...deployProblems(config),
    ];
    if (problems.length > 0) throw new ConfigError(`config (${environmentName})`, problems);
    this.secretName = secretName(environmentName, config);
    this.providerSecretName = providerSecretName(this.secretName);

    const keepRetiredIndexes = props.keepRetiredIndexes ?? false;
    this.table =
      props.existingTable === undefined
        ? this.createTable(removalPolicy, keepRetiredIndexes)
        : dynamodb.Table.fromTableAttributes(this, 'Table', props.existingTable);
    this.indexNames = tableIndexes(keepRetiredIndexes).map((index) => index.name);
    const existingSecrets = props.existingSecrets ?? false;
    this.secret = this.createSecret(
      'Secret',
      this.secretName,
      `sms-relay ${environmentName}: route secrets, JSON of each route's secret name to its value (read by ingest only); set it with put-secret-value from a file`,
      { removalPolicy, existing: existingSecrets },
    );
    this.providerSecret = this.createSecret(
      'ProviderSecret',
      this.providerSecretName,
      `sms-relay ${environmentName}: the SMS provider key, JSON {"providerApiKey": "..."} (read by the sender, sweeper and balance watch only); set it with put-secret-value from a file`,
      { removalPolicy, existing: existingSecrets },
    );
    // An adopted secret is named by its name: its ARN ends in a suffix the template cannot know.
    const secretId = (secret: secretsmanager.ISecret, name: string): string =>
      existingSecrets ? name : secret.secretArn;
    this.failureQueue = this.createQueue(
      'FailureQueue',
      'the sender gave up on these stream records; their messages may be unsent',
    );
    // AwsSolutions-SQS3 recognises queues named in a DeadLetterConfig, but not an event source's
    // on-failure destination.
    Validations.of(this.failureQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "The failure queue is the dead-letter destination of the sender's stream event source; a queue behind it would never receive anything.",
    });
    this.deadLetterQueue = this.createQueue(
      'DeadLetterQueue',
      'failed asynchronous deliveries: schedule events, scheduled runs and alarm e-mails',
    );

    const bundleDir = props.bundleDir ?? DEFAULT_BUNDLE_DIR;
    if (props.bundleDir === undefined) bundleHandlers({ outDir: DEFAULT_BUNDLE_DIR });
    const common = {
      TABLE_NAME: this.table.tableName,
      RELAY_CONFIG: RELAY_CONFIG_FILE,
      POWERTOOLS_SERVICE_NAME: METRICS.service,
      // One namespace per environment: no other stack's alarms read these figures.
      POWERTOOLS_METRICS_NAMESPACE: metricsNamespace(environmentName),
    };
    // Each function is told of (and granted) only its own secret: ingest the route secrets, the
    // functions that call the SMS service the provider key.
    const provider = {
      PROVIDER_BASE_URL: config.provider.baseUrl,
      [ENV.providerSecretId]: secretId(this.providerSecret, this.providerSecretName),
    };
    const environments: Record<HandlerName, Record<string, string>> = {
      ingest: {
        ...common,
        [ENV.secretId]: secretId(this.secret, this.secretName),
        MAX_BODY_BYTES: String(maxBodyBytes),
      },
      sender: { ...common, ...provider },
      sweeper: { ...common, ...provider },
      'balance-watch': {
        ...common,
        ...provider,
        ...(config.balance === undefined ? {} : { BALANCE_THRESHOLD: String(config.balance.threshold) }),
      },
    };
    const descriptions: Record<HandlerName, string> = {
      ingest: 'Authenticates webhooks and records the messages they produce',
      sender: 'Sends newly recorded messages through the SMS provider',
      sweeper: "Every minute: paging's clock and the sends' safety net (the steps of SWEEP_STEPS)",
      'balance-watch': 'Checks the SMS provider balance and warns when it runs low',
    };

    const relayFunctions = Object.fromEntries(
      HANDLER_NAMES.map((name) => [
        name,
        new RelayFunction(this, pascalCase(name), {
          handlerName: name,
          description: `sms-relay ${environmentName}: ${descriptions[name]}`,
          bundleDir: join(bundleDir, name),
          configText: props.configText,
          memorySize: memory[name],
          timeout: TIMEOUTS[name],
          environment: environments[name],
          logRetention,
          reservedConcurrentExecutions:
            name === 'sender' ? props.senderConcurrency : name === 'sweeper' ? RESERVED_CONCURRENCY.sweeper : undefined,
          // Only the scheduled functions are invoked asynchronously.
          deadLetterQueue: name === 'sweeper' || name === 'balance-watch' ? this.deadLetterQueue : undefined,
        }),
      ]),
    ) as Record<HandlerName, RelayFunction>;
    this.functions = {
      ingest: relayFunctions.ingest.fn,
      sender: relayFunctions.sender.fn,
      sweeper: relayFunctions.sweeper.fn,
      'balance-watch': relayFunctions['balance-watch'].fn,
    };
    for (const name of HANDLER_NAMES) this.grantAccess(this.functions[name], name);
    this.functions.sweeper.configureAsyncInvoke({
      retryAttempts: SWEEPER_ASYNC_INVOKE.retryAttempts,
      maxEventAge: Duration.seconds(SWEEPER_ASYNC_INVOKE.maxEventAgeSeconds),
      // A dropped event is recorded where a failed one is: DeadLetterQueueNotEmpty alarms.
      onFailure: new destinations.SqsDestination(this.deadLetterQueue),
    });

    Validations.of(this.functions.ingest).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'API Gateway invokes ingest synchronously, so a dead-letter queue would never receive anything; a failed webhook is answered with a 5xx and its sender retries.',
    });
    Validations.of(this.functions.sender).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'The stream event source invokes the sender synchronously; records that exhaust their retries go to the event source on-failure destination (the failure queue) instead.',
    });

    ({
      api: this.api,
      stage: this.stage,
      accessLogs: this.accessLogs,
    } = this.createApi(environmentName, this.functions.ingest, throttle, logRetention));
    this.webhookUrl = `${this.stage.url}hooks/`;

    this.connectSender(this.functions.sender, relayFunctions.sender.role);
    this.schedule('SweepSchedule', SWEEP_SCHEDULE, this.functions.sweeper);
    this.schedule('BalanceSchedule', balanceSchedule, this.functions['balance-watch']);

    this.observability = new RelayObservability(this, 'Observability', {
      environmentName,
      namespace: metricsNamespace(environmentName),
      functions: this.functions,
      table: this.table,
      indexNames: this.indexNames,
      secretNames: { routes: this.secretName, provider: this.providerSecretName },
      accessLogs: this.accessLogs,
      failureQueue: this.failureQueue,
      deadLetterQueue: this.deadLetterQueue,
      stage: this.stage,
      balanceThreshold: config.balance?.threshold,
      balanceSchedule,
      routes: Object.keys(config.routes),
      providers: providerAlarmTargets(config),
      alarmEmail: props.alarmEmail ?? config.balance?.email,
      ...(config.alarms === undefined
        ? {}
        : { subscribers: { page: config.alarms.page, ticket: config.alarms.ticket } }),
      criticalRoutes: Object.entries(config.routes)
        .filter(([, route]) => route.priority === RoutePriority.Critical)
        .map(([id]) => id),
      ...(config.alarms?.deliveryLatencyP99 === undefined
        ? {}
        : { deliveryLatencyP99Seconds: config.alarms.deliveryLatencyP99 }),
    });
  }

  private createTable(removalPolicy: RemovalPolicy, keepRetiredIndexes: boolean): dynamodb.Table {
    const key = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });
    const table = new dynamodb.Table(this, 'Table', {
      partitionKey: key(TABLE.partitionKey),
      sortKey: key(TABLE.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // A table the stack keeps is the relay's log, counters and guards: nothing deletes it by
      // mistake, a console click or a stray delete-table included. A throw-away one (onDelete:
      // destroy) must go with its stack.
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
      timeToLiveAttribute: TABLE.timeToLive,
      // The sender needs only the record as written; old images would double every update's stream record.
      stream: dynamodb.StreamViewType.NEW_IMAGE,
      removalPolicy,
    });
    const indexes = tableIndexes(keepRetiredIndexes);
    for (const index of indexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: key(index.partitionKey),
        sortKey: key(index.sortKey),
        projectionType: dynamodb.ProjectionType[index.projection],
        ...(index.projection === 'INCLUDE' ? { nonKeyAttributes: [...index.attributes] } : {}),
      });
    }
    return table;
  }

  private createSecret(
    id: string,
    name: string,
    description: string,
    { removalPolicy, existing }: { readonly removalPolicy: RemovalPolicy; readonly existing: boolean },
  ): secretsmanager.ISecret {
    if (existing) return secretsmanager.Secret.fromSecretNameV2(this, id, name);
    // Created here so one deploy builds everything; the value is never in the template. Secrets
    // Manager generates a throwaway JSON placeholder until `put-secret-value` replaces it.
    const secret = new secretsmanager.Secret(this, id, {
      secretName: name,
      description,
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'placeholder', excludePunctuation: true },
      removalPolicy,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The provider API key is issued in the SMS provider dashboard and the route secrets are shared with the webhook senders; neither can be rotated by a Lambda, so rotation is a manual put-secret-value.',
    });
    return secret;
  }

  private createQueue(id: string, purpose: string): sqs.Queue {
    const queue = new sqs.Queue(this, id, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(queue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason: `This queue is itself a dead-letter destination (${purpose}); nothing consumes it automatically, so a redrive policy would have nothing to act on.`,
    });
    return queue;
  }

  private grantAccess(fn: lambda.Function, name: HandlerName): void {
    for (const grant of TABLE_ACCESS[name] as readonly TableGrant[]) {
      const indexes = grant.indexes ?? [];
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          actions: [...grant.actions],
          resources:
            indexes.length === 0
              ? [this.table.tableArn]
              : indexes.map((index) => `${this.table.tableArn}/index/${index}`),
          // Writes only to the item kinds the function's code writes: an ingest bug (it faces the
          // internet) cannot touch the balance, the limits or the circuit.
          ...(grant.writes === undefined
            ? {}
            : { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...grant.writes] } } }),
        }),
      );
    }
    const secret = SECRET_ACCESS[name] === 'routes' ? this.secret : this.providerSecret;
    // An adopted secret's ARN lacks the six-character suffix Secrets Manager adds to every name.
    const resource = secret.secretFullArn === undefined ? `${secret.secretArn}-??????` : secret.secretArn;
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: [...SECRET_READ_ACTIONS], resources: [resource] }));
  }

  private createApi(
    environmentName: string,
    ingest: lambda.IFunction,
    throttle: Required<RelayThrottle>,
    logRetention: logs.RetentionDays,
  ): { api: apigwv2.HttpApi; stage: apigwv2.HttpStage; accessLogs: logs.LogGroup } {
    const api = new apigwv2.HttpApi(this, 'Api', {
      apiName: `sms-relay-${environmentName}`,
      description: `sms-relay ${environmentName} webhook endpoint`,
      // The stage is added below: the default one cannot be given throttling or access logs.
      createDefaultStage: false,
    });
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', { retention: logRetention });
    const stage = api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: { destination: new apigwv2.LogGroupLogDestination(accessLogs), format: ACCESS_LOG_FORMAT },
    });
    const integration = new HttpLambdaIntegration('Ingest', ingest, {
      payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
    });
    const ackMethods = [apigwv2.HttpMethod.GET, apigwv2.HttpMethod.POST];
    const ackRoutes = api.addRoutes({ path: ACK_ROUTE_PATH, methods: ackMethods, integration });
    const routes = [
      ...api.addRoutes({ path: '/hooks/{route}', methods: [apigwv2.HttpMethod.POST], integration }),
      // A route's API below its URL (Opsgenie's alert API on an opsgenie route); ingest answers 404 elsewhere.
      ...api.addRoutes({ path: '/hooks/{route}/{proxy+}', methods: [apigwv2.HttpMethod.ANY], integration }),
      // Paging's acknowledge link: GET shows the incident, POST acknowledges; the token in the path is its credential.
      ...ackRoutes,
    ];
    // Route settings name route keys, which must exist when the stage is updated.
    (stage.node.defaultChild as apigwv2.CfnStage).routeSettings = Object.fromEntries(
      ackMethods.map((method) => [
        `${method} ${ACK_ROUTE_PATH}`,
        { ThrottlingRateLimit: ACK_THROTTLE.rateLimit, ThrottlingBurstLimit: ACK_THROTTLE.burstLimit },
      ]),
    );
    for (const route of ackRoutes) stage.node.addDependency(route);
    const reason =
      "Webhook senders (Alertmanager, GitHub, Shopify, …) cannot use IAM or Cognito; each route authenticates its sender in ingest with the HMAC signature or token configured for the route (below a route, its API: the same credential, Opsgenie's GenieKey). The acknowledge link (/a/{token}) is opened from an SMS on a phone: its unguessable 128-bit token is the credential.";
    for (const route of routes) {
      Validations.of(route).acknowledge({ id: 'AwsSolutions-APIG4', reason });
    }
    return { api, stage, accessLogs };
  }

  /** `provider.maxPerSecond`: the sender's stream parallelization follows it. */
  private readonly maxPerSecond: number | undefined;

  /**
   * The sender on the table's stream: one event source mapping per lane (`Lane`), each filtered to
   * the records of its lane, so an alert never waits behind bulk records in a shard's batches (a
   * DynamoDB stream takes two Lambda readers per shard). Both run the one sender function; the bulk
   * mapping keeps the logical id the single mapping had, so an upgrade updates it in place.
   */
  private connectSender(sender: lambda.Function, role: iam.Role): void {
    const streamArn = this.table.tableStreamArn;
    if (streamArn === undefined) throw new Error('SmsRelay: the table has no stream for the sender');
    for (const lane of Object.values(Lane)) {
      sender.addEventSourceMapping(
        lane === Lane.Bulk ? SINGLE_MAPPING_ID(this.table) : `CriticalLane${SINGLE_MAPPING_ID(this.table)}`,
        {
          eventSourceArn: streamArn,
          startingPosition: lambda.StartingPosition.LATEST,
          batchSize: STREAM.batchSize,
          // Left out at 0: the mapping's default is no window.
          ...(STREAM.maxBatchingWindowSeconds > 0
            ? { maxBatchingWindow: Duration.seconds(STREAM.maxBatchingWindowSeconds) }
            : {}),
          // Enough batches per shard for provider.maxPerSecond (see functions/core/provider-rate.ts).
          parallelizationFactor: streamParallelization(this.maxPerSecond),
          bisectBatchOnError: true,
          retryAttempts: STREAM.retryAttempts,
          reportBatchItemFailures: true,
          onFailure: new SqsDlq(this.failureQueue),
          filters: senderFilters(lane),
        },
      );
    }
    this.table.grantStreamRead(sender);
    const reason =
      'dynamodb:ListStreams has no resource-level permissions, so the stream event source must grant it on "*"; every other stream action is scoped to this table\'s stream.';
    Validations.of(role).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason });
  }

  private schedule(id: string, expression: string, fn: lambda.IFunction): void {
    new events.Rule(this, id, {
      schedule: events.Schedule.expression(expression),
      targets: [
        new targets.LambdaFunction(fn, {
          deadLetterQueue: this.deadLetterQueue,
          retryAttempts: 2,
          maxEventAge: Duration.hours(1),
        }),
      ],
    });
  }
}

const ACK_ROUTE_PATH = '/a/{token}';

/** The id `DynamoEventSource` gave the sender's one mapping before lanes: kept by the bulk lane's. */
const SINGLE_MAPPING_ID = (table: dynamodb.ITable): string => `DynamoDBEventSource:${Names.nodeUniqueId(table.node)}`;

/**
 * The stream filters of a lane's mapping: new messages, redriven ones (a requeue is the only write
 * leaving a message PENDING with no attempt: a retry or a recovery is PENDING after an attempt) and
 * woken ones (the sweeper's `wake`: a record that waited through an outage), so each goes out at
 * the sender's rate, not the sweeper's. The sender's other updates (and the sweeper's) must not
 * re-trigger it; an event twice is harmless, as the claim is conditional.
 */
export function senderFilters(lane: Lane): Record<string, unknown>[] {
  const pendingIn = {
    [TABLE.indexes.byState.partitionKey]: { S: lambda.FilterRule.isEqual(MessageState.Pending) },
    lane: { S: lambda.FilterRule.isEqual(lane) },
  };
  return [
    lambda.FilterCriteria.filter({ eventName: lambda.FilterRule.isEqual('INSERT'), dynamodb: { NewImage: pendingIn } }),
    lambda.FilterCriteria.filter({
      eventName: lambda.FilterRule.isEqual('MODIFY'),
      // Stream images carry numbers as strings.
      dynamodb: { NewImage: { ...pendingIn, attempts: { N: lambda.FilterRule.isEqual('0') } } },
    }),
    lambda.FilterCriteria.filter({
      eventName: lambda.FilterRule.isEqual('MODIFY'),
      dynamodb: { NewImage: { ...pendingIn, wokenAt: { S: lambda.FilterRule.exists() } } },
    }),
  ];
}

// JSON so it can be queried in Logs Insights. The query string is left out: some senders put
// their token there. So is the path: an acknowledge link's path is its credential (the route key,
// `GET /a/{token}`, says which endpoint; ingest's own log lines name a webhook's route).
export const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    time: '$context.requestTime',
    ip: '$context.identity.sourceIp',
    userAgent: '$context.identity.userAgent',
    method: '$context.httpMethod',
    routeKey: '$context.routeKey',
    status: '$context.status',
    responseLength: '$context.responseLength',
    latencyMs: '$context.responseLatency',
    integrationStatus: '$context.integrationStatus',
    integrationLatencyMs: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
  }),
);

/** The table's indexes: the current ones, and the retired ones while an upgrade keeps them. */
type TableIndex =
  | (typeof TABLE.indexes)[keyof typeof TABLE.indexes]
  | (typeof TABLE.retiredIndexes)[keyof typeof TABLE.retiredIndexes];
function tableIndexes(keepRetiredIndexes: boolean): TableIndex[] {
  return [...Object.values(TABLE.indexes), ...(keepRetiredIndexes ? Object.values(TABLE.retiredIndexes) : [])];
}

function validateProps(
  throttle: Required<RelayThrottle>,
  maxBodyBytes: number,
  memory: Record<HandlerName, number>,
  senderConcurrency: number | undefined,
): void {
  const problems: string[] = [];
  if (senderConcurrency !== undefined && !(Number.isInteger(senderConcurrency) && senderConcurrency >= 1)) {
    problems.push(`senderConcurrency must be a whole number ≥ 1 (got ${senderConcurrency})`);
  }
  if (!(throttle.rateLimit > 0)) problems.push(`throttle.rateLimit must be above 0 (got ${throttle.rateLimit})`);
  if (!Number.isInteger(throttle.burstLimit) || throttle.burstLimit < 0)
    problems.push(`throttle.burstLimit must be a whole number ≥ 0 (got ${throttle.burstLimit})`);
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1 || maxBodyBytes > MAX_BODY_BYTES_LIMIT) {
    problems.push(`maxBodyBytes must be a whole number from 1 to ${MAX_BODY_BYTES_LIMIT} (got ${maxBodyBytes})`);
  }
  for (const name of HANDLER_NAMES) {
    const mb = memory[name];
    if (!Number.isInteger(mb) || mb < 128 || mb > 10_240)
      problems.push(`memorySize.${name} must be a whole number of MB from 128 to 10240 (got ${mb})`);
  }
  if (problems.length > 0) throw new Error(`SmsRelay: ${problems.join('; ')}`);
}
