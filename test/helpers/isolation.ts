import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, vi } from 'vitest';

/**
 * `npm test` runs many files in one worker thread with one module graph (`isolate: false` in
 * vitest.config.ts), so what a file changes globally reaches the files after it. After each file:
 * env stubs, stubbed globals and fake timers are undone here, and a client mock left in place
 * (aws-sdk-client-mock stubs the class's `send` for every instance, real store clients included)
 * fails the file that left it, naming the `restore()` to add.
 */
const MOCKABLE_CLIENTS = [DynamoDBClient, SecretsManagerClient, CloudFormationClient] as const;

afterAll(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.useRealTimers();
  const mocked = MOCKABLE_CLIENTS.filter((client) => Object.hasOwn(client.prototype, 'send'));
  if (mocked.length > 0) {
    throw new Error(
      `${mocked.map((client) => client.name).join(', ')} still mocked after this file: call restore() on its mockClient in afterAll (files share one module graph in npm test)`,
    );
  }
});
