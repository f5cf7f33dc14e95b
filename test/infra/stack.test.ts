import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ConfigError } from '../../functions/core/config/errors';
import { HANDLER_NAMES, type HandlerName } from '../../infra/bundle';
import { RelayMetric } from '../../functions/core/metrics';
import { PROD_CLOUDWATCH } from '../../bench/cost';
import { type FilterPattern as Pattern, matchesPattern as matches } from '../helpers/event-filter';
import {
  bundleForTests,
  configText,
  resourcesOfType,
  synthStack,
  type CfnResourceJson,
  type TestStack,
} from './support';

let bundle: ReturnType<typeof bundleForTests>;
let prod: TestStack;
let dev: TestStack;

beforeAll(() => {
  bundle = bundleForTests();
  prod = synthStack('prod', configText('prod'), bundle.dir);
  dev = synthStack('dev', configText('dev'), bundle.dir);
});

// No `balance` block at all.
const MINIMAL_CONFIG = `
provider: { baseUrl: "https://sms.example.co.tz" }
secrets: sms-relay/minimal
routes:
  ci: { source: github, secret: gh, recipients: ["+255712345678"] }
`;

const props = (resource: CfnResourceJson | undefined): Record<string, unknown> => {
  expect(resource).toBeDefined();
  return resource?.Properties ?? {};
};
const fn = (stack: TestStack, name: HandlerName): Record<string, unknown> =>
  props(stack.resources[stack.functionId(name)]);
const fnEnvironment = (stack: TestStack, name: HandlerName): Record<string, unknown> =>
  (fn(stack, name)['Environment'] as { Variables: Record<string, unknown> }).Variables;
const REF_TYPES = {
  RelayTable: 'AWS::DynamoDB::Table',
  RelaySecret: 'AWS::SecretsManager::Secret',
  RelayProviderSecret: 'AWS::SecretsManager::Secret',
  RelayFailureQueue: 'AWS::SQS::Queue',
} as const;
const ref = (stack: TestStack, logicalIdPrefix: keyof typeof REF_TYPES): { Ref: string } => {
  const ids = resourcesOfType(stack.resources, REF_TYPES[logicalIdPrefix])
    .map(([id]) => id)
    .filter((id) => id.startsWith(logicalIdPrefix));
  expect(ids).toHaveLength(1);
  return { Ref: ids[0] ?? '' };
};

describe('stack', () => {
  it('is named SmsRelay-<env>', () => {
    expect(prod.stack.stackName).toBe('SmsRelay-prod');
    expect(dev.stack.stackName).toBe('SmsRelay-dev');
  });

  it('outputs the webhook base URL, ending in /hooks/ for the route id to be appended', () => {
    const output = prod.template.findOutputs('WebhookUrl');
    const parts = (output['WebhookUrl']!['Value'] as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    expect(parts[0]).toBe('https://');
    expect(parts.at(-1)).toBe('/hooks/');
    const [apiId] = resourcesOfType(prod.resources, 'AWS::ApiGatewayV2::Api')[0] ?? [];
    expect(parts).toContainEqual({ Ref: apiId });
  });

  it('outputs the secret id as configured, for put-secret-value', () => {
    prod.template.hasOutput('SecretId', { Value: 'sms-relay/prod' });
  });
});

describe('webhook endpoint', () => {
  it('routes POST /hooks/{route} to ingest, with no IAM or Cognito authorizer', () => {
    prod.template.resourceCountIs('AWS::ApiGatewayV2::Route', 4);
    prod.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'POST /hooks/{route}',
      AuthorizationType: 'NONE',
    });
    // A route's API below its URL (Opsgenie's alert API): every method to the same ingest integration.
    const integration = resourcesOfType(prod.resources, 'AWS::ApiGatewayV2::Integration')[0]![0];
    prod.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'ANY /hooks/{route}/{proxy+}',
      AuthorizationType: 'NONE',
      Target: { 'Fn::Join': ['', ['integrations/', { Ref: integration }]] },
    });
    prod.template.resourceCountIs('AWS::ApiGatewayV2::Integration', 1);
    prod.template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: { 'Fn::GetAtt': [prod.functionId('ingest'), 'Arn'] },
    });
  });

  it('routes GET and POST /a/{token} (the acknowledge link) to the same ingest integration, public', () => {
    const integration = resourcesOfType(prod.resources, 'AWS::ApiGatewayV2::Integration')[0]![0];
    for (const method of ['GET', 'POST']) {
      prod.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        RouteKey: `${method} /a/{token}`,
        AuthorizationType: 'NONE',
        Target: { 'Fn::Join': ['', ['integrations/', { Ref: integration }]] },
      });
    }
  });

  it('throttles the default stage and writes JSON access logs', () => {
    prod.template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    const [, stage] = resourcesOfType(prod.resources, 'AWS::ApiGatewayV2::Stage')[0] ?? [];
    const stageProps = props(stage);
    expect(stageProps['StageName']).toBe('$default');
    expect(stageProps['DefaultRouteSettings']).toEqual({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
    const accessLogs = stageProps['AccessLogSettings'] as { Format: string; DestinationArn: unknown };
    const format = JSON.parse(accessLogs.Format) as Record<string, string>;
    expect(format['requestId']).toBe('$context.requestId');
    expect(Object.values(format)).not.toContain('$context.querystring');
    // No variable that holds the path: an acknowledge link's path is its token.
    expect(accessLogs.Format).not.toMatch(/\$context\.(path|resourcePath)|\$request\.path/);
    expect(format['routeKey']).toBe('$context.routeKey');
    expect(accessLogs.DestinationArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^RelayApiAccessLogs/), 'Arn'] });
  });

  it('throttles the acknowledge link on its own routes (5 a second, bursts of 10), apart from the webhooks', () => {
    const [id, stage] = resourcesOfType(prod.resources, 'AWS::ApiGatewayV2::Stage')[0] ?? [];
    expect(props(stage)['RouteSettings']).toEqual({
      'GET /a/{token}': { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 },
      'POST /a/{token}': { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 },
    });
    // The stage names those route keys: CloudFormation creates the routes first.
    const ackRoutes = resourcesOfType(prod.resources, 'AWS::ApiGatewayV2::Route')
      .filter(([, route]) => String(props(route)['RouteKey']).endsWith('/a/{token}'))
      .map(([routeId]) => routeId);
    expect(ackRoutes).toHaveLength(2);
    expect(stage!.DependsOn).toEqual(expect.arrayContaining(ackRoutes));
    expect(id).toBeDefined();
  });

  it('takes throttle limits from the props', () => {
    const custom = synthStack('prod', configText('prod'), bundle.dir, { throttle: { rateLimit: 5 } });
    custom.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 100 },
    });
  });
});

