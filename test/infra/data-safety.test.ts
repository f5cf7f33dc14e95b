import { beforeAll, describe, expect, it } from 'vitest';
import { RemovalPolicy } from 'aws-cdk-lib';
import { parseConfig } from '../../functions/core/config/parse';
import { ConfigError } from '../../functions/core/config/errors';
import { HANDLER_NAMES } from '../../infra/bundle';
import {
  bundleForTests,
  configText,
  resourcesOfType,
  synthStack,
  type CfnResourceJson,
  type TestStack,
} from './support';

/*
 * What survives a `cdk destroy`, and how the next `cdk deploy` of the same environment takes it
 * back: the retained table (its limit counters, dedupe guards and records) and the two named
 * secrets, adopted through `deploy.adopt`, as is a point-in-time restore of the table (the restore
 * drill of docs/deploying.md).
 */

const ACCOUNT_ARN = 'arn:aws:dynamodb:af-south-1:123456789012';
/** The table prod's first stack created and `cdk destroy` kept: its old TableName output. */
const RETAINED = 'SmsRelay-prod-RelayTable1A2B3C4D-5E6F7G8H9I0J';
/** A point-in-time restore of it, with the stream the drill enables. */
const RESTORED = 'sms-relay-prod-restored-20261204';

const streamOf = (table: string): string => `${ACCOUNT_ARN}:table/${table}/stream/2026-12-04T10:00:00.000`;

/** config/prod.yaml with its deploy block gaining `adopt` (prod has a deploy block already). */
const adoptedProd = (adopt: string): string =>
  configText('prod').replace(/^deploy:\n/m, `deploy:\n  adopt:\n${adopt.replace(/^/gm, '    ')}\n`);

const props = (resource: CfnResourceJson | undefined): Record<string, unknown> => resource?.Properties ?? {};

let bundle: ReturnType<typeof bundleForTests>;
let prod: TestStack;
let redeployed: TestStack;
let restored: TestStack;

beforeAll(() => {
  bundle = bundleForTests();
  prod = synthStack('prod', configText('prod'), bundle.dir);
  redeployed = synthStack(
    'prod',
    adoptedProd(`table:\n  name: ${RETAINED}\n  streamArn: ${streamOf(RETAINED)}\nsecrets: true`),
    bundle.dir,
  );
  restored = synthStack(
    'prod',
    adoptedProd(`table:\n  name: ${RESTORED}\n  streamArn: ${streamOf(RESTORED)}\nsecrets: true`),
    bundle.dir,
  );
});

describe('the retained table', () => {
  it('is protected from deletion, and outlives the stack with the secrets', () => {
    prod.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: { DeletionProtectionEnabled: true },
    });
    expect(
      resourcesOfType(prod.resources, 'AWS::SecretsManager::Secret').map(([, secret]) => secret.DeletionPolicy),
    ).toEqual(['Retain', 'Retain']);
  });

  it('is not protected when the stack is disposable (onDelete: destroy): it must go with its stack', () => {
    const disposable = synthStack('dev', configText('dev'), bundle.dir, { removalPolicy: RemovalPolicy.DESTROY });
    const [[, table] = ['', undefined]] = resourcesOfType(disposable.resources, 'AWS::DynamoDB::Table');
    expect(table?.DeletionPolicy).toBe('Delete');
    expect(props(table)['DeletionProtectionEnabled']).toBe(false);
  });
});

describe.each([
  ['a redeploy after cdk destroy', RETAINED, () => redeployed],
  ['the restore drill', RESTORED, () => restored],
])('%s adopts the existing table and the two named secrets', (_, tableName, stack) => {
  it('creates no table and no secret (a create would fail on the secret names, and start empty counters and guards)', () => {
    expect(resourcesOfType(stack().resources, 'AWS::DynamoDB::Table')).toEqual([]);
    expect(resourcesOfType(stack().resources, 'AWS::SecretsManager::Secret')).toEqual([]);
  });

  it("feeds the sender from the adopted table's stream, and names that table to every function and the CLI", () => {
    const mappings = resourcesOfType(stack().resources, 'AWS::Lambda::EventSourceMapping');
    // One per lane, both on the adopted table's stream.
    expect(mappings).toHaveLength(2);
    for (const [, mapping] of mappings) expect(props(mapping)['EventSourceArn']).toBe(streamOf(tableName));
    for (const name of HANDLER_NAMES) {
      const variables = (
        props(stack().resources[stack().functionId(name)])['Environment'] as { Variables: Record<string, unknown> }
      ).Variables;
      expect(variables['TABLE_NAME'], name).toBe(tableName);
    }
    stack().template.hasOutput('TableName', { Value: tableName });
  });

  it('grants the functions the adopted table, and each its own secret by name', () => {
    const policies = JSON.stringify(resourcesOfType(stack().resources, 'AWS::IAM::Policy'));
    expect(policies).toContain(`:table/${tableName}`);
    const variables = (name: (typeof HANDLER_NAMES)[number]) =>
      (props(stack().resources[stack().functionId(name)])['Environment'] as { Variables: Record<string, unknown> })
        .Variables;
    expect(variables('ingest')['SECRET_ID']).toBe('sms-relay/prod');
    expect(variables('sender')['PROVIDER_SECRET_ID']).toBe('sms-relay/prod/provider');
    // The name's ARN with Secrets Manager's six-character suffix, which the template cannot know.
    expect(policies).toContain(':secret:sms-relay/prod-??????');
    expect(policies).toContain(':secret:sms-relay/prod/provider-??????');
  });

  it('keeps the stack outputs the set-up steps use', () => {
    stack().template.hasOutput('SecretId', { Value: 'sms-relay/prod' });
    stack().template.hasOutput('ProviderSecretId', { Value: 'sms-relay/prod/provider' });
  });
});

describe('deploy.adopt', () => {
  it('refuses a stream of another table, or a table name DynamoDB would not take', () => {
    const problems = (adopt: string): readonly string[] => {
      try {
        parseConfig(adoptedProd(adopt), 'prod.yaml');
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      return [];
    };
    expect(problems(`table:\n  name: ${RESTORED}\n  streamArn: ${streamOf(RETAINED)}`)).toEqual([
      'deploy.adopt.table.streamArn: streamArn must be the stream of the table named in name',
    ]);
    expect(problems(`table:\n  name: "a b"\n  streamArn: ${streamOf('ab')}`)).toContainEqual(
      expect.stringMatching(/^deploy\.adopt\.table\.name: a DynamoDB table name/),
    );
    expect(problems('secrets: true')).toEqual([]);
  });
});
