import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../functions/core/config/errors';
import { loadConfig } from '../../../../functions/core/config/load';

const base = `
provider:
  baseUrl: https://sms.example.co.tz
secrets: sms-relay/test
routes:
`;

function problemsOf(text: string): readonly string[] {
  try {
    loadConfig(text, 'test.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected the config to be refused');
}

describe('route topics (sns)', () => {
  it('loads an sns route with its topics, in any partition', () => {
    const loaded = loadConfig(`${base}  aws:
    source: sns
    secret: sns-token
    recipients: ["0712345678"]
    topics: ["arn:aws:sns:eu-west-1:123456789012:ops-alarms", "arn:aws-cn:sns:cn-north-1:123456789012:a", "arn:aws-us-gov:sns:us-gov-west-1:123456789012:b", "arn:aws-iso-b:sns:us-isob-east-1:123456789012:c"]
`);
    expect(loaded.routes.get('aws')!.config.topics).toHaveLength(4);
  });

  it('names the topics key of an sns route without topics', () => {
    expect(problemsOf(`${base}  aws: { source: sns, secret: t, recipients: ["0712345678"] }
`)).toEqual([expect.stringMatching(/^routes\.aws\.topics: an sns route lists the topic ARNs it accepts/)]);
  });

  it('refuses an empty list, a value that is not a topic ARN, and topics on another source', () => {
    expect(problemsOf(`${base}  aws: { source: sns, secret: t, recipients: ["0712345678"], topics: [] }
`)).toEqual([expect.stringMatching(/^routes\.aws\.topics/)]);
    expect(problemsOf(`${base}  aws: { source: sns, secret: t, recipients: ["0712345678"], topics: ["arn:aws:sqs:eu-west-1:123456789012:q"] }
`)).toEqual([expect.stringMatching(/^routes\.aws\.topics\[0\]: a topic is an SNS topic ARN/)]);
    expect(problemsOf(`${base}  gh: { source: github, secret: t, recipients: ["0712345678"], topics: ["arn:aws:sns:eu-west-1:123456789012:a"] }
`)).toEqual(['routes.gh.topics: topics applies to sns routes only']);
  });
});
