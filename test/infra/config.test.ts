import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError } from '../../functions/core/config/errors';
import { listEnvironments, readEnvironmentConfig } from '../../infra/config';
import { providerUrlProblem } from '../../infra/deployable';
import { scheduleProblem } from '../../infra/schedule';
import { BROKEN_CONFIG, tempDir } from './support';

describe('readEnvironmentConfig', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('config');
    writeFileSync(join(dir, 'broken.yaml'), BROKEN_CONFIG);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('returns the validated config with the exact text and path it came from', () => {
    const loaded = readEnvironmentConfig('prod');
    expect(loaded.path).toBe(join('config', 'prod.yaml'));
    expect(loaded.text).toBe(readFileSync('config/prod.yaml', 'utf8'));
    expect(loaded.config.secrets).toBe('sms-relay/prod');
    expect(loaded.config.provider.baseUrl).toBe('https://sms.example.co.tz');
  });

  it.each(listEnvironments())('config/%s.yaml is valid and deployable', (env) => {
    const { config } = readEnvironmentConfig(env);
    expect(Object.keys(config.routes).length).toBeGreaterThan(0);
    expect(scheduleProblem(config.balance?.schedule ?? 'rate(1 hour)')).toBeUndefined();
  });

  it('ships realistic dev and prod environments', () => {
    expect(listEnvironments()).toEqual(expect.arrayContaining(['dev', 'prod']));
    const { config } = readEnvironmentConfig('prod');
    expect(
      Object.values(config.routes)
        .map((route) => route.source)
        .sort(),
    ).toEqual(['alertmanager', 'github', 'shopify']);
    expect(config.balance).toMatchObject({ threshold: 5000, email: 'ops@example.co.tz', schedule: 'rate(1 hour)' });
  });

  it('reports every problem of a broken config at once', () => {
    expect(() => readEnvironmentConfig('broken', { configDir: dir })).toThrow(ConfigError);
    try {
      readEnvironmentConfig('broken', { configDir: dir });
    } catch (error) {
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(2);
      expect(problems[0]).toMatch(/^routes\.alerts\.source: unknown source/);
      expect(problems[1]).toBe('routes.alerts.recipients: at least one recipient is required');
      expect((error as Error).message).toMatch(
        new RegExp(`^${join(dir, 'broken.yaml').replace(/[.\\]/g, '\\$&')}: invalid config`),
      );
    }
  });

  it('names the environments that do exist when one does not', () => {
    expect(() => readEnvironmentConfig('qa')).toThrow(
      /config\/qa\.yaml: invalid config\n {2}- no such file; environments in config: dev, prod, staging$/,
    );
  });

  it('refuses environment names that are not stack- and file-safe', () => {
    for (const name of ['../prod', 'Prod', 'prod.yaml', '']) {
      expect(() => readEnvironmentConfig(name)).toThrow(/environment names are lower-case letters/);
    }
  });
});