describe('functions', () => {
  const expected = {
    ingest: { MemorySize: 256, Timeout: 10 },
    sender: { MemorySize: 256, Timeout: 60 },
    sweeper: { MemorySize: 256, Timeout: 90 },
    'balance-watch': { MemorySize: 128, Timeout: 30 },
  } as const satisfies Record<HandlerName, object>;

  it.each(HANDLER_NAMES)('%s runs nodejs22.x on arm64 with its memory and time-out', (name) => {
    expect(fn(prod, name)).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      ...expected[name],
    });
  });

  it('has exactly four functions, each logging to its own log group kept one month by default', () => {
    prod.template.resourceCountIs('AWS::Lambda::Function', 4);
    for (const name of HANDLER_NAMES) {
      const logGroup = (fn(prod, name)['LoggingConfig'] as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(props(prod.resources[logGroup])['RetentionInDays']).toBe(30);
    }
    prod.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });

  it('takes memory sizes and log retention from the props', () => {
    const custom = synthStack('prod', configText('prod'), bundle.dir, {
      memorySize: { sender: 512 },
      logRetention: RetentionDays.ONE_WEEK,
    });
    expect(fn(custom, 'sender')['MemorySize']).toBe(512);
    expect(fn(custom, 'ingest')['MemorySize']).toBe(256);
    custom.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
  });

  it('gives every function the table and the packaged config, ingest the route secrets, the others the provider key, and each only what it uses besides', () => {
    const common = {
      TABLE_NAME: ref(prod, 'RelayTable'),
      RELAY_CONFIG: 'relay-config.json',
      POWERTOOLS_SERVICE_NAME: 'sms-relay',
      POWERTOOLS_METRICS_NAMESPACE: 'SmsRelay/prod',
    };
    const provider = {
      PROVIDER_BASE_URL: 'https://sms.example.co.tz',
      PROVIDER_SECRET_ID: ref(prod, 'RelayProviderSecret'),
    };
    expect(fnEnvironment(prod, 'ingest')).toEqual({
      ...common,
      SECRET_ID: ref(prod, 'RelaySecret'),
      MAX_BODY_BYTES: '262144',
    });
    expect(fnEnvironment(prod, 'sender')).toEqual({ ...common, ...provider });
    expect(fnEnvironment(prod, 'sweeper')).toEqual({ ...common, ...provider });
    expect(fnEnvironment(prod, 'balance-watch')).toEqual({ ...common, ...provider, BALANCE_THRESHOLD: '5000' });
  });

  it("reserves two concurrent sweeps (a run staying for its paging steps and the next), and the sender's concurrency only when deploy.senderConcurrency sets it", () => {
    expect(fn(prod, 'sweeper')['ReservedConcurrentExecutions']).toBe(2);
    for (const name of ['ingest', 'balance-watch'] as const)
      expect(fn(prod, name)['ReservedConcurrentExecutions']).toBeUndefined();
    expect(
      fn(synthStack('dev', configText('dev'), bundle.dir), 'sender')['ReservedConcurrentExecutions'],
    ).toBeUndefined();
    expect(fn(prod, 'sender')['ReservedConcurrentExecutions']).toBe(10);
    expect(() =>
      synthStack('prod', configText('prod').replace('senderConcurrency: 10', 'senderConcurrency: 0'), bundle.dir),
    ).toThrow(/deploy\.senderConcurrency/);
  });

  it('sets MAX_BODY_BYTES from the props and refuses sizes Lambda cannot carry', () => {
    const custom = synthStack('prod', configText('prod'), bundle.dir, { maxBodyBytes: 65_536 });
    expect(fnEnvironment(custom, 'ingest')['MAX_BODY_BYTES']).toBe('65536');
    expect(() => synthStack('prod', configText('prod'), bundle.dir, { maxBodyBytes: 8 * 1024 * 1024 })).toThrow(
      /maxBodyBytes must be a whole number from 1 to 4194304/,
    );
    expect(() => synthStack('prod', configText('prod'), bundle.dir, { memorySize: { ingest: 64 } })).toThrow(
      /memorySize.ingest/,
    );
  });

  it('packages the config with the code: a config change changes every function package', () => {
    const key = (stack: TestStack, name: HandlerName): string => (fn(stack, name)['Code'] as { S3Key: string }).S3Key;
    const edited = synthStack(
      'prod',
      configText('prod').replace('retentionDays: 180', 'retentionDays: 181'),
      bundle.dir,
    );
    // The package holds the validated config, so a comment changes nothing deployed.
    const commented = synthStack('prod', `${configText('prod')}\n# edited\n`, bundle.dir);
    for (const name of HANDLER_NAMES) {
      expect(key(edited, name)).not.toBe(key(prod, name));
      expect(key(commented, name)).toBe(key(prod, name));
    }
  });

  it('bundles the handlers into dist/handlers during synth when given no bundle directory', () => {
    const start = Date.now() - 1000;
    const selfBundled = synthStack('prod', configText('prod'), undefined);
    for (const name of HANDLER_NAMES) {
      // Bundles are rewritten, so a stale dist/ cannot pass for this synth's.
      expect(statSync(join('dist', 'handlers', name, 'index.mjs')).mtimeMs).toBeGreaterThanOrEqual(start);
      expect(fn(selfBundled, name)['Handler']).toBe('index.handler');
    }
  });

  it("never retries the sweeper's schedule events, and drops one that could not start within a minute (the next run is due)", () => {
    const configs = resourcesOfType(prod.resources, 'AWS::Lambda::EventInvokeConfig');
    expect(configs.map(([, resource]) => resource.Properties)).toEqual([
      {
        FunctionName: { Ref: prod.functionId('sweeper') },
        Qualifier: '$LATEST',
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: 60,
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/^RelayDeadLetterQueue/), 'Arn'] } },
        },
      },
    ]);
  });

  it('sends failed asynchronous runs of the scheduled functions to the dead-letter queue, and only theirs', () => {
    const deadLetterQueue = { 'Fn::GetAtt': [expect.stringMatching(/^RelayDeadLetterQueue/), 'Arn'] };
    expect(fn(prod, 'sweeper')['DeadLetterConfig']).toEqual({ TargetArn: deadLetterQueue });
    expect(fn(prod, 'balance-watch')['DeadLetterConfig']).toEqual({ TargetArn: deadLetterQueue });
    expect(fn(prod, 'ingest')['DeadLetterConfig']).toBeUndefined();
    expect(fn(prod, 'sender')['DeadLetterConfig']).toBeUndefined();
  });
});

