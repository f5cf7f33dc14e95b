import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../functions/core/config/errors';
import { HANDLER_NAMES } from '../../infra/bundle';
import { bundleForTests, configText, resourcesOfType, synthStack, type TestStack } from './support';

/** The `deploy:` block reaching the stack, and the construct refusing what cannot work deployed. */

let bundle: ReturnType<typeof bundleForTests>;
let staging: TestStack;
let prod: TestStack;

beforeAll(() => {
  bundle = bundleForTests();
  staging = synthStack('staging', configText('staging'), bundle.dir);
  prod = synthStack('prod', configText('prod'), bundle.dir);
});

const ROUTES = 'routes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"] }\n';

describe('deploy: settings per environment', () => {
  it('throttle rate and burst', () => {
    staging.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
    });
    prod.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
  });

  it('function memory, the rest at their defaults', () => {
    const memory = Object.fromEntries(
      HANDLER_NAMES.map((name) => [name, staging.resources[staging.functionId(name)]?.Properties?.['MemorySize']]),
    );
    expect(memory).toEqual({ ingest: 256, sender: 256, sweeper: 256, 'balance-watch': 128 });
    const bigger = synthStack(
      'big',
      `provider: { baseUrl: "https://sms.example.co.tz" }\ndeploy: { memory: { sender: 1024 } }\n${ROUTES}`,
      bundle.dir,
    );
    expect(bigger.resources[bigger.functionId('sender')]?.Properties?.['MemorySize']).toBe(1024);
    expect(bigger.resources[bigger.functionId('ingest')]?.Properties?.['MemorySize']).toBe(256);
  });

  it('log retention for every log group', () => {
    staging.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 14 });
    prod.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });

  it('whether the table (and the secret) may be destroyed with the stack', () => {
    staging.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete' });
    prod.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  it('a construct property still wins over the config', () => {
    const custom = synthStack('staging', configText('staging'), bundle.dir, { throttle: { rateLimit: 3 } });
    custom.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 3, ThrottlingBurstLimit: 100 },
    });
  });
});

describe('the secret', () => {
  it('are named sms-relay/<env> (route secrets) and sms-relay/<env>/provider when the config names none, and output for put-secret-value', () => {
    staging.template.hasResourceProperties('AWS::SecretsManager::Secret', { Name: 'sms-relay/staging' });
    staging.template.hasResourceProperties('AWS::SecretsManager::Secret', { Name: 'sms-relay/staging/provider' });
    staging.template.hasOutput('SecretId', { Value: 'sms-relay/staging' });
    staging.template.hasOutput('ProviderSecretId', { Value: 'sms-relay/staging/provider' });
    expect(
      resourcesOfType(prod.resources, 'AWS::SecretsManager::Secret')
        .map(([, secret]) => secret.Properties?.['Name'])
        .sort(),
    ).toEqual(['sms-relay/prod', 'sms-relay/prod/provider']);
  });
});

describe('the construct refuses a config that cannot work deployed', () => {
  const refused = (text: string): readonly string[] => {
    try {
      synthStack('bad', text, bundle.dir);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/^config \(bad\): invalid config\n/);
      return (error as ConfigError).problems;
    }
    throw new Error('expected the config to be refused');
  };

  it('a provider time-out the functions have no room for, named with the most that fits', () => {
    const withTimeout = (ms: number): string =>
      `provider: { baseUrl: "https://sms.example.co.tz", timeoutMs: ${ms} }\nroutes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"] }\n`;
    expect(refused(withTimeout(50_000))).toEqual([
      "provider.timeoutMs: 50000 does not fit the functions' time-outs: the sender (60 s) sends a stream batch of 10 records 4 at a time: 3 calls in a row, with 5 s to spare, so at most 18333; set provider.timeoutMs to 18333 or less",
    ]);
    expect(refused(withTimeout(18_334))).toHaveLength(1);
    expect(() => synthStack('fits', withTimeout(18_333), bundle.dir)).not.toThrow();
  });

  it('a provider URL on loopback, and capture without the opt-in, each named', () => {
    expect(
      refused(
        `provider: { baseUrl: "http://127.0.0.1:4010" }\nroutes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"], capture: 1d }\n`,
      ),
    ).toEqual([
      expect.stringMatching(
        /^provider\.baseUrl must be https .*, and must not point at a loopback or private address \(127\.0\.0\.1\)/,
      ),
      expect.stringMatching(/^routes\.ci\.capture: .*set deploy\.allowCapture: true/),
    ]);
  });
  it('a paging route that could page without an acknowledge link, and an ack.baseUrl that is not https, each named', () => {
    const paging = (keys: string): string =>
      `provider: { baseUrl: "https://sms.example.co.tz" }\nroutes:\n  alerts: { source: alertmanager, secret: am, recipients: ["+255712345678"], ${keys} }\n`;
    expect(refused(paging('escalate: [{ after: 10m, to: ["+255754000111"] }]'))).toEqual([
      expect.stringMatching(
        /^routes\.alerts\.escalate: on AWS every SMS of an incident carries its acknowledge link .*add ack: \{\}/,
      ),
    ]);
    expect(refused(paging('renotify: { every: 15m, max: 3 }'))).toEqual([
      expect.stringMatching(/^routes\.alerts\.renotify: on AWS every SMS of an incident carries its acknowledge link/),
    ]);
    expect(
      refused(
        paging('escalate: [{ after: 10m, to: ["+255754000111"] }], ack: { baseUrl: "http://sms.example.co.tz" }'),
      ),
    ).toEqual([expect.stringMatching(/^routes\.alerts\.ack\.baseUrl must be https/)]);
    expect(() =>
      synthStack('linked', paging('escalate: [{ after: 10m, to: ["+255754000111"] }], ack: {}'), bundle.dir),
    ).not.toThrow();
  });
});
