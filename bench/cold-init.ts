/**
 * `coldInit`: how long a fresh Node process takes to load each deployed handler bundle, against a
 * baseline bundle that loads only the AWS SDK clients the handler uses and constructs them.
 *
 * Both sides are built with the options of `infra/bundle.ts` (node22 ESM, minified, kept names,
 * the `require` banner). Each measurement is its own `node` process that reads `performance.now()`
 * just before `await import(bundle)` and just after it, so Node's own start-up is left out and only
 * the bundle's load and module-scope work is timed. The handlers are loaded with the Lambda
 * environment of the stack (`AWS_EXECUTION_ENV` set, `SECRET_ID` not a file, the prod config): so
 * `prepareOnLambda()` builds the relay runtime during the import — config parsed and validated,
 * templates and recipients compiled, clients created — exactly as in Lambda's init phase. Handler
 * and baseline processes alternate, so load from other tenants hits both.
 *
 * Details: the same handler imported *without* the Lambda environment (module evaluation only; the
 * runtime would be built by the first invocation), and the cold import time of the big libraries
 * on their own, which tells what dominates.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';
import { BUNDLE_FILE, bundleHandlers, HANDLER_NAMES, type HandlerName } from '../infra/bundle';
import { RELAY_CONFIG_FILE, stageFunctionAsset } from '../infra/staging';
import { progress, REPO_ROOT } from './harness';
import { readMemoryDefaults } from './memory';
import { median, ratio, round } from './stats';

/**
 * The banner of `infra/bundle.ts` (not exported there); `test/bench/cold-init.test.ts` checks this
 * copy against the source so the two builds cannot drift apart.
 */
export const REQUIRE_SHIM =
  "import { createRequire as __smsRelayCreateRequire } from 'node:module'; const require = __smsRelayCreateRequire(import.meta.url);";

/** The esbuild options `bundleHandlers` uses, minus entry points and output location. */
export const BUNDLE_BUILD_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  mainFields: ['module', 'main'],
  banner: { js: REQUIRE_SHIM },
  minify: true,
  keepNames: true,
  sourcemap: false,
  legalComments: 'none',
  metafile: true,
  logLevel: 'silent',
};

/** The AWS SDK clients a bundle can contain, and how the baseline constructs each. */
export const SDK_CLIENTS = {
  '@aws-sdk/client-dynamodb': { className: 'DynamoDBClient' },
  '@aws-sdk/client-secrets-manager': { className: 'SecretsManagerClient' },
} as const;
export type SdkClientPackage = keyof typeof SDK_CLIENTS;

/** The SDK client packages that went into the output `outputPath` of `metafile`. */
export function sdkClientsIn(metafile: Metafile, outputPath: string): SdkClientPackage[] {
  const output = metafile.outputs[outputPath];
  if (output === undefined) throw new Error(`no output ${outputPath} in the metafile`);
  const inputs = Object.keys(output.inputs);
  return (Object.keys(SDK_CLIENTS) as SdkClientPackage[]).filter((pkg) => inputs.some((input) => input.includes(`node_modules/${pkg}/`)));
}

/** The baseline entry: import the clients, construct them, export a trivial handler. */
export function baselineSource(packages: readonly SdkClientPackage[]): string {
  const imports = packages.map((pkg) => `import { ${SDK_CLIENTS[pkg].className} } from '${pkg}';`).join('\n');
  const clients = packages.map((pkg) => `new ${SDK_CLIENTS[pkg].className}({})`).join(', ');
  return `${imports}\nexport const clients = [${clients}];\nexport const handler = async () => ({ clients: clients.length });\n`;
}

