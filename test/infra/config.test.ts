import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../functions/core/config/errors';
import { listEnvironments, readEnvironmentConfig } from '../../infra/config';
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
    expect(Object.values(config.routes).map((route) => route.source).sort()).toEqual(['alertmanager', 'github', 'shopify']);
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
      expect((error as Error).message).toMatch(new RegExp(`^${join(dir, 'broken.yaml').replace(/[.\\]/g, '\\$&')}: invalid config`));
    }
  });

  it('names the environments that do exist when one does not', () => {
    expect(() => readEnvironmentConfig('staging')).toThrow(/config\/staging\.yaml: invalid config\n {2}- no such file; environments in config: .*dev.*prod/);
  });

  it('refuses environment names that are not stack- and file-safe', () => {
    for (const name of ['../prod', 'Prod', 'prod.yaml', '']) {
      expect(() => readEnvironmentConfig(name)).toThrow(/environment names are lower-case letters/);
    }
  });
});

describe('scheduleProblem', () => {
  it.each(['rate(1 minute)', 'rate(5 minutes)', 'rate(1 hour)', 'rate(6 hours)', 'rate(1 day)', 'rate(2 days)', 'cron(0 6 * * ? *)'])(
    'accepts %s',
    (expression) => expect(scheduleProblem(expression)).toBeUndefined(),
  );

  it.each([
    ['rate(1 hours)', 'use "rate(1 hour)"'],
    ['rate(6 hour)', 'use "rate(6 hours)"'],
    ['rate(0 minutes)', 'at least 1'],
    ['rate(5  minutes)', 'single space'],
    ['cron(0 6 * * ?)', 'six fields'],
  ])('rejects %s', (expression, problem) => expect(scheduleProblem(expression)).toContain(problem));
});