describe('sender stream', () => {
  const mappings = () => resourcesOfType(prod.resources, 'AWS::Lambda::EventSourceMapping');
  const patternsOf = (mapping: Parameters<typeof props>[0]): Pattern[] =>
    (props(mapping)['FilterCriteria'] as { Filters: { Pattern: string }[] }).Filters.map(
      (filter) => JSON.parse(filter.Pattern) as Pattern,
    );
  /** The mapping whose filters take the records of `lane`. */
  const mappingOf = (lane: string) => {
    const found = mappings().filter(([, mapping]) =>
      patternsOf(mapping).every(
        (pattern) =>
          JSON.stringify((pattern['dynamodb'] as { NewImage: { lane: unknown } }).NewImage.lane) ===
          JSON.stringify({ S: [lane] }),
      ),
    );
    expect(found, lane).toHaveLength(1);
    return found[0]!;
  };

  it('feeds the one sender through two mappings, one per lane, each with bounded, bisected retries', () => {
    prod.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    for (const lane of ['critical', 'bulk']) {
      expect(props(mappingOf(lane)[1]), lane).toMatchObject({
        FunctionName: { Ref: prod.functionId('sender') },
        EventSourceArn: { 'Fn::GetAtt': [ref(prod, 'RelayTable').Ref, 'StreamArn'] },
        StartingPosition: 'LATEST',
        BatchSize: 10,
        ParallelizationFactor: 2,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 3,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      expect(
        JSON.stringify(props(mappingOf(lane)[1])['DestinationConfig']),
        `${lane}: failed batches go to the failure queue`,
      ).toMatch(/"RelayFailureQueue[0-9A-F]+","Arn"/);
    }
  });

  it("keeps the single mapping's logical id for the bulk lane, so an upgrade updates it in place", () => {
    const [bulkId] = mappingOf('bulk');
    // The id DynamoEventSource gave the one mapping: the function's, 'DynamoDBEventSource', the table's unique id.
    expect(bulkId).toMatch(/^RelaySenderFunctionDynamoDBEventSourceSmsRelayprodRelayTable[0-9A-F]+$/);
    expect(mappingOf('critical')[0]).not.toBe(bulkId);
  });

  it("filters each lane's mapping to new, redriven and woken PENDING records of that lane", () => {
    for (const lane of ['critical', 'bulk']) {
      const pending = { state: { S: ['PENDING'] }, lane: { S: [lane] } };
      expect(patternsOf(mappingOf(lane)[1])).toEqual([
        { eventName: ['INSERT'], dynamodb: { NewImage: pending } },
        // A redrive: the store's requeue leaves the record PENDING with its attempts reset.
        { eventName: ['MODIFY'], dynamodb: { NewImage: { ...pending, attempts: { N: ['0'] } } } },
        // A wake: the sweeper hands back a record that waited through an outage.
        { eventName: ['MODIFY'], dynamodb: { NewImage: { ...pending, wokenAt: { S: [{ exists: true }] } } } },
      ]);
    }
  });

  it("lets a new, redriven or woken record through to its own lane's sender, and never a retry, a claim or a settled send", () => {
    const passes = (
      mappingLane: string,
      eventName: string,
      state: string,
      attempts: number,
      { lane = 'bulk', wokenAt }: { lane?: string; wokenAt?: string } = {},
    ): boolean =>
      patternsOf(mappingOf(mappingLane)[1]).some((pattern) =>
        matches(pattern, {
          eventName,
          dynamodb: {
            NewImage: {
              state: { S: state },
              attempts: { N: String(attempts) },
              lane: { S: lane },
              ...(wokenAt === undefined ? {} : { wokenAt: { S: wokenAt } }),
            },
          },
        }),
      );
    const woken = '2026-12-04T10:00:00.000Z';
    for (const lane of ['critical', 'bulk']) {
      const other = lane === 'critical' ? 'bulk' : 'critical';
      expect(passes(lane, 'INSERT', 'PENDING', 0, { lane })).toBe(true);
      expect(passes(other, 'INSERT', 'PENDING', 0, { lane })).toBe(false);
      expect(passes(lane, 'MODIFY', 'PENDING', 0, { lane })).toBe(true);
      expect(passes(other, 'MODIFY', 'PENDING', 0, { lane })).toBe(false);
      expect(passes(lane, 'MODIFY', 'PENDING', 2, { lane, wokenAt: woken })).toBe(true);
      expect(passes(other, 'MODIFY', 'PENDING', 2, { lane, wokenAt: woken })).toBe(false);
      expect(passes(lane, 'MODIFY', 'PENDING', 1, { lane })).toBe(false);
      expect(passes(lane, 'MODIFY', 'SENDING', 1, { lane })).toBe(false);
      expect(passes(lane, 'MODIFY', 'SENT', 1, { lane })).toBe(false);
      expect(passes(lane, 'MODIFY', 'PARKED', 1, { lane })).toBe(false);
      expect(passes(lane, 'REMOVE', 'PENDING', 0, { lane })).toBe(false);
    }
  });

  it('hands a new record to the sender as soon as the stream has it: no batching window', () => {
    // At alert rates a batch rarely fills, so any window is added in full to every SMS's delay.
    for (const [, mapping] of resourcesOfType(prod.resources, 'AWS::Lambda::EventSourceMapping'))
      expect(props(mapping)['MaximumBatchingWindowInSeconds']).toBeUndefined();
  });

  it('keeps failed stream records 14 days in an encrypted, TLS-only failure queue', () => {
    const failureQueue = ref(prod, 'RelayFailureQueue').Ref;
    expect(props(prod.resources[failureQueue])).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 1_209_600,
    });
    prod.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: failureQueue }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sqs:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });
});

