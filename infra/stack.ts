import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { deployProps } from './deployable';
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
      description: 'The route secrets (ingest): aws secretsmanager put-secret-value --secret-id <SecretId> --secret-string file://routes.json',
    });
    new CfnOutput(this, 'ProviderSecretId', {
      value: this.relay.providerSecretName,
      description: 'The provider key (sender, sweeper, balance watch): aws secretsmanager put-secret-value --secret-id <ProviderSecretId> --secret-string file://provider.json',
    });
    // The CLI's --env reads the table from here (never by a name prefix).
    new CfnOutput(this, STACK_OUTPUTS.tableName, { value: this.relay.table.tableName });
    new CfnOutput(this, 'FailureQueueUrl', { value: this.relay.failureQueue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.relay.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'DashboardName', { value: this.relay.observability.dashboard.dashboardName });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.relay.observability.topic.topicArn });
  }
}

/** An explicit `undefined` must not hide a value of the config. */
function definedProps(props: SmsRelayProps): SmsRelayProps {
  return Object.fromEntries(Object.entries(props).filter(([, value]) => value !== undefined)) as unknown as SmsRelayProps;
}
