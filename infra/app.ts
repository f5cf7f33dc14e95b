// `cdk synth|deploy -c env=<name>`: builds stack SmsRelay-<name> from config/<name>.yaml.
//
// Context (all optional):
//   env          the environment, i.e. config/<env>.yaml            (cdk.json: dev)
//   configDir    where <env>.yaml is read from                      (config)
//   bundleDir    where the handlers are bundled to                  (dist/handlers)
//   handlersDir  where the handler sources are                      (functions/handlers)
//   keepRetiredIndexes  true keeps the indexes this version replaced, for one upgrade deploy (false; see SmsRelayProps)
import { App } from 'aws-cdk-lib';
import { ConfigError } from '../functions/core/config/errors';
import { bundleHandlers } from './bundle';
import { readContextFlag, readEnvironmentConfig } from './config';
import { addNagChecks } from './nag';
import { SmsRelayStack } from './stack';

const app = new App();
const context = (key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  return typeof value === 'string' && value !== '' ? value : undefined;
};

try {
  const environmentName = context('env') ?? 'dev';
  const { config, text } = readEnvironmentConfig(environmentName, { configDir: context('configDir') });
  const keepRetiredIndexes = readContextFlag(app.node.tryGetContext('keepRetiredIndexes'), 'keepRetiredIndexes');
  const { outDir: bundleDir } = bundleHandlers({ outDir: context('bundleDir'), entryDir: context('handlersDir') });

  new SmsRelayStack(app, {
    environmentName,
    config,
    configText: text,
    bundleDir,
    ...(keepRetiredIndexes === undefined ? {} : { keepRetiredIndexes }),
    env: { account: process.env['CDK_DEFAULT_ACCOUNT'], region: process.env['CDK_DEFAULT_REGION'] },
  });
  addNagChecks(app);
  app.synth();
} catch (error) {
  // A config problem is the user's to fix: show the list, not a stack trace.
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
}
