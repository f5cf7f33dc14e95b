import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEnvironments } from '../../infra/config';
import { BROKEN_CONFIG, tempDir } from './support';

// The real CLI against the real app (cdk.json), nag packs and built-in template validation
// included: the path `npx cdk synth -c env=<name>` takes. One synth costs 15-35 s of CPU (about half
// of it CloudFormation's schema validation); the time-out leaves room for a busy machine.
const CDK = join('node_modules', '.bin', 'cdk');
const CLI_TIMEOUT_MS = 420_000;

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cdkSynth(args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      CDK,
      ['synth', '--no-notices', '--quiet', ...args],
      {
        timeout: CLI_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, CDK_DISABLE_VERSION_CHECK: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true' },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let work: string;
beforeAll(() => {
  work = tempDir('synth');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('cdk synth', () => {
  it(
    'synthesises every environment in config/ with no validation finding',
    async () => {
      const environments = listEnvironments();
      expect(environments).toEqual(['dev', 'prod', 'staging']);
      // One CLI per environment, side by side.
      const results = await Promise.all(
        environments.map(async (env) => {
          const out = join(work, `out-${env}`);
          const result = await cdkSynth([
            '-c',
            `env=${env}`,
            '-c',
            `bundleDir=${join(work, `bundle-${env}`)}`,
            '-o',
            out,
          ]);
          return { env, out, result };
        }),
      );
      for (const { env, out, result } of results) {
        expect({ env, code: result.code, stderr: result.code === 0 ? '' : result.stderr }).toEqual({
          env,
          code: 0,
          stderr: '',
        });
        // cdk.json sets every feature flag: no "85 feature flags are not configured" on each synth.
        expect(result.stderr, env).not.toMatch(/feature flags? (are|is) not configured/);
        const template = JSON.parse(readFileSync(join(out, `SmsRelay-${env}.template.json`), 'utf8')) as {
          Resources: Record<string, { Type: string }>;
        };
        expect(Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function')).toHaveLength(4);
        const report = JSON.parse(readFileSync(join(out, 'validation-report.json'), 'utf8')) as {
          pluginReports: { violations?: unknown[] }[];
        };
        expect(report.pluginReports.flatMap((plugin) => plugin.violations ?? [])).toEqual([]);
      }
    },
    CLI_TIMEOUT_MS + 30_000,
  );

  it(
    'fails on a broken config, printing every validation problem',
    async () => {
      const configDir = join(work, 'config');
      rmSync(configDir, { recursive: true, force: true });
      mkdirSync(configDir);
      writeFileSync(join(configDir, 'broken.yaml'), BROKEN_CONFIG);
      const out = join(work, 'out-broken');
      const result = await cdkSynth(['-c', 'env=broken', '-c', `configDir=${configDir}`, '-o', out]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`${join(configDir, 'broken.yaml')}: invalid config`);
      expect(result.stderr).toMatch(/- routes\.alerts\.source: unknown source/);
      expect(result.stderr).toContain('- routes.alerts.recipients: at least one recipient is required');
      expect(existsSync(join(out, 'SmsRelay-broken.template.json'))).toBe(false);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'refuses config/local.yaml with a sentence saying why, and a copy of it naming each key',
    async () => {
      const local = await cdkSynth(['-c', 'env=local', '-o', join(work, 'out-local')]);
      expect(local.code).not.toBe(0);
      expect(local.stderr).toContain(
        "- config/local.yaml is the local runtime's config (npm start) and is never deployed: its provider is the sandbox on 127.0.0.1, its secrets are the file .relay/secrets.json and every route captures payloads.",
      );
      expect(existsSync(join(work, 'out-local', 'SmsRelay-local.template.json'))).toBe(false);

      // `cp config/local.yaml config/staging.yaml`, beside the real local.yaml.
      const configDir = join(work, 'copied');
      mkdirSync(configDir, { recursive: true });
      writeFileSync(join(configDir, 'local.yaml'), readFileSync('config/local.yaml', 'utf8'));
      writeFileSync(join(configDir, 'staging.yaml'), readFileSync('config/local.yaml', 'utf8'));
      const copied = await cdkSynth([
        '-c',
        'env=staging',
        '-c',
        `configDir=${configDir}`,
        '-o',
        join(work, 'out-copied'),
      ]);
      expect(copied.code).not.toBe(0);
      expect(copied.stderr).toContain(`${join(configDir, 'staging.yaml')}: invalid config`);
      expect(copied.stderr).toContain(
        '- provider.baseUrl must be https (the API key travels in its requests), and must not point at a loopback or private address (127.0.0.1)',
      );
      expect(copied.stderr).toContain(
        "- routes.alerts.capture: stores each webhook's payload (customer data) in the deployed table; remove it, or set deploy.allowCapture: true",
      );
      expect(copied.stderr).toContain(
        `- secrets: "sms-relay/local" is the secret of environment local (${join(configDir, 'local.yaml')});`,
      );
      expect(existsSync(join(work, 'out-copied', 'SmsRelay-staging.template.json'))).toBe(false);
    },
    CLI_TIMEOUT_MS,
  );
});
