import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { DeployConfig } from '../functions/core/config/schema';
import { relayStackName, STACK_OUTPUTS } from './names';

export { relayStackName, STACK_OUTPUTS } from './names';
import { SmsRelay, type SmsRelayProps } from './sms-relay';

export interface SmsRelayStackProps extends StackProps, SmsRelayProps {}

/**
 * One environment's relay as a deployable stack, named `SmsRelay-<env>`, with the outputs the
 * set-up steps of docs/deploying.md use.
 *
 * @example
 * ```ts
 * const { config, text } = readEnvironmentConfig('prod');
 * new SmsRelayStack(app, { environmentName: 'prod', config, configText: text });
 * ```
 */
export class SmsRelayStack extends Stack {
  public readonly relay: SmsRelay;

  public constructor(scope: Construct, props: SmsRelayStackProps) {
    const name = relayStackName(props.environmentName);
    super(scope, name, {
      stackName: name,
      description: `sms-relay ${props.environmentName}: webhooks in, SMS out`,
      ...props,
    });
    // The config's `deploy:` block, unless the caller's properties say otherwise.
    this.relay = new SmsRelay(this, 'Relay', { ...deployProps(props.config.deploy), ...definedProps(props) });

    new CfnOutput(this, 'WebhookUrl', {
      value: this.relay.webhookUrl,
      description: 'Append a route id: <WebhookUrl><route>',
    });
    new CfnOutput(this, 'SecretId', {
      value: this.relay.secretName,
      description:
        'The route secrets (ingest): aws secretsmanager put-secret-value --secret-id <SecretId> --secret-string file://routes.json',
    });
    new CfnOutput(this, 'ProviderSecretId', {
      value: this.relay.providerSecretName,
      description:
        'The provider key (sender, sweeper, balance watch): aws secretsmanager put-secret-value --secret-id <ProviderSecretId> --secret-string file://provider.json',
    });
    // The CLI's --env reads the table from here (never by a name prefix).
    new CfnOutput(this, STACK_OUTPUTS.tableName, { value: this.relay.table.tableName });
    new CfnOutput(this, 'FailureQueueUrl', { value: this.relay.failureQueue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.relay.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'DashboardName', { value: this.relay.observability.dashboard.dashboardName });
    new CfnOutput(this, 'PageTopicArn', { value: this.relay.observability.topics.page.topicArn });
    new CfnOutput(this, 'TicketTopicArn', { value: this.relay.observability.topics.ticket.topicArn });
  }
}

/** An explicit `undefined` must not hide a value of the config. */
function definedProps(props: SmsRelayProps): SmsRelayProps {
  return Object.fromEntries(
    Object.entries(props).filter(([, value]) => value !== undefined),
  ) as unknown as SmsRelayProps;
}

/**
 * The construct properties an environment's `deploy:` block sets; keys it leaves out keep the
 * construct's defaults.
 *
 * @example
 * ```ts
 * deployProps({ throttle: { rate: 10 }, onDelete: 'destroy' }); // { throttle: { rateLimit: 10 }, removalPolicy: RemovalPolicy.DESTROY }
 * ```
 */
export function deployProps(
  deploy: DeployConfig | undefined,
): Partial<
  Pick<
    SmsRelayProps,
    | 'throttle'
    | 'memorySize'
    | 'logRetention'
    | 'removalPolicy'
    | 'senderConcurrency'
    | 'existingTable'
    | 'existingSecrets'
  >
> {
  if (deploy === undefined) return {};
  const { throttle, memory, logRetentionDays, onDelete, senderConcurrency, adopt } = deploy;
  return {
    ...(adopt?.table === undefined
      ? {}
      : { existingTable: { tableName: adopt.table.name, tableStreamArn: adopt.table.streamArn } }),
    ...(adopt?.secrets === undefined ? {} : { existingSecrets: adopt.secrets }),
    ...(senderConcurrency === undefined ? {} : { senderConcurrency }),
    ...(throttle === undefined
      ? {}
      : {
          throttle: {
            ...(throttle.rate === undefined ? {} : { rateLimit: throttle.rate }),
            ...(throttle.burst === undefined ? {} : { burstLimit: throttle.burst }),
          },
        }),
    ...(memory === undefined
      ? {}
      : { memorySize: Object.fromEntries(Object.entries(memory).filter(([, mb]) => mb !== undefined)) }),
    // RetentionDays' values are the day counts the schema allows.
    ...(logRetentionDays === undefined ? {} : { logRetention: logRetentionDays as logs.RetentionDays }),
    ...(onDelete === undefined
      ? {}
      : { removalPolicy: onDelete === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN }),
  };
}