/** Bytes in the output of each package (node_modules/<pkg>, or "(project)") of one bundle. */
export function bytesByPackage(metafile: Metafile, outputPath: string): Record<string, number> {
  const output = metafile.outputs[outputPath];
  if (output === undefined) throw new Error(`no output ${outputPath} in the metafile`);
  const totals: Record<string, number> = {};
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
    const key = match === null ? '(project)' : (match[1] as string);
    totals[key] = (totals[key] ?? 0) + bytesInOutput;
  }
  return Object.fromEntries(Object.entries(totals).sort((a, b) => b[1] - a[1]));
}

/** Groups package byte counts into the families the report talks about. */
export function packageFamily(pkg: string): string {
  if (pkg.startsWith('@aws-sdk/') || pkg.startsWith('@smithy/') || pkg.startsWith('@aws-crypto/') || pkg === 'tslib' || pkg === 'fast-xml-parser' || pkg === 'strnum' || pkg === 'bowser' || pkg === 'uuid') return 'AWS SDK (+ smithy)';
  if (pkg.startsWith('@aws-lambda-powertools/')) return 'Powertools';
  return pkg;
}

const MARK = 'BENCH_IMPORT_MS=';

/** Loads `file` in a fresh `node` and returns the time of the import alone, in ms. */
async function importOnce(file: string, env: NodeJS.ProcessEnv): Promise<number> {
  const script = `const t0 = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); const t1 = performance.now(); process.stdout.write('\\n${MARK}' + (t1 - t0) + '\\n'); process.exit(0);`;
  return await new Promise<number>((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], { cwd: tmpdir(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.split('\n').find((candidate) => candidate.startsWith(MARK));
      if (code !== 0 || line === undefined) reject(new Error(`import of ${file} failed (exit ${code}): ${err.slice(0, 2000)}`));
      else resolvePromise(Number(line.slice(MARK.length)));
    });
  });
}

export interface ColdInitEntry {
  readonly ms: number;
  readonly baselineMs: number;
  readonly ratio: number;
}

export interface ColdInitDetails {
  readonly runs: number;
  /** Processes for the module-only and library figures. */
  readonly detailRuns: number;
  readonly bundles: Readonly<Record<string, { readonly bytes: number; readonly baselineBytes: number; readonly sdkClients: readonly string[]; readonly byFamily: Readonly<Record<string, number>> }>>;
  /** Median import time without the Lambda environment: module evaluation only, no runtime build. */
  readonly moduleOnlyMs: Readonly<Record<string, number>>;
  /** Median cold import time of single libraries, bundled the same way. */
  readonly librariesMs: Readonly<Record<string, number>>;
  readonly memoryMb: Readonly<Record<string, number>>;
}

/** The environment the stack gives each function (`infra/sms-relay.ts`), for the prod config. */
function lambdaEnv(name: HandlerName, memoryMb: Record<HandlerName, number>, taskRoot: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    NODE_OPTIONS: '',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_LAMBDA_FUNCTION_NAME: `SmsRelay-prod-${name}`,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb[name]),
    // Credentials as Lambda provides them: in the environment (no profile or IMDS look-up).
    AWS_ACCESS_KEY_ID: 'ASIABENCHEXAMPLE0000',
    AWS_SECRET_ACCESS_KEY: 'bench/secret/access/key/example/0000000000',
    AWS_SESSION_TOKEN: 'bench-session-token',
    TABLE_NAME: 'SmsRelay-prod-MessagesTable',
    SECRET_ID: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:sms-relay/prod-AbCdEf',
    // As deployed: the function's package holds the bundle and the staged config (`stageFunctionAsset`).
    LAMBDA_TASK_ROOT: taskRoot,
    RELAY_CONFIG: RELAY_CONFIG_FILE,
    POWERTOOLS_SERVICE_NAME: 'sms-relay',
    POWERTOOLS_METRICS_NAMESPACE: 'SmsRelay',
  };
  if (name === 'ingest') env['MAX_BODY_BYTES'] = '262144';
  else env['PROVIDER_BASE_URL'] = 'https://sms.example.co.tz';
  if (name === 'balance-watch') env['BALANCE_THRESHOLD'] = '5000';
  return env;
}