/** The problems `readEnvironmentConfig` refuses `env` of `configDir` with. */
function refusal(env: string, configDir?: string): readonly string[] {
  try {
    readEnvironmentConfig(env, configDir === undefined ? {} : { configDir });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error(`expected ${env} to be refused`);
}

describe('refused for deployment, each problem naming its key', () => {
  let dir: string;
  const write = (env: string, text: string): void => writeFileSync(join(dir, `${env}.yaml`), text);
  const routes = 'routes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"] }\n';
  beforeAll(() => {
    dir = tempDir('deployable');
    for (const env of ['local', 'prod', 'dev']) write(env, readFileSync(join('config', `${env}.yaml`), 'utf8'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('config/local.yaml, with a sentence saying why', () => {
    expect(refusal('local')).toEqual([
      "config/local.yaml is the local runtime's config (npm start) and is never deployed: its provider is the sandbox on 127.0.0.1, its secrets are the file .relay/secrets.json and every route captures payloads. " +
        'Deploy an environment of its own instead, e.g. cp config/staging.yaml config/<env>.yaml',
    ]);
    expect(listEnvironments()).not.toContain('local');
  });

  it('a copy of config/local.yaml: its provider URL, each captured route, and its secret', () => {
    write('copied', readFileSync('config/local.yaml', 'utf8'));
    const problems = refusal('copied', dir);
    expect(problems[0]).toBe(
      "provider.baseUrl must be https (the API key travels in its requests), and must not point at a loopback or private address (127.0.0.1): a deployed function cannot reach it; use the SMS service's public https URL",
    );
    const captured = problems.filter((problem) => problem.includes('.capture: '));
    // Every route of config/local.yaml captures payloads (for the console): each one is refused.
    const capturing = Object.values(
      parse(readFileSync('config/local.yaml', 'utf8')).routes as Record<string, { capture?: string }>,
    ).filter((route) => route.capture !== undefined);
    expect(capturing.length).toBeGreaterThan(10);
    expect(captured).toHaveLength(capturing.length);
    expect(captured[0]).toBe(
      "routes.alerts.capture: stores each webhook's payload (customer data) in the deployed table; remove it, or set deploy.allowCapture: true to deploy it on purpose",
    );
    expect(problems.at(-1)).toBe(
      `secrets: "sms-relay/local" is the secret of environment local (${join(dir, 'local.yaml')}); each environment needs its own (a second stack cannot create the same secret, and two environments must not share keys). ` +
        `Remove the secrets line from ${join(dir, 'copied.yaml')} to use "sms-relay/copied", or name one no other environment uses`,
    );
  });

  it('a copy of config/prod.yaml keeps secrets: sms-relay/prod, which prod uses: the copy is refused, prod is not, and the advice works', () => {
    const prodText = readFileSync('config/prod.yaml', 'utf8');
    write('prod2', prodText);
    expect(refusal('prod2', dir)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^secrets: "sms-relay/prod" is the secret of environment prod \\(${join(dir, 'prod.yaml').replace(/[.\\/]/g, '\\$&')}\\); `,
        ),
      ),
    ]);
    // Only the environment being synthesized is judged: the stray copy never stops prod.
    expect(readEnvironmentConfig('prod', { configDir: dir }).config.secrets).toBe('sms-relay/prod');
    // "Remove the secrets line": then prod2 gets its own name.
    write('prod2', prodText.replace(/^secrets: .*$/m, ''));
    expect(readEnvironmentConfig('prod2', { configDir: dir }).config.secrets).toBeUndefined();
    rmSync(join(dir, 'prod2.yaml'));
  });

  it("an explicit secret equal to another environment's default name", () => {
    write('other', `provider: { baseUrl: "https://sms.example.co.tz" }\nsecrets: sms-relay/dev\n${routes}`);
    // dev.yaml names sms-relay/dev itself; a config without secrets would default to it too.
    expect(refusal('other', dir)[0]).toMatch(
      /^secrets: "sms-relay\/dev" is the secret of environment dev \(.*dev\.yaml\);/,
    );
  });

  it("no secrets: the environment's own default name, shared with nobody", () => {
    write('fresh', `provider: { baseUrl: "https://sms.example.co.tz" }\n${routes}`);
    expect(readEnvironmentConfig('fresh', { configDir: dir }).config.secrets).toBeUndefined();
  });

  describe('several providers', () => {
    const providers = (gateway: string, extra = ''): string =>
      `providers:\n  main: { type: sms-service, baseUrl: "https://sms.example.co.tz" }\n  at: { type: africastalking, username: acme }\n  gateway:\n${gateway}${extra}`;
    const gatewayWith = (url: string, header: string): string =>
      `    type: http\n    url: "${url}"\n    headers: { X-API-Key: "${header}" }\n    body: '{"to": {{ to | json }}, "message": {{ text | json }}}'\n`;
    const good = gatewayWith('https://gw.example.com/api/v1/sms/send', '{{ secret.gateway-key }}');
    const routing =
      'routing:\n  - { numbers: ["+255"], use: [main, at] }\n  - { numbers: ["+254"], use: [at, gateway] }\n';

    it('deploys three providers whose URLs are https and whose keys are in the provider secret', () => {
      write('three', providers(good) + routing + routes);
      expect(readEnvironmentConfig('three', { configDir: dir }).config.providers).toHaveProperty('gateway');
    });

    it('an unknown provider type', () => {
      write('unknown-type', `providers:\n  main: { type: twilio, baseUrl: "https://api.twilio.com" }\n${routes}`);
      expect(refusal('unknown-type', dir)).toEqual([
        'providers.main.type: unknown provider type; use one of sms-service, africastalking, http',
      ]);
    });

    it('an http provider whose key is not where the provider secret keeps it, naming the provider and the value', () => {
      write('gw-token', providers(gatewayWith('https://gw.example.com/send', '{{ secret.gw-token }}')) + routes);
      expect(refusal('gw-token', dir)).toEqual([
        "providers.gateway: reads secret.gw-token, which is not in the provider secret's layout: the provider secret holds each provider's key as <name>-key (gateway-key for this one) and an http provider's other values as gateway-<anything> (docs/deploying.md)",
        'providers.gateway: its headers or body never read its key, secret.gateway-key: the provider secret holds each provider\'s key as <name>-key (gateway-key for this one) and an http provider\'s other values as gateway-<anything> (docs/deploying.md); e.g. headers: { X-API-Key: "{{ secret.gateway-key }}" }',
      ]);
    });

    it('an http url that is not https, by its key', () => {
      write(
        'plain',
        providers(gatewayWith('http://127.0.0.1:4030/api/v1/sms/send', '{{ secret.gateway-key }}')) + routes,
      );
      expect(refusal('plain', dir)).toEqual([
        "providers.gateway.url must be https (the API key travels in its requests), and must not point at a loopback or private address (127.0.0.1): a deployed function cannot reach it; use the SMS service's public https URL",
      ]);
    });

    it('a routing entry naming an unknown provider', () => {
      write('unrouted', `${providers(good)}routing:\n  - { numbers: ["+255"], use: [main, twilio] }\n${routes}`);
      expect(refusal('unrouted', dir)).toEqual([
        'routing[0].use[1]: unknown provider "twilio"; providers are main, at, gateway',
      ]);
    });
  });

  it('capture is deployed only with deploy.allowCapture: true', () => {
    const captured = 'routes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"], capture: 1h }\n';
    write('capturing', `provider: { baseUrl: "https://sms.example.co.tz" }\n${captured}`);
    expect(refusal('capturing', dir)).toEqual([
      expect.stringMatching(/^routes\.ci\.capture: stores each webhook's payload/),
    ]);
    write(
      'capturing',
      `provider: { baseUrl: "https://sms.example.co.tz" }\ndeploy: { allowCapture: true }\n${captured}`,
    );
    expect(readEnvironmentConfig('capturing', { configDir: dir }).config.routes['ci']?.capture).toBe(3600);
  });
});

describe('providerUrlProblem', () => {
  it.each([
    'https://sms.example.co.tz',
    'https://sms.example.co.tz:8443/api',
    'https://41.59.1.10',
    'https://[2001:db8::1]',
  ])('accepts %s', (url) => {
    expect(providerUrlProblem(url)).toBeUndefined();
  });

  it.each([
    ['http://sms.example.co.tz', 'must be https'],
    ['https://127.0.0.1:4010', 'loopback or private address (127.0.0.1)'],
    ['https://localhost', 'loopback or private address (localhost)'],
    ['https://api.localhost', 'loopback or private address'],
    ['https://10.1.2.3', 'private'],
    ['https://172.20.0.5', 'private'],
    ['https://192.168.1.10', 'private'],
    ['https://169.254.169.254', 'private'],
    ['https://100.64.0.1', 'private'],
    ['https://[::1]', 'private'],
    ['https://[fd00::1]', 'private'],
    ['https://[::ffff:127.0.0.1]', 'private'],
    ['https://0.0.0.0', 'private'],
  ])('refuses %s', (url, problem) => {
    expect(providerUrlProblem(url)).toContain(problem);
    expect(providerUrlProblem(url)).toMatch(/^provider\.baseUrl /);
  });
});

describe('scheduleProblem', () => {
  it.each([
    'rate(1 minute)',
    'rate(5 minutes)',
    'rate(1 hour)',
    'rate(6 hours)',
    'rate(1 day)',
    'rate(2 days)',
    'cron(0 6 * * ? *)',
  ])('accepts %s', (expression) => expect(scheduleProblem(expression)).toBeUndefined());

  it.each([
    ['rate(1 hours)', 'use "rate(1 hour)"'],
    ['rate(6 hour)', 'use "rate(6 hours)"'],
    ['rate(0 minutes)', 'at least 1'],
    ['rate(5  minutes)', 'single space'],
    ['cron(0 6 * * ?)', 'six fields'],
  ])('rejects %s', (expression, problem) => expect(scheduleProblem(expression)).toContain(problem));
});
