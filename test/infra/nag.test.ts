import { Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import type { NagPack } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { relayNagPacks } from '../../infra/nag';
import { bundleForTests, configText, synthStack, type TestStack } from './support';

let bundle: ReturnType<typeof bundleForTests>;
let stacks: Record<string, TestStack>;

beforeAll(() => {
  bundle = bundleForTests();
  stacks = {
    // prod: e-mail subscription and balance alarm; dev: neither e-mail nor prod's routes.
    prod: synthStack('prod', configText('prod'), bundle.dir),
    dev: synthStack('dev', configText('dev'), bundle.dir),
    // prod redeployed after cdk destroy: the retained table and the two named secrets adopted.
    'prod-adopted': synthStack(
      'prod',
      configText('prod').replace(
        /^deploy:\n/m,
        'deploy:\n  adopt:\n    table:\n      name: SmsRelay-prod-RelayTable1A2B3C4D-5E6F7G8H9I0J\n      streamArn: arn:aws:dynamodb:af-south-1:123456789012:table/SmsRelay-prod-RelayTable1A2B3C4D-5E6F7G8H9I0J/stream/2026-12-04T10:00:00.000\n    secrets: true\n',
      ),
      bundle.dir,
    ),
  };
});

interface Finding {
  readonly rule: string;
  readonly path: string;
}

function findings(packs: readonly NagPack[], scope: IConstruct): Finding[] {
  return packs.flatMap((pack) =>
    pack.validateScope(scope).violations.flatMap((violation) =>
      violation.violatingResources.map((resource) => ({
        rule: violation.ruleName,
        path: resource.constructPath ?? '',
      })),
    ),
  );
}

/** The same packs, blind to acknowledgements: what the stack would be told without them. */
function unacknowledgedPacks(): NagPack[] {
  return relayNagPacks().map((pack) => Object.assign(pack, { isAcknowledged: () => false }));
}

function acknowledgements(scope: IConstruct): Finding[] {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.keys(entry.data as Record<string, string>))
      .map((id) => ({ rule: id.replace(/^annotation::/i, ''), path: construct.node.path })),
  );
}

const covers = (ack: Finding, finding: Finding): boolean =>
  ack.rule === finding.rule && (finding.path === ack.path || finding.path.startsWith(`${ack.path}/`));

describe.each(['prod', 'dev', 'prod-adopted'])('cdk-nag on SmsRelay-%s', (env) => {
  const stack = (): TestStack => stacks[env] as TestStack;

  it('has no unacknowledged AwsSolutions or Serverless finding, error or warning', () => {
    expect(findings(relayNagPacks(), stack().stack)).toEqual([]);
  });

  it('acknowledges only findings that really occur, each on the resource concerned', () => {
    const raw = findings(unacknowledgedPacks(), stack().stack);
    const acks = acknowledgements(stack().stack);
    // The blind packs must see something, or this test proves nothing.
    expect(raw.length).toBeGreaterThan(0);
    expect(raw.filter((finding) => !acks.some((ack) => covers(ack, finding)))).toEqual([]);
    expect(acks.filter((ack) => !raw.some((finding) => covers(ack, finding)))).toEqual([]);
  });

  it('gives every acknowledgement a reason', () => {
    for (const construct of stack().stack.node.findAll()) {
      for (const entry of construct.node.metadata.filter(
        (e) => e.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY,
      )) {
        for (const reason of Object.values(entry.data as Record<string, string>))
          expect(reason.length).toBeGreaterThan(40);
      }
    }
  });

  it('draws no CDK warning or error', () => {
    const annotations = Annotations.fromStack(stack().stack);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
  });
});

it('acknowledges exactly the reviewed rules', () => {
  const rules = [...new Set(acknowledgements((stacks['prod'] as TestStack).stack).map((ack) => ack.rule))].sort();
  expect(rules).toEqual([
    'AwsSolutions-APIG4',
    'AwsSolutions-IAM5[Resource::*]',
    'AwsSolutions-L1',
    'AwsSolutions-SMG4',
    'AwsSolutions-SQS3',
    'Serverless-LambdaDLQ',
    'Serverless-LambdaLatestVersion',
    'Serverless-LambdaTracing',
    // The SMS page subscriptions: CDK's SMS subscription takes no dead-letter queue (PagesUndelivered instead).
    'Serverless-SNSRedrivePolicy',
    'Serverless-SQSRedrivePolicy',
  ]);
});
