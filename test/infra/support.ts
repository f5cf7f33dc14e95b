import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { parseConfig } from '../../functions/core/config/parse';
import type { HandlerName } from '../../infra/bundle';
import { sharedHandlerBundles } from '../helpers/handler-bundles';
import type { SmsRelayProps } from '../../infra/sms-relay';
import { SmsRelayStack } from '../../infra/stack';

export { HANDLERS_DIR } from '../helpers/handler-bundles';

/** Two problems in one route, so a test can see that all of them are reported together. */
export const BROKEN_CONFIG = `
provider: { baseUrl: "https://sms.example.co.tz" }
secrets: sms-relay/broken
routes:
  alerts:
    source: nagios
    secret: token
    recipients: []
`;

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `sms-relay-${prefix}-`));
}

/** The handlers bundled (see `HANDLERS_DIR`) once for the worker's files: a synth only reads them. */
export function bundleForTests(): { readonly dir: string } {
  return { dir: sharedHandlerBundles().outDir };
}

export function configText(env: string): string {
  return readFileSync(join('config', `${env}.yaml`), 'utf8');
}

export interface TestStack {
  readonly stack: SmsRelayStack;
  readonly template: Template;
  /** The synthesised CloudFormation resources by logical id. */
  readonly resources: Record<string, CfnResourceJson>;
  /** Logical id of a handler's function. */
  readonly functionId: (name: HandlerName) => string;
}

export interface CfnResourceJson {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
  readonly DependsOn?: string[];
}

/**
 * Synthesises `SmsRelay-<env>` from YAML text. The built-in CloudFormation schema validation is
 * off here (it adds ~20 s per synth); the CLI synth tests run the app with it on.
 */
export function synthStack(
  env: string,
  text: string,
  bundleDir: string | undefined,
  props: Partial<Omit<SmsRelayProps, 'environmentName' | 'config' | 'configText' | 'bundleDir'>> = {},
): TestStack {
  const app = new App({ builtinCloudFormationValidation: false });
  const stack = new SmsRelayStack(app, {
    environmentName: env,
    config: parseConfig(text, `${env}.yaml`),
    configText: text,
    ...(bundleDir === undefined ? {} : { bundleDir }),
    ...props,
  });
  const template = Template.fromStack(stack);
  const resources = (template.toJSON() as { Resources: Record<string, CfnResourceJson> }).Resources;
  const functionId = (name: HandlerName): string =>
    stack.getLogicalId(stack.relay.functions[name].node.defaultChild as CfnElement);
  return { stack, template, resources, functionId };
}

export function resourcesOfType(resources: Record<string, CfnResourceJson>, type: string): [string, CfnResourceJson][] {
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}