describe('table', () => {
  it('uses the shared key schema, both indexes, TTL, PITR, on-demand billing, KMS and a NEW_IMAGE stream', () => {
    prod.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    prod.template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'state', AttributeType: 'S' },
        { AttributeName: 'updatedAt', AttributeType: 'S' },
        { AttributeName: 'route', AttributeType: 'S' },
        { AttributeName: 'createdAt', AttributeType: 'S' },
        { AttributeName: 'dueAt', AttributeType: 'S' },
      ]),
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byStateSummary',
          KeySchema: [
            { AttributeName: 'state', KeyType: 'HASH' },
            { AttributeName: 'updatedAt', KeyType: 'RANGE' },
          ],
          // What its queries read, never the history: a change rewrites a small entry.
          Projection: {
            ProjectionType: 'INCLUDE',
            NonKeyAttributes: ['id', 'route', 'createdAt', 'sentAt', 'result', 'nextAttemptAt'],
          },
        },
        {
          IndexName: 'byRoute',
          KeySchema: [
            { AttributeName: 'route', KeyType: 'HASH' },
            { AttributeName: 'createdAt', KeyType: 'RANGE' },
          ],
          // Keys only: a record's changes then cost no write in it (listByRoute reads the records).
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        {
          IndexName: 'byDue',
          KeySchema: [
            { AttributeName: 'state', KeyType: 'HASH' },
            { AttributeName: 'dueAt', KeyType: 'RANGE' },
          ],
          // The waiting records by due time: keys and the grace's updatedAt, nothing large.
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['updatedAt'] },
        },
      ],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      BillingMode: 'PAY_PER_REQUEST',
      // Enabled without a key: the AWS-managed aws/dynamodb key.
      SSESpecification: { SSEEnabled: true },
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
    });
  });

  it('outlives the stack by default, and can be made disposable', () => {
    prod.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    prod.template.hasResource('AWS::SecretsManager::Secret', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    const disposable = synthStack('dev', configText('dev'), bundle.dir, { removalPolicy: RemovalPolicy.DESTROY });
    disposable.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });

  it("carries the replaced byState index (all attributes) only when an upgrade's first deploy asks for it", () => {
    const indexNames = (stack: TestStack): string[] =>
      (
        props(resourcesOfType(stack.resources, 'AWS::DynamoDB::Table')[0]?.[1])['GlobalSecondaryIndexes'] as {
          IndexName: string;
        }[]
      ).map((index) => index.IndexName);
    expect(indexNames(prod)).toEqual(['byStateSummary', 'byRoute', 'byDue']);
    expect(indexNames(synthStack('dev', configText('dev'), bundle.dir, { keepRetiredIndexes: true }))).toEqual([
      'byStateSummary',
      'byRoute',
      'byDue',
      'byState',
    ]);
  });
});

