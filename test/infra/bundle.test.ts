import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE, bundleHandlers, HANDLER_NAMES, METAFILE, type BundleResult } from '../../infra/bundle';
import { RELAY_CONFIG_FILE, stageFunctionAsset } from '../../infra/staging';
import { configText, HANDLERS_DIR, tempDir } from './support';

const run = promisify(execFile);

let outDir: string;
let result: BundleResult;

beforeAll(() => {
  outDir = tempDir('bundle');
  result = bundleHandlers({ outDir, entryDir: HANDLERS_DIR });
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('bundleHandlers', () => {
  it('writes one index.mjs per handler, with sizes', () => {
    expect(result.bundles.map((bundle) => bundle.name)).toEqual([...HANDLER_NAMES]);
    for (const bundle of result.bundles) {
      expect(bundle.file).toBe(join(outDir, bundle.name, BUNDLE_FILE));
      expect(bundle.entry).toBe(join(HANDLERS_DIR, `${bundle.name}.ts`));
      expect(bundle.bytes).toBe(readFileSync(bundle.file).byteLength);
    }
  });

  it('emits ES modules that give CommonJS dependencies a require', () => {
    for (const bundle of result.bundles) {
      const code = readFileSync(bundle.file, 'utf8');
      expect(code.split('\n')[0]).toMatch(/^import \{ createRequire as \w+ \} from 'node:module'; const require = \w+\(import\.meta\.url\);$/);
      expect(code).toMatch(/export\s*\{[^}]*\bhandler\b[^}]*\}/);
    }
  });

  it('bundles the AWS SDK rather than loading the runtime copy', () => {
    const metafile = JSON.parse(readFileSync(result.metafile, 'utf8')) as Metafile;
    expect(result.metafile).toBe(join(outDir, METAFILE));
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.some((input) => input.includes('node_modules/@aws-sdk/'))).toBe(true);
    for (const bundle of result.bundles) {
      expect(readFileSync(bundle.file, 'utf8')).not.toMatch(/from\s*["']@aws-sdk\//);
    }
  });

  it('names every missing handler source instead of bundling a partial set', () => {
    const empty = tempDir('no-handlers');
    try {
      expect(() => bundleHandlers({ outDir: join(empty, 'out'), entryDir: empty, handlers: ['ingest', 'sweeper'] })).toThrow(
        `cannot bundle the handlers: ${join(empty, 'ingest.ts')}, ${join(empty, 'sweeper.ts')} missing`,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('stageFunctionAsset', () => {
  let stagingRoot: string;
  beforeAll(() => {
    stagingRoot = tempDir('staging');
  });
  afterAll(() => rmSync(stagingRoot, { recursive: true, force: true }));

  const bundleDir = (name: string): string => join(outDir, name);

  it('puts the bundle and the config, byte for byte, in one package directory', () => {
    const text = configText('prod');
    const dir = stageFunctionAsset({ bundleDir: bundleDir('ingest'), configText: text, stagingRoot });
    expect(readFileSync(join(dir, BUNDLE_FILE))).toEqual(readFileSync(join(bundleDir('ingest'), BUNDLE_FILE)));
    expect(readFileSync(join(dir, RELAY_CONFIG_FILE), 'utf8')).toBe(text);
  });

  it('reuses the package for the same inputs and makes a new one when either changes', () => {
    const text = configText('prod');
    const first = stageFunctionAsset({ bundleDir: bundleDir('sender'), configText: text, stagingRoot });
    expect(stageFunctionAsset({ bundleDir: bundleDir('sender'), configText: text, stagingRoot })).toBe(first);
    expect(stageFunctionAsset({ bundleDir: bundleDir('sender'), configText: `${text}\n`, stagingRoot })).not.toBe(first);
    // The fixture handlers differ only in their name string; real ones differ more.
    expect(stageFunctionAsset({ bundleDir: bundleDir('sweeper'), configText: text, stagingRoot })).not.toBe(first);
  });

  it('refuses a directory without a bundle', () => {
    const empty = join(stagingRoot, 'empty-bundle');
    mkdirSync(empty);
    expect(() => stageFunctionAsset({ bundleDir: empty, configText: 'x', stagingRoot })).toThrow(/no bundle at .*index\.mjs/);
  });

  it.each(HANDLER_NAMES)('the staged %s package loads in Node the way Lambda loads it', async (name) => {
    const dir = stageFunctionAsset({ bundleDir: bundleDir(name), configText: configText('prod'), stagingRoot });
    // Lambda's working directory is the package root; the handler must not need anything else.
    const probe = join(stagingRoot, `probe-${name}.mjs`);
    writeFileSync(probe, `const m = await import(${JSON.stringify(join(dir, BUNDLE_FILE))}); console.log(typeof m.handler);`);
    const { stdout } = await run(process.execPath, [probe], {
      cwd: dir,
      env: {
        PATH: process.env['PATH'] ?? '',
        AWS_REGION: 'af-south-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        LAMBDA_TASK_ROOT: dir,
        TABLE_NAME: 'relay-test',
        SECRET_ID: 'sms-relay/test',
        RELAY_CONFIG: RELAY_CONFIG_FILE,
        POWERTOOLS_SERVICE_NAME: 'sms-relay',
        POWERTOOLS_METRICS_NAMESPACE: 'SmsRelay',
        PROVIDER_BASE_URL: 'https://sms.example.co.tz',
        MAX_BODY_BYTES: '262144',
      },
    });
    expect(stdout.trim()).toBe('function');
    expect(existsSync(join(dir, RELAY_CONFIG_FILE))).toBe(true);
  });
});
