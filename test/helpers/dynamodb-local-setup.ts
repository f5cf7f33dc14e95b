import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from './dynamodb-local';

/**
 * Global setup of `npm run test:aws`: one DynamoDB Local for the whole run, stopped at its end.
 * Where it cannot start (no Java), the reason is handed to the tests, each of which then fails
 * with it: never a silent skip.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  try {
    const local = await startDynamoDbLocal();
    project.provide('dynamoDbLocal', { endpoint: local.endpoint });
    return async () => await local.stop();
  } catch (error) {
    project.provide('dynamoDbLocal', { unavailable: (error as Error).message });
    return async () => undefined;
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the run's DynamoDB Local answers, or why there is none. */
    dynamoDbLocal: { readonly endpoint: string } | { readonly unavailable: string };
  }
}
