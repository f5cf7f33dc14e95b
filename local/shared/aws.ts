import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { relayStackName, STACK_OUTPUTS } from '../../infra/names';
import { RuntimeError } from './errors';

/** What an SDK client exposes of its resolved configuration: enough to check it before any call. */
export interface AwsClientConfig {
  readonly config: { region(): Promise<string>; credentials(): Promise<unknown> };
}

/**
 * Checks that a client for a deployed environment has a region and credentials, before any call,
 * so the CLI says what to do instead of the SDK's "Region is missing" or "Could not load
 * credentials from any providers". Returns the region.
 *
 * @throws {RuntimeError} no region, or no credentials (each with the remedy)
 *
 * @example
 * ```ts
 * const region = await checkAwsAccess(new DynamoDBClient({}), 'prod');
 * ```
 */
export async function checkAwsAccess(client: AwsClientConfig, environment: string): Promise<string> {
  let region: string;
  try {
    region = await client.config.region();
  } catch (error) {
    // The SDK's own words ("Region is missing") do not say what to do.
    throw new RuntimeError(
      `no AWS region for ${relayStackName(environment)}: set AWS_REGION or pass --region (the region the stack is deployed in)`,
      { cause: error },
    );
  }
  try {
    await client.config.credentials();
  } catch (error) {
    throw noCredentialsError(environment, error);
  }
  return region;
}

/** An SDK error that means the caller has no usable credentials (none found, an expired SSO session). */
export function isCredentialsError(error: unknown): boolean {
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  if (
    name === 'CredentialsProviderError' ||
    name === 'TokenProviderError' ||
    name === 'ExpiredTokenException' ||
    name === 'ExpiredToken'
  )
    return true;
  return (
    typeof message === 'string' && /could not load credentials|sso session .*expired|token .*expired/i.test(message)
  );
}

/**
 * What to do without credentials: name the profile (`AWS_PROFILE`), log in to an SSO profile
 * (`aws sso login`), or set keys. The SDK's message is kept as the cause only.
 *
 * @example
 * ```ts
 * noCredentialsError('prod', error).message; // 'no AWS credentials to reach SmsRelay-prod: …'
 * ```
 */
export function noCredentialsError(environment: string, cause: unknown): RuntimeError {
  return new RuntimeError(
    `no AWS credentials to reach ${relayStackName(environment)}: name your profile (export AWS_PROFILE=<profile>) and, for an SSO profile, ` +
      'log in first (aws sso login --profile <profile>), or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; `aws sts get-caller-identity` shows what the AWS tools find',
    { cause },
  );
}

export interface StackTableOptions {
  /** @default - the SDK's: `AWS_REGION`, or the profile's */
  readonly region?: string;
  /**
   * The client to ask; tests pass one, the CLI lets this create it.
   * @default - a CloudFormation client for `region`
   */
  readonly client?: CloudFormationClient;
}

/**
 * The table of an environment's stack, from the stack's `TableName` output (`DescribeStacks` of
 * `SmsRelay-<env>`): exactly that stack's, never a table found by a name prefix (`prod` would
 * also match `prod-eu`'s).
 *
 * @throws {RuntimeError} no credentials, no such stack in the region, or a stack without the output
 *
 * @example
 * ```ts
 * await findStackTable('prod', { region: 'eu-west-1' }); // 'SmsRelay-prod-RelayTable1A2B3C-…'
 * ```
 */
export async function findStackTable(environment: string, { region, client }: StackTableOptions = {}): Promise<string> {
  const cloudFormation = client ?? new CloudFormationClient(region === undefined ? {} : { region });
  const stackName = relayStackName(environment);
  try {
    const where = await checkAwsAccess(cloudFormation, environment);
    let stack;
    try {
      stack = (await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
    } catch (error) {
      if (isCredentialsError(error)) throw noCredentialsError(environment, error);
      if (/does not exist/.test((error as Error).message)) {
        throw new RuntimeError(
          `no stack ${stackName} in ${where}: pass --region with the region it is deployed in (or AWS_REGION), or deploy it with npx cdk deploy -c env=${environment}`,
          { cause: error },
        );
      }
      throw new RuntimeError(`cannot read stack ${stackName} in ${where}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const table = stack?.Outputs?.find((output) => output.OutputKey === STACK_OUTPUTS.tableName)?.OutputValue;
    if (table === undefined || table === '') {
      throw new RuntimeError(
        `stack ${stackName} in ${where} has no ${STACK_OUTPUTS.tableName} output: deploy this version (npx cdk deploy -c env=${environment}), or pass --table with the table's name`,
      );
    }
    return table;
  } finally {
    if (client === undefined) cloudFormation.destroy();
  }
}
