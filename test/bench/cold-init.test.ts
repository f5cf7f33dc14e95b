import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { baselineSource, BUNDLE_BUILD_OPTIONS, bytesByPackage, packageFamily, REQUIRE_SHIM, sdkClientsIn } from '../../bench/cold-init';

const bundleSource = readFileSync(join(__dirname, '..', '..', 'infra', 'bundle.ts'), 'utf8');

describe('cold-init baseline build', () => {
  it('uses the same banner as infra/bundle.ts', () => {
    expect(bundleSource).toContain(JSON.stringify(REQUIRE_SHIM));
  });

  it('uses the same esbuild options as infra/bundle.ts', () => {
    for (const [option, value] of Object.entries({ platform: 'node', target: 'node22', format: 'esm' })) {
      expect(bundleSource).toContain(`${option}: '${value}'`);
      expect(BUNDLE_BUILD_OPTIONS[option as keyof typeof BUNDLE_BUILD_OPTIONS]).toBe(value);
    }
    expect(bundleSource).toContain("mainFields: ['module', 'main']");
    expect(BUNDLE_BUILD_OPTIONS.mainFields).toEqual(['module', 'main']);
    expect(bundleSource).toContain('keepNames: true');
    expect(bundleSource).toContain("legalComments: 'none'");
    expect(bundleSource).toContain('minify: options.minify ?? true');
    expect(BUNDLE_BUILD_OPTIONS).toMatchObject({ bundle: true, minify: true, keepNames: true, sourcemap: false, legalComments: 'none' });
  });

  it('finds the SDK clients of a bundle in the metafile and imports exactly those', () => {
    const metafile = {
      inputs: {},
      outputs: {
        'out/ingest/index.mjs': {
          bytes: 300,
          entryPoint: 'functions/handlers/ingest.ts',
          imports: [],
          exports: [],
          inputs: {
            'node_modules/@aws-sdk/client-dynamodb/dist-es/index.js': { bytesInOutput: 100 },
            'node_modules/@smithy/core/dist-es/index.js': { bytesInOutput: 50 },
            'node_modules/zod/v4/index.js': { bytesInOutput: 120 },
            'functions/core/pipeline/evaluate.ts': { bytesInOutput: 30 },
          },
        },
      },
    } as unknown as Metafile;
    expect(sdkClientsIn(metafile, 'out/ingest/index.mjs')).toEqual(['@aws-sdk/client-dynamodb']);
    expect(bytesByPackage(metafile, 'out/ingest/index.mjs')).toEqual({ zod: 120, '@aws-sdk/client-dynamodb': 100, '@smithy/core': 50, '(project)': 30 });
    expect(packageFamily('@smithy/core')).toBe('AWS SDK (+ smithy)');
    expect(packageFamily('@aws-lambda-powertools/logger')).toBe('Powertools');
    expect(() => sdkClientsIn(metafile, 'missing.mjs')).toThrow(/no output/);

    const source = baselineSource(['@aws-sdk/client-dynamodb', '@aws-sdk/client-secrets-manager']);
    expect(source).toContain("import { DynamoDBClient } from '@aws-sdk/client-dynamodb';");
    expect(source).toContain("import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';");
    expect(source).toContain('new DynamoDBClient({}), new SecretsManagerClient({})');
  });
});
