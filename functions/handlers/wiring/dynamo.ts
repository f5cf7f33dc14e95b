import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { RelayEnvironment } from './env';

/**
 * The one DynamoDB client of the process. On AWS it takes region and credentials from the Lambda
 * environment; with `DYNAMODB_ENDPOINT` (dynalite locally) it uses region `local` and fixed dummy
 * credentials, so no AWS profile is looked up — which would be slow, and wrong.
 *
 * @example
 * ```ts
 * const client = createDynamoClient({ dynamodbEndpoint: 'http://127.0.0.1:8000' });
 * ```
 */
export function createDynamoClient(env: Pick<RelayEnvironment, 'dynamodbEndpoint'>): DynamoDBClient {
  if (env.dynamodbEndpoint === undefined) return new DynamoDBClient({});
  return new DynamoDBClient({
    region: 'local',
    endpoint: env.dynamodbEndpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}
