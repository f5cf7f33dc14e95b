import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient, ListTablesCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { checkAwsAccess, findStackTable } from '../../../local/shared/aws';
import { RuntimeError } from '../../../local/shared/errors';
import { openDeployedRecordAccess } from '../../../local/shared/record-access';

/**
 * How the CLI reaches a deployed environment: the stack's own table (its TableName output), and
 * what it says without credentials. The AWS calls are mocked; the credential chain is the SDK's
 * own, with every source emptied (and the instance metadata service off: nothing leaves the host).
 */

const cloudFormation = mockClient(CloudFormationClient);
const dynamo = mockClient(DynamoDBClient);

const stack = (name: string, table?: string) => ({
  StackName: name,
  StackStatus: 'UPDATE_COMPLETE' as const,
  CreationTime: new Date(0),
  Outputs: [
    { OutputKey: 'WebhookUrl', OutputValue: 'https://abc.example/hooks/' },
    ...(table === undefined ? [] : [{ OutputKey: 'TableName', OutputValue: table }]),
  ],
});

/** Credentials from the environment, as an operator with a profile or keys would have. */
function withCredentials(): void {
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret-example');
  vi.stubEnv('AWS_REGION', 'eu-west-1');
}

/** No credentials anywhere the SDK looks, and no instance metadata service to ask. */
function withoutCredentials(): void {
  for (const name of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_WEB_IDENTITY_TOKEN_FILE',
    'AWS_ROLE_ARN',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  ]) {
    vi.stubEnv(name, undefined);
  }
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', '/nonexistent/sms-relay-test/credentials');
  vi.stubEnv('AWS_CONFIG_FILE', '/nonexistent/sms-relay-test/config');
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
  vi.stubEnv('AWS_REGION', 'eu-west-1');
}

beforeEach(() => {
  cloudFormation.reset();
  dynamo.reset();
});
afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(() => {
  cloudFormation.restore();
  dynamo.restore();
});

describe('findStackTable: the table of stack SmsRelay-<env>, from its TableName output', () => {
  it("asks for exactly SmsRelay-prod, so prod-eu's table is never taken, and lists no tables", async () => {
    withCredentials();
    cloudFormation
      .on(DescribeStacksCommand, { StackName: 'SmsRelay-prod' })
      .resolves({ Stacks: [stack('SmsRelay-prod', 'SmsRelay-prod-RelayTable1-AAA')] });
    cloudFormation
      .on(DescribeStacksCommand, { StackName: 'SmsRelay-prod-eu' })
      .resolves({ Stacks: [stack('SmsRelay-prod-eu', 'SmsRelay-prod-eu-RelayTable1-BBB')] });

    expect(await findStackTable('prod')).toBe('SmsRelay-prod-RelayTable1-AAA');
    expect(await findStackTable('prod-eu')).toBe('SmsRelay-prod-eu-RelayTable1-BBB');
    expect(cloudFormation.commandCalls(DescribeStacksCommand).map((call) => call.args[0].input)).toEqual([
      { StackName: 'SmsRelay-prod' },
      { StackName: 'SmsRelay-prod-eu' },
    ]);
    expect(dynamo.commandCalls(ListTablesCommand)).toHaveLength(0);
  });

  it('a stack without the output (an older version): says to deploy this one, or pass --table', async () => {
    withCredentials();
    cloudFormation.on(DescribeStacksCommand).resolves({ Stacks: [stack('SmsRelay-prod')] });
    await expect(findStackTable('prod')).rejects.toThrow(
      "stack SmsRelay-prod in eu-west-1 has no TableName output: deploy this version (npx cdk deploy -c env=prod), or pass --table with the table's name",
    );
  });

  it('no such stack in the region: says to pass the region it is in', async () => {
    withCredentials();
    cloudFormation
      .on(DescribeStacksCommand)
      .rejects(Object.assign(new Error('Stack with id SmsRelay-prod does not exist'), { name: 'ValidationError' }));
    const error: unknown = await findStackTable('prod').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as Error).message).toBe(
      'no stack SmsRelay-prod in eu-west-1: pass --region with the region it is deployed in (or AWS_REGION), or deploy it with npx cdk deploy -c env=prod',
    );
  });

  it('credentials refused mid-way (an SSO session expired): the same advice as none at all', async () => {
    withCredentials();
    cloudFormation.on(DescribeStacksCommand).rejects(
      Object.assign(new Error('The SSO session associated with this profile has expired or is otherwise invalid.'), {
        name: 'TokenProviderError',
      }),
    );
    await expect(findStackTable('prod')).rejects.toThrow(
      /^no AWS credentials to reach SmsRelay-prod: .*AWS_PROFILE.*aws sso login/,
    );
  });
});

describe('without AWS credentials', () => {
  const ADVICE =
    'no AWS credentials to reach SmsRelay-prod: name your profile (export AWS_PROFILE=<profile>) and, for an SSO profile, log in first (aws sso login --profile <profile>), ' +
    'or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; `aws sts get-caller-identity` shows what the AWS tools find';

  it('says what to do instead of the SDK\'s "Could not load credentials from any providers", before any call', async () => {
    withoutCredentials();
    const client = new DynamoDBClient({});
    const error: unknown = await checkAwsAccess(client, 'prod').catch((caught: unknown) => caught);
    client.destroy();
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as Error).message).toBe(ADVICE);
    expect(String((error as Error).cause)).toMatch(/Could not load credentials from any providers/);
  });

  it('logs/redrive --env: the same, and nothing is asked of CloudFormation or DynamoDB', async () => {
    withoutCredentials();
    await expect(openDeployedRecordAccess({ environment: 'prod' })).rejects.toThrow(ADVICE);
    expect(cloudFormation.calls()).toHaveLength(0);
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('no region: says to set AWS_REGION or pass --region', async () => {
    withoutCredentials();
    vi.stubEnv('AWS_REGION', undefined);
    vi.stubEnv('AWS_DEFAULT_REGION', undefined);
    await expect(openDeployedRecordAccess({ environment: 'prod' })).rejects.toThrow(
      'no AWS region for SmsRelay-prod: set AWS_REGION or pass --region (the region the stack is deployed in)',
    );
  });
});

describe('openDeployedRecordAccess --env', () => {
  it('reads the records of the table the stack outputs', async () => {
    withCredentials();
    cloudFormation
      .on(DescribeStacksCommand, { StackName: 'SmsRelay-prod' })
      .resolves({ Stacks: [stack('SmsRelay-prod', 'SmsRelay-prod-RelayTable1-AAA')] });
    dynamo.on(QueryCommand).resolves({ Items: [] });
    const access = await openDeployedRecordAccess({ environment: 'prod' });
    try {
      expect(access.description).toBe('table SmsRelay-prod-RelayTable1-AAA (prod)');
      expect(await access.list({ state: 'PARKED' })).toEqual([]);
      expect(
        dynamo
          .commandCalls(QueryCommand)
          .every((call) => call.args[0].input.TableName === 'SmsRelay-prod-RelayTable1-AAA'),
      ).toBe(true);
      expect(dynamo.commandCalls(QueryCommand).length).toBeGreaterThan(0);
    } finally {
      await access.close();
    }
  });

  it('--table skips the lookup', async () => {
    withCredentials();
    const access = await openDeployedRecordAccess({ environment: 'prod', table: 'old-table' });
    await access.close();
    expect(access.description).toBe('table old-table (prod)');
    expect(cloudFormation.calls()).toHaveLength(0);
  });
});