/** Libraries measured alone for the breakdown. */
const LIBRARIES: Readonly<Record<string, string>> = {
  'AWS SDK DynamoDB client': "import { DynamoDBClient } from '@aws-sdk/client-dynamodb'; export const c = new DynamoDBClient({});",
  'AWS SDK Secrets Manager client': "import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager'; export const c = new SecretsManagerClient({});",
  yaml: "import { parse } from 'yaml'; export const v = parse('a: 1');",
  zod: "import { z } from 'zod'; export const s = z.strictObject({ a: z.string() }); s.parse({ a: 'x' });",
  liquidjs: "import { Liquid } from 'liquidjs'; export const l = new Liquid(); l.parse('{{ a }}');",
  'libphonenumber-js': "import { parsePhoneNumberFromString } from 'libphonenumber-js'; export const n = parsePhoneNumberFromString('+255712345678');",
  'Powertools logger + metrics': "import { Logger } from '@aws-lambda-powertools/logger'; import { Metrics } from '@aws-lambda-powertools/metrics'; export const l = new Logger(); export const m = new Metrics({ namespace: 'x', serviceName: 'y' });",
};

export interface ColdInitOptions {
  /** Fresh processes per side and handler. @default 9 */
  readonly runs?: number;
  /** Processes per side for the details (module-only, libraries). @default 5 */
  readonly detailRuns?: number;
}

