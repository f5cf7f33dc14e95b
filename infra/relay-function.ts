import { type Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { HandlerName } from './bundle';
import { stageFunctionAsset } from './staging';

/** The runtime every handler is bundled for (`target: 'node22'` in `bundle.ts`). */
export const RELAY_NODE_RUNTIME = lambda.Runtime.NODEJS_22_X;

export interface RelayFunctionProps {
  readonly handlerName: HandlerName;
  readonly description: string;
  /** The handler's bundle directory, holding `index.mjs`. */
  readonly bundleDir: string;
  /** The environment's config text; deployed next to the bundle validated and compiled, as `relay-config.json` (`stageFunctionAsset`). */
  readonly configText: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: logs.RetentionDays;
  /**
   * Concurrency reserved for (and capping) the function.
   * @default - none: the account's unreserved pool
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Where asynchronous invocations that fail every retry go.
   * @default - none: the function is only ever invoked synchronously
   */
  readonly deadLetterQueue?: sqs.IQueue;
}

/**
 * One relay handler: a nodejs22.x arm64 function whose package is the handler's bundle plus the
 * environment's config, with its own role and log group.
 *
 * The role starts with nothing but writing to that log group (no `AWSLambdaBasicExecutionRole`,
 * whose `logs:CreateLogGroup` on `*` is not needed when the group exists); the owner adds the
 * table, secret and queue statements the handler needs.
 *
 * @example
 * ```ts
 * const ingest = new RelayFunction(this, 'Ingest', { handlerName: 'ingest', bundleDir: 'dist/handlers/ingest', ... });
 * ingest.fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['dynamodb:PutItem'], resources: [table.tableArn] }));
 * ```
 */
export class RelayFunction extends Construct {
  public readonly fn: lambda.Function;
  public readonly role: iam.Role;
  public readonly logGroup: logs.LogGroup;

  public constructor(scope: Construct, id: string, props: RelayFunctionProps) {
    super(scope, id);

    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `sms-relay ${props.handlerName}`,
    });
    this.fn = new lambda.Function(this, 'Function', {
      description: props.description,
      runtime: RELAY_NODE_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: lambda.Code.fromAsset(stageFunctionAsset({ bundleDir: props.bundleDir, configText: props.configText })),
      memorySize: props.memorySize,
      timeout: props.timeout,
      environment: { ...props.environment },
      role: this.role,
      logGroup: this.logGroup,
      deadLetterQueue: props.deadLetterQueue,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    });
    this.logGroup.grantWrite(this.role);

    Validations.of(this.fn).acknowledge(
      {
        id: 'AwsSolutions-L1',
        reason:
          'nodejs22.x is the deliberate target: the bundles are built for node22 and tested on it; moving runtimes is a reviewed change, not a lint fix.',
      },
      {
        id: 'Serverless-LambdaLatestVersion',
        reason:
          'nodejs22.x is the deliberate target: the bundles are built for node22 and tested on it; moving runtimes is a reviewed change, not a lint fix.',
      },
      {
        id: 'Serverless-LambdaTracing',
        reason:
          'No X-Ray: HTTP APIs cannot trace, the handlers carry no tracer, and each message record in the table already holds its full timeline; active tracing would only add an xray:Put* grant on "*".',
      },
    );
  }
}
