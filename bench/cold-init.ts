/**
 * `coldInit`: how long a fresh Node process takes to load each deployed handler bundle, against a
 * baseline bundle that only imports and constructs the AWS SDK clients every handler uses
 * (DynamoDB, Secrets Manager): the part of a cold start the relay cannot avoid.
 *
 * Both sides are built by the stack's own bundler (`bundleHandlers` of `infra/bundle.ts`: the
 * baseline is one more entry directory for it), and the handlers are staged as the stack deploys
 * them (`stageFunctionAsset`: the bundle plus `config/prod.yaml` staged as JSON). Each sample is its
 * own `node` process timing `await import(bundle)` from inside, so Node's own start-up is left out.
 * The handlers get the stack's Lambda environment, so `prepareOnLambda()` builds the relay runtime
 * during the import, as in Lambda's init phase. Handler and baseline processes alternate.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUNDLE_FILE, bundleHandlers, HANDLER_NAMES, type HandlerName } from '../infra/bundle';
import { DEFAULT_MEMORY_MB } from '../infra/sms-relay';
import { RELAY_CONFIG_FILE, stageFunctionAsset } from '../infra/staging';
import { median, ratio, round } from './stats';
import { MAX_BODY_BYTES } from '../functions/core/defaults';

export interface ColdInitEntry {
  readonly ms: number;
  readonly baselineMs: number;
  readonly ratio: number;
}

const BASELINE_SOURCE = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
export const clients = [new DynamoDBClient({}), new SecretsManagerClient({})];
export const handler = async () => ({ clients: clients.length });
`;

const MARK = 'BENCH_IMPORT_MS=';

/** Loads `file` in a fresh `node` and returns the time of the import alone, in ms. */
function importOnce(file: string, env: NodeJS.ProcessEnv): Promise<number> {
  const script = `const t0 = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write('\\n${MARK}' + (performance.now() - t0) + '\\n'); process.exit(0);`;
  return new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], {
      cwd: tmpdir(),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      const line = out.split('\n').find((candidate) => candidate.startsWith(MARK));
      if (code !== 0 || line === undefined)
        reject(new Error(`import of ${file} failed (exit ${code}): ${err.slice(0, 2000)}`));
      else resolve(Number(line.slice(MARK.length)));
    });
  });
}

/** The environment the stack gives each function (`infra/sms-relay.ts`) with the prod config. */
function lambdaEnv(name: HandlerName, taskRoot: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'],
    NODE_OPTIONS: '',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_LAMBDA_FUNCTION_NAME: `SmsRelay-prod-${name}`,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(DEFAULT_MEMORY_MB[name]),
    // Credentials as Lambda provides them: in the environment, so no profile or IMDS look-up.
    AWS_ACCESS_KEY_ID: 'ASIABENCHEXAMPLE0000',
    AWS_SECRET_ACCESS_KEY: 'bench/secret/access/key/example/0000000000',
    AWS_SESSION_TOKEN: 'bench-session-token',
    TABLE_NAME: 'SmsRelay-prod-MessagesTable',
    SECRET_ID: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:sms-relay/prod-AbCdEf',
    LAMBDA_TASK_ROOT: taskRoot,
    RELAY_CONFIG: RELAY_CONFIG_FILE,
    POWERTOOLS_SERVICE_NAME: 'sms-relay',
    POWERTOOLS_METRICS_NAMESPACE: 'SmsRelay',
    ...(name === 'ingest'
      ? { MAX_BODY_BYTES: String(MAX_BODY_BYTES) }
      : { PROVIDER_BASE_URL: 'https://sms.example.co.tz' }),
    ...(name === 'balance-watch' ? { BALANCE_THRESHOLD: '5000' } : {}),
  };
}

/** Bundles with the project's bundler, which resolves paths against the working directory. */
function bundleIn(repoRoot: string, options: Parameters<typeof bundleHandlers>[0]): ReturnType<typeof bundleHandlers> {
  const previous = process.cwd();
  process.chdir(repoRoot);
  try {
    return bundleHandlers(options);
  } finally {
    process.chdir(previous);
  }
}

export async function runColdInit(
  repoRoot: string,
  { runs = 15, log = (_line: string): void => {} } = {},
): Promise<Record<HandlerName, ColdInitEntry>> {
  const outDir = join(tmpdir(), `sms-relay-bench-cold-${process.pid}`);
  // Inside the repository, so that esbuild resolves the SDK packages from its node_modules.
  const baselineEntries = join(repoRoot, 'bench', `.baseline-${process.pid}`);
  try {
    const { bundles } = bundleIn(repoRoot, { outDir: join(outDir, 'handlers') });
    mkdirSync(baselineEntries, { recursive: true });
    writeFileSync(join(baselineEntries, 'ingest.ts'), BASELINE_SOURCE);
    const baseline = bundleIn(repoRoot, {
      outDir: join(outDir, 'baseline'),
      entryDir: baselineEntries,
      handlers: ['ingest'],
    }).bundles[0]!.file;
    const configText = readFileSync(join(repoRoot, 'config', 'prod.yaml'), 'utf8');
    const staged = new Map(
      bundles.map((bundle) => [
        bundle.name,
        stageFunctionAsset({
          bundleDir: bundle.dir,
          configText,
          configSource: 'config/prod.yaml',
          stagingRoot: join(outDir, 'staged'),
        }),
      ]),
    );

    // One unmeasured load of each file warms the OS file cache.
    for (const name of HANDLER_NAMES)
      await importOnce(join(staged.get(name)!, BUNDLE_FILE), lambdaEnv(name, staged.get(name)!));
    await importOnce(baseline, lambdaEnv('ingest', staged.get('ingest')!));

    const samples = new Map(HANDLER_NAMES.map((name) => [name, { handler: [] as number[], baseline: [] as number[] }]));
    for (let run = 0; run < runs; run += 1) {
      for (const name of HANDLER_NAMES) {
        const env = lambdaEnv(name, staged.get(name)!);
        const sample = samples.get(name)!;
        const first = run % 2 === 0;
        if (first) sample.handler.push(await importOnce(join(staged.get(name)!, BUNDLE_FILE), env));
        sample.baseline.push(await importOnce(baseline, env));
        if (!first) sample.handler.push(await importOnce(join(staged.get(name)!, BUNDLE_FILE), env));
      }
      log(`cold init: round ${run + 1}/${runs}`);
    }
    return Object.fromEntries(
      HANDLER_NAMES.map((name) => {
        const { handler, baseline: base } = samples.get(name)!;
        return [
          name,
          { ms: round(median(handler)), baselineMs: round(median(base)), ratio: ratio(median(handler), median(base)) },
        ];
      }),
    ) as Record<HandlerName, ColdInitEntry>;
  } finally {
    rmSync(baselineEntries, { recursive: true, force: true });
    rmSync(outDir, { recursive: true, force: true });
  }
}