export async function runColdInit({ runs = 9, detailRuns = 5 }: ColdInitOptions = {}): Promise<{ result: Record<HandlerName, ColdInitEntry>; details: ColdInitDetails }> {
  const memoryMb = readMemoryDefaults(REPO_ROOT);
  const outDir = join(tmpdir(), `sms-relay-bench-bundles-${process.pid}`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  try {
    // The deployed bundles, built by the project's own function.
    const previousCwd = process.cwd();
    process.chdir(REPO_ROOT);
    let built;
    try {
      built = bundleHandlers({ outDir: join(outDir, 'handlers'), minify: true });
    } finally {
      process.chdir(previousCwd);
    }
    const metafile = JSON.parse(readFileSync(built.metafile, 'utf8')) as Metafile;

    // One baseline per distinct client set.
    const baselines = new Map<string, { file: string; bytes: number }>();
    const handlerInfo = new Map<HandlerName, { file: string; taskRoot: string; bytes: number; clients: SdkClientPackage[]; baselineKey: string; byFamily: Record<string, number> }>();
    for (const bundle of built.bundles) {
      const outputPath = relative(REPO_ROOT, bundle.file).split('\\').join('/');
      const clients = sdkClientsIn(metafile, outputPath);
      const baselineKey = clients.map((pkg) => pkg.replace('@aws-sdk/client-', '')).join('+') || 'none';
      if (!baselines.has(baselineKey)) {
        const file = join(outDir, `baseline-${baselineKey}`, BUNDLE_FILE);
        buildSync({ ...BUNDLE_BUILD_OPTIONS, stdin: { contents: baselineSource(clients), resolveDir: REPO_ROOT, sourcefile: `baseline-${baselineKey}.ts`, loader: 'ts' }, outfile: file });
        baselines.set(baselineKey, { file, bytes: statSync(file).size });
      }
      const byFamily: Record<string, number> = {};
      for (const [pkg, bytes] of Object.entries(bytesByPackage(metafile, outputPath))) byFamily[packageFamily(pkg)] = (byFamily[packageFamily(pkg)] ?? 0) + bytes;
      const taskRoot = stageFunctionAsset({
        bundleDir: dirname(bundle.file),
        configText: readFileSync(join(REPO_ROOT, 'config', 'prod.yaml'), 'utf8'),
        configSource: 'config/prod.yaml',
        stagingRoot: join(outDir, 'staged'),
      });
      handlerInfo.set(bundle.name, { file: join(taskRoot, BUNDLE_FILE), taskRoot, bytes: bundle.bytes, clients, baselineKey, byFamily: Object.fromEntries(Object.entries(byFamily).sort((a, b) => b[1] - a[1])) });
    }

    // Libraries alone, bundled the same way.
    const libraryFiles: Record<string, string> = {};
    for (const [name, contents] of Object.entries(LIBRARIES)) {
      const file = join(outDir, `lib-${name.replace(/[^a-z0-9]+/gi, '-')}`, BUNDLE_FILE);
      buildSync({ ...BUNDLE_BUILD_OPTIONS, stdin: { contents, resolveDir: REPO_ROOT, sourcefile: `${name}.ts`, loader: 'ts' }, outfile: file });
      libraryFiles[name] = file;
    }

    // Warm the OS file cache for every file once (not measured).
    const ingestRoot = handlerInfo.get('ingest')!.taskRoot;
    for (const name of HANDLER_NAMES) await importOnce(handlerInfo.get(name)!.file, lambdaEnv(name, memoryMb, handlerInfo.get(name)!.taskRoot));
    for (const { file } of baselines.values()) await importOnce(file, lambdaEnv('ingest', memoryMb, ingestRoot));

    const samples = new Map<HandlerName, { handler: number[]; baseline: number[]; moduleOnly: number[] }>(HANDLER_NAMES.map((name) => [name, { handler: [], baseline: [], moduleOnly: [] }]));
    for (let run = 0; run < runs; run += 1) {
      for (const name of HANDLER_NAMES) {
        const info = handlerInfo.get(name)!;
        const baseline = baselines.get(info.baselineKey)!;
        const env = lambdaEnv(name, memoryMb, info.taskRoot);
        const sample = samples.get(name)!;
        if (run % 2 === 0) {
          sample.handler.push(await importOnce(info.file, env));
          sample.baseline.push(await importOnce(baseline.file, env));
        } else {
          sample.baseline.push(await importOnce(baseline.file, env));
          sample.handler.push(await importOnce(info.file, env));
        }
        if (run < detailRuns) {
          const { AWS_EXECUTION_ENV: _dropped, ...moduleOnlyEnv } = env;
          sample.moduleOnly.push(await importOnce(info.file, moduleOnlyEnv));
        }
      }
      progress(`cold init: round ${run + 1}/${runs}`);
    }

    const librarySamples: Record<string, number[]> = Object.fromEntries(Object.keys(LIBRARIES).map((name) => [name, []]));
    for (let run = 0; run < detailRuns; run += 1) {
      for (const [name, file] of Object.entries(libraryFiles)) librarySamples[name]!.push(await importOnce(file, lambdaEnv('ingest', memoryMb, ingestRoot)));
    }

    const result = Object.fromEntries(
      HANDLER_NAMES.map((name) => {
        const sample = samples.get(name)!;
        const ms = median(sample.handler);
        const baselineMs = median(sample.baseline);
        return [name, { ms: round(ms, 1), baselineMs: round(baselineMs, 1), ratio: ratio(ms, baselineMs) }];
      }),
    ) as Record<HandlerName, ColdInitEntry>;

    return {
      result,
      details: {
        runs,
        detailRuns,
        bundles: Object.fromEntries(
          HANDLER_NAMES.map((name) => {
            const info = handlerInfo.get(name)!;
            return [name, { bytes: info.bytes, baselineBytes: baselines.get(info.baselineKey)!.bytes, sdkClients: info.clients, byFamily: info.byFamily }];
          }),
        ),
        moduleOnlyMs: Object.fromEntries(HANDLER_NAMES.map((name) => [name, round(median(samples.get(name)!.moduleOnly), 1)])),
        librariesMs: Object.fromEntries(Object.entries(librarySamples).map(([name, values]) => [name, round(median(values), 1)])),
        memoryMb,
      },
    };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}