describe('what CloudWatch and Secrets Manager bill by the month', () => {
  it("prod's template holds the alarms, alarm metrics, dashboard and secrets BENCHMARKS.md's fixed cost counts", () => {
    const alarms = resourcesOfType(prod.resources, 'AWS::CloudWatch::Alarm').map(([, alarm]) => props(alarm));
    // A metric-math alarm bills each metric it reads; a plain one, its one metric.
    const alarmMetrics = alarms.reduce(
      (sum, alarm) =>
        sum +
        (Array.isArray(alarm['Metrics'])
          ? (alarm['Metrics'] as { MetricStat?: unknown }[]).filter((metric) => metric.MetricStat !== undefined).length
          : 1),
      0,
    );
    expect({
      alarms: alarms.length,
      alarmMetrics,
      dashboards: resourcesOfType(prod.resources, 'AWS::CloudWatch::Dashboard').length,
      secrets: resourcesOfType(prod.resources, 'AWS::SecretsManager::Secret').length,
    }).toEqual(PROD_CLOUDWATCH);
  });
});

describe('secret', () => {
  it('are two, the route secrets under the configured name and the provider key beside it, each a generated placeholder, never a value', () => {
    prod.template.resourceCountIs('AWS::SecretsManager::Secret', 2);
    const secrets = resourcesOfType(prod.resources, 'AWS::SecretsManager::Secret').map(([, secret]) => props(secret));
    expect(secrets.map((secret) => secret['Name']).sort()).toEqual(['sms-relay/prod', 'sms-relay/prod/provider']);
    for (const secretProps of secrets) {
      expect(secretProps['SecretString']).toBeUndefined();
      expect(secretProps['GenerateSecretString']).toEqual({
        SecretStringTemplate: '{}',
        GenerateStringKey: 'placeholder',
        ExcludePunctuation: true,
      });
    }
    expect(JSON.stringify(prod.template.toJSON())).not.toMatch(/"SecretString"\s*:/);
  });

  it('never puts a secret into the template, even when the config text sits next to one', () => {
    // A route secret's *name* is config; its value only ever reaches Secrets Manager.
    const canary = 'canary-0f8e2c71-secret-value';
    const text = `${configText('prod')}\n# ${canary}\n`;
    const withComment = synthStack('prod', text, bundle.dir);
    expect(JSON.stringify(withComment.template.toJSON())).not.toContain(canary);
  });
});

