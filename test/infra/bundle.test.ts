import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../functions/core/config/parse';
import { STAGED_CONFIG_FORMAT, type StagedConfig } from '../../functions/core/config/staged';
import {
  BUNDLE_FILE,
  BUNDLE_FILES,
  bundleHandlers,
  CONFIG_LOADER_FILE,
  HANDLER_NAMES,
  METAFILE,
  type BundleResult,
} from '../../infra/bundle';
import { RELAY_CONFIG_FILE, stageFunctionAsset, stagedConfigText } from '../../infra/staging';
import { configText, HANDLERS_DIR, tempDir } from './support';

const run = promisify(execFile);
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

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
      expect(bundle.configLoaderBytes).toBe(readFileSync(join(bundle.dir, CONFIG_LOADER_FILE)).byteLength);
    }
  });

  it('keeps yaml and zod out of every index.mjs, and LiquidJS out of all but ingest and the http provider type that renders with it', () => {
    const metafile = JSON.parse(readFileSync(result.metafile, 'utf8')) as Metafile;
    const inputsOf = (file: string): string[] => {
      const output = metafile.outputs[relative(process.cwd(), file).split('\\').join('/')];
      expect(output).toBeDefined();
      return Object.keys(output!.inputs);
    };
    const packagesOf = (file: string): string[] =>
      inputsOf(file).flatMap((input) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1] ?? []);
    for (const bundle of result.bundles) {
      const packages = new Set(packagesOf(bundle.file));
      expect(packages).not.toContain('yaml');
      expect(packages).not.toContain('zod');
      // ingest renders templates; a bundle that sends may render an http provider's body, whose
      // module imports LiquidJS on its first send (`import()`), so its init does not evaluate it.
      const sendsThroughHttp = inputsOf(bundle.file).some((input) => input.endsWith('core/provider/kinds/http.ts'));
      expect(packages.has('liquidjs')).toBe(bundle.name === 'ingest' || sendsThroughHttp);
      // Everything a YAML config needs is in the loader beside it.
      const loader = new Set(packagesOf(join(bundle.dir, CONFIG_LOADER_FILE)));
      for (const name of ['yaml', 'zod', 'liquidjs']) expect(loader).toContain(name);
      expect(readFileSync(bundle.file, 'utf8')).toContain(`"./${CONFIG_LOADER_FILE}"`);
    }
  });

  it('emits ES modules that give CommonJS dependencies a require', () => {
    for (const bundle of result.bundles) {
      const code = readFileSync(bundle.file, 'utf8');
      expect(code.split('\n')[0]).toMatch(
        /^import \{ createRequire as \w+ \} from 'node:module'; const require = \w+\(import\.meta\.url\);$/,
      );
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
      expect(() =>
        bundleHandlers({ outDir: join(empty, 'out'), entryDir: empty, handlers: ['ingest', 'sweeper'] }),
      ).toThrow(`cannot bundle the handlers: ${join(empty, 'ingest.ts')}, ${join(empty, 'sweeper.ts')} missing`);
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

  it('puts the bundle, byte for byte, and the validated config as JSON in one package directory', () => {
    const text = configText('prod');
    const dir = stageFunctionAsset({ bundleDir: bundleDir('ingest'), configText: text, stagingRoot });
    expect(readdirSync(dir).sort()).toEqual([...BUNDLE_FILES, RELAY_CONFIG_FILE].sort());
    // Compared as digests: a deep equality of two buffers of megabytes walks them byte by byte (30 s).
    for (const file of BUNDLE_FILES)
      expect(sha256(readFileSync(join(dir, file))), file).toBe(sha256(readFileSync(join(bundleDir('ingest'), file))));
    const staged = readFileSync(join(dir, RELAY_CONFIG_FILE), 'utf8');
    expect(staged).toBe(stagedConfigText(text));
    expect(JSON.parse(staged)).toEqual({
      format: STAGED_CONFIG_FORMAT,
      config: JSON.parse(JSON.stringify(parseConfig(text))),
      balanceNotify: ['255712345678'],
      recipients: { oncall: [['255712345678'], ['255754111222']], orders: [['255765333444']], ci: [['255712345678']] },
    } satisfies StagedConfig);
  });

  it('refuses to stage an invalid config, templates included', () => {
    const text = configText('prod').replace('{{ name }}', '{{ name | nosuchfilter }}');
    expect(() => stageFunctionAsset({ bundleDir: bundleDir('ingest'), configText: text, stagingRoot })).toThrow(
      /routes\.orders\.template/,
    );
  });

  it('reuses the package for the same inputs and makes a new one when either changes', () => {
    const text = configText('prod');
    const first = stageFunctionAsset({ bundleDir: bundleDir('sender'), configText: text, stagingRoot });
    expect(stageFunctionAsset({ bundleDir: bundleDir('sender'), configText: text, stagingRoot })).toBe(first);
    // The staged config is the validated one: formatting and comments do not change it.
    expect(
      stageFunctionAsset({ bundleDir: bundleDir('sender'), configText: `${text}\n# a comment\n`, stagingRoot }),
    ).toBe(first);
    expect(
      stageFunctionAsset({
        bundleDir: bundleDir('sender'),
        configText: text.replace('retentionDays: 180', 'retentionDays: 181'),
        stagingRoot,
      }),
    ).not.toBe(first);
    // The fixture handlers differ only in their name string; real ones differ more.
    expect(stageFunctionAsset({ bundleDir: bundleDir('sweeper'), configText: text, stagingRoot })).not.toBe(first);
  });

  it('refuses a directory without a bundle', () => {
    const empty = join(stagingRoot, 'empty-bundle');
    mkdirSync(empty);
    expect(() => stageFunctionAsset({ bundleDir: empty, configText: 'x', stagingRoot })).toThrow(
      /no bundle at .*index\.mjs/,
    );
  });

  it.each(HANDLER_NAMES)('the staged %s package loads in Node the way Lambda loads it', async (name) => {
    const dir = stageFunctionAsset({ bundleDir: bundleDir(name), configText: configText('prod'), stagingRoot });
    // Lambda's working directory is the package root; the handler must not need anything else.
    const probe = join(stagingRoot, `probe-${name}.mjs`);
    writeFileSync(
      probe,
      `const m = await import(${JSON.stringify(join(dir, BUNDLE_FILE))}); console.log(typeof m.handler);`,
    );
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