describe('schedules', () => {
  const ruleFor = (stack: TestStack, name: HandlerName): Record<string, unknown> => {
    const rules = resourcesOfType(stack.resources, 'AWS::Events::Rule').filter(([, rule]) =>
      (props(rule)['Targets'] as { Arn: unknown }[]).some(
        (target) => JSON.stringify(target.Arn) === JSON.stringify({ 'Fn::GetAtt': [stack.functionId(name), 'Arn'] }),
      ),
    );
    expect(rules).toHaveLength(1);
    return props(rules[0]?.[1]);
  };

  it('sweeps every minute', () => {
    expect(ruleFor(prod, 'sweeper')['ScheduleExpression']).toBe('rate(1 minute)');
  });

  it('checks the balance on the configured schedule, and hourly when balance is not configured', () => {
    expect(ruleFor(prod, 'balance-watch')['ScheduleExpression']).toBe('rate(1 hour)');
    expect(ruleFor(dev, 'balance-watch')['ScheduleExpression']).toBe('rate(6 hours)');
    const minimal = synthStack('minimal', MINIMAL_CONFIG, bundle.dir);
    expect(ruleFor(minimal, 'balance-watch')['ScheduleExpression']).toBe('rate(1 hour)');
    expect(fnEnvironment(minimal, 'balance-watch')['BALANCE_THRESHOLD']).toBeUndefined();
  });

  it('retries schedule deliveries and dead-letters the ones that still fail', () => {
    for (const [, rule] of resourcesOfType(prod.resources, 'AWS::Events::Rule')) {
      expect(props(rule)['Targets']).toEqual([
        expect.objectContaining({
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [expect.stringMatching(/^RelayDeadLetterQueue/), 'Arn'] } },
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
        }),
      ]);
    }
  });

  it('rejects a schedule the config schema accepts but EventBridge would refuse at deploy', () => {
    const text = configText('dev').replace('schedule: rate(6 hours)', 'schedule: rate(6 hour)');
    expect(() => synthStack('dev', text, bundle.dir)).toThrow(ConfigError);
    expect(() => synthStack('dev', text, bundle.dir)).toThrow(/balance\.schedule: use "rate\(6 hours\)"/);
  });
});

describe('least privilege', () => {
  interface Statement {
    readonly Effect: string;
    readonly Action: string | string[];
    readonly Resource: unknown;
  }
  const statements = (stack: TestStack, name: HandlerName): Statement[] => {
    const role = (fn(stack, name)['Role'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    return resourcesOfType(stack.resources, 'AWS::IAM::Policy')
      .filter(([, policy]) => (props(policy)['Roles'] as { Ref: string }[]).some((r) => r.Ref === role))
      .flatMap(([, policy]) => (props(policy)['PolicyDocument'] as { Statement: Statement[] }).Statement);
  };
  const TABLE = { 'Fn::GetAtt': [expect.stringMatching(/^RelayTable/), 'Arn'] };
  const BY_STATE = { 'Fn::Join': ['', [TABLE, '/index/byStateSummary']] };
  const BY_DUE = { 'Fn::Join': ['', [TABLE, '/index/byDue']] };
  const ROUTE_SECRETS = { Ref: expect.stringMatching(/^RelaySecret/) };
  const PROVIDER_KEY = { Ref: expect.stringMatching(/^RelayProviderSecret/) };
  const LOGS = (name: string) => ({ 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^Relay${name}Logs`)), 'Arn'] });
  const DEAD_LETTERS = { 'Fn::GetAtt': [expect.stringMatching(/^RelayDeadLetterQueue/), 'Arn'] };
  const grant = (actions: string[], resource: unknown) => ({
    Effect: 'Allow',
    Action: actions.length === 1 ? actions[0] : actions,
    Resource: resource,
  });
  /** Puts and updates only of items whose partition key is one of `kinds`. */
  const writes = (kinds: string[]) => ({
    ...grant(['dynamodb:PutItem', 'dynamodb:UpdateItem'], TABLE),
    Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': kinds } },
  });

  it('ingest may record messages, read a mute and the on-call overrides, note a heartbeat and read the route secrets (never the provider key), nothing else', () => {
    expect(statements(prod, 'ingest')).toEqual([
      grant(['logs:CreateLogStream', 'logs:PutLogEvents'], LOGS('Ingest')),
      // Query: the overrides of the schedules a route's oncall: recipients name.
      grant(['dynamodb:GetItem', 'dynamodb:Query'], TABLE),
      // Never the balance, the limits, the spend, the circuit, mutes or overrides.
      // ALERT*: Opsgenie's alert API's alerts, their references and request statuses (functions/store/alert-api.ts).
      writes([
        'MSG#*',
        'DEDUPE#*',
        'CAPTURE#*',
        'ROUTE#*',
        'WINDOW#*',
        'INCIDENT#*',
        'INCIDENTS',
        'ACK#*',
        'ALERT#*',
        'ALERTREF#*',
        'ALERTREQ#*',
      ]),
      grant(['secretsmanager:GetSecretValue'], ROUTE_SECRETS),
    ]);
  });

  it('the secrets: ingest alone reads the route secrets; the sender, the sweeper and the balance watch alone the provider key', () => {
    const readers = (secretPrefix: string): HandlerName[] =>
      HANDLER_NAMES.filter((name) =>
        statements(prod, name).some(
          (statement) =>
            statement.Action === 'secretsmanager:GetSecretValue' &&
            JSON.stringify(statement.Resource).includes(`"${secretPrefix}`),
        ),
      );
    expect(readers('RelaySecret')).toEqual(['ingest']);
    expect(readers('RelayProviderSecret')).toEqual(['sender', 'sweeper', 'balance-watch']);
  });

  it("sender may update records, record a low-balance notice, read its stream and fill its failure queue; of the indexes it queries only the state index (the circuit's check for a send since the last failure)", () => {
    expect(statements(prod, 'sender')).toEqual([
      grant(['logs:CreateLogStream', 'logs:PutLogEvents'], LOGS('Sender')),
      grant(['dynamodb:GetItem', 'dynamodb:Query'], TABLE),
      grant(['dynamodb:Query'], BY_STATE),
      writes(['MSG#*', 'DEDUPE#*', 'LIMIT#*', 'BALANCE', 'SPEND', 'CIRCUIT', 'RATE#*', 'INCIDENT#*']),
      grant(['secretsmanager:GetSecretValue'], PROVIDER_KEY),
      grant(['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'], {
        'Fn::GetAtt': [expect.stringMatching(/^RelayFailureQueue/), 'Arn'],
      }),
      grant(['dynamodb:ListStreams'], '*'),
      grant(['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'], {
        'Fn::GetAtt': [expect.stringMatching(/^RelayTable/), 'StreamArn'],
      }),
    ]);
  });

  it('sweeper may query the state and due indexes (and no other), and record and update messages', () => {
    expect(statements(prod, 'sweeper')).toEqual([
      grant(['sqs:SendMessage'], DEAD_LETTERS),
      grant(['logs:CreateLogStream', 'logs:PutLogEvents'], LOGS('Sweeper')),
      grant(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'], TABLE),
      grant(['dynamodb:Query'], [BY_STATE, BY_DUE]),
      writes([
        'MSG#*',
        'DEDUPE#*',
        'LIMIT#*',
        'BALANCE',
        'SPEND',
        'CIRCUIT',
        'RATE#*',
        'ROUTE#*',
        'WINDOW#*',
        'INCIDENT#*',
        'INCIDENTS',
        'ACK#*',
      ]),
      grant(['secretsmanager:GetSecretValue'], PROVIDER_KEY),
      // The on-failure destination of its schedule events: the same dead-letter queue.
      grant(['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'], DEAD_LETTERS),
    ]);
  });

  it('balance-watch may keep its items, batch-read the spend counters (the forecast) and record its warning SMS; it reads no index', () => {
    expect(statements(prod, 'balance-watch')).toEqual([
      grant(['sqs:SendMessage'], DEAD_LETTERS),
      grant(['logs:CreateLogStream', 'logs:PutLogEvents'], LOGS('BalanceWatch')),
      grant(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'], TABLE),
      writes(['BALANCE', 'BALANCE#READINGS', 'SPEND', 'MSG#*', 'DEDUPE#*']),
      grant(['secretsmanager:GetSecretValue'], PROVIDER_KEY),
    ]);
  });

  it('grants no wildcard action, no Scan, no deletes, no batch writes and no managed policies anywhere', () => {
    const actions = resourcesOfType(prod.resources, 'AWS::IAM::Policy').flatMap(([, policy]) =>
      (props(policy)['PolicyDocument'] as { Statement: Statement[] }).Statement.flatMap((s) => [s.Action].flat()),
    );
    expect(actions.filter((action) => action.includes('*'))).toEqual([]);
    expect(actions.filter((action) => /Scan|Delete|BatchWrite|PartiQL/.test(action))).toEqual([]);
    // The batch reads: the sweeper reads the records its index query lists (the index holds no whole
    // record), the balance watch the week's spend counters.
    expect(actions.filter((action) => action.startsWith('dynamodb:Batch'))).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:BatchGetItem',
    ]);
    for (const [, role] of resourcesOfType(prod.resources, 'AWS::IAM::Role'))
      expect(props(role)['ManagedPolicyArns']).toBeUndefined();
  });
});

describe('observability', () => {
  const subscriptionsOf = (stack: TestStack) =>
    resourcesOfType(stack.resources, 'AWS::SNS::Subscription').map(([, subscription]) => {
      const { Protocol, Endpoint, TopicArn } = props(subscription) as {
        Protocol: string;
        Endpoint: string;
        TopicArn: { Ref: string };
      };
      return { topic: TopicArn.Ref.startsWith('RelayObservabilityPageTopic') ? 'page' : 'ticket', Protocol, Endpoint };
    });

  // Each alarm, found by the metric it watches, and its kind are asserted in alarms.test.ts.
  it('sends every alarm and its recovery to one of the two alarm topics', () => {
    const alarms = resourcesOfType(prod.resources, 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(8);
    for (const [, alarm] of alarms) {
      const actions = props(alarm)['AlarmActions'] as { Ref: string }[];
      expect(actions).toHaveLength(1);
      expect(actions[0]!.Ref).toMatch(/^RelayObservability(PageTopic|AlarmTopic)/);
      expect(props(alarm)['OKActions']).toEqual(props(alarm)['AlarmActions']);
    }
  });

  it('subscribes alarms.page and alarms.ticket by kind, and balance.email to both, undeliverable ones dead-lettered', () => {
    expect(
      subscriptionsOf(prod).sort((a, b) => `${a.topic}${a.Endpoint}`.localeCompare(`${b.topic}${b.Endpoint}`)),
    ).toEqual([
      { topic: 'page', Protocol: 'sms', Endpoint: '+255754111222' },
      { topic: 'page', Protocol: 'email', Endpoint: 'oncall@example.co.tz' },
      { topic: 'page', Protocol: 'email', Endpoint: 'ops@example.co.tz' },
      { topic: 'ticket', Protocol: 'email', Endpoint: 'ops@example.co.tz' },
    ]);
    // SNS's SMS takes no dead-letter queue (CDK drops it): PagesUndelivered watches the page topic instead.
    for (const [, subscription] of resourcesOfType(prod.resources, 'AWS::SNS::Subscription'))
      if (props(subscription)['Protocol'] !== 'sms')
        expect(props(subscription)['RedrivePolicy']).toEqual({
          deadLetterTargetArn: { 'Fn::GetAtt': [expect.stringMatching(/^RelayDeadLetterQueue/), 'Arn'] },
        });
  });

  it('subscribes an https entry as https (a pager or health-check URL)', () => {
    const text = `${configText('dev')}\nalarms:\n  page: ["https://hc.example.com/ping/0f6c-41d1"]\n`;
    expect(subscriptionsOf(synthStack('dev', text, bundle.dir))).toEqual([
      { topic: 'page', Protocol: 'https', Endpoint: 'https://hc.example.com/ping/0f6c-41d1' },
    ]);
  });

  it('subscribes nobody when no address is configured, and the alarmEmail prop reaches both kinds', () => {
    dev.template.resourceCountIs('AWS::SNS::Subscription', 0);
    const custom = synthStack('dev', configText('dev'), bundle.dir, { alarmEmail: 'oncall@example.com' });
    expect(subscriptionsOf(custom).sort((a, b) => a.topic.localeCompare(b.topic))).toEqual([
      { topic: 'page', Protocol: 'email', Endpoint: 'oncall@example.com' },
      { topic: 'ticket', Protocol: 'email', Endpoint: 'oncall@example.com' },
    ]);
  });

  it('enforces TLS on both alarm topics', () => {
    prod.template.resourceCountIs('AWS::SNS::TopicPolicy', 2);
    prod.template.allResourcesProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('draws a dashboard with the balance, the relay metrics, the queues and the functions', () => {
    const [, dashboard] = resourcesOfType(prod.resources, 'AWS::CloudWatch::Dashboard')[0] ?? [];
    expect(props(dashboard)['DashboardName']).toBe('SmsRelay-prod');
    const body = JSON.stringify(props(dashboard)['DashboardBody']);
    for (const metric of Object.values(RelayMetric)) expect(body).toContain(`\\"${metric}\\"`);
    for (const metric of [
      'ApproximateNumberOfMessagesVisible',
      'IteratorAge',
      'Errors',
      'Duration',
      'Throttles',
      '5xx',
    ])
      expect(body).toContain(metric);
  });
});
