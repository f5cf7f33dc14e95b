import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { type ConfigOptions, configYaml, newSecrets, type RouteInput, standardRoutes } from './config';
import { closeIdleSockets } from './http';
import { type Runtime, type RuntimeFiles, scratchDir, startRuntime, writeRuntimeFiles } from './runtime';
import { startTestSandbox, type TestSandbox } from './sandbox';

/** A sandbox plus one runtime pointed at it, with fresh secrets and a fresh data dir. */
export interface Scenario {
  readonly label: string;
  readonly sandbox: TestSandbox['sandbox'];
  readonly secrets: Readonly<Record<string, string>>;
  readonly files: RuntimeFiles;
  runtime: Runtime;
  /** The env the runtime was started with (tuning variables), for a restart on the same store. */
  readonly env: Record<string, string>;
  /** Starts a new runtime on the same files (after a stop or a kill). */
  restart(): Promise<Runtime>;
  /** Stops the runtime (if running), closes the sandbox, removes the scratch dir. */
  close(): Promise<void>;
}

export interface ScenarioOptions {
  readonly label: string;
  readonly routes?: Record<string, RouteInput>;
  readonly timeoutMs?: number;
  readonly env?: Record<string, string>;
  /** The sandbox's balance at start. */
  readonly balance?: number;
  /** The sandbox's price of one SMS to one recipient. */
  readonly rate?: number;
  /** The relay config's `balance` section. */
  readonly balanceWatch?: ConfigOptions['balanceWatch'];
}

export async function startScenario({
  label,
  routes = standardRoutes(),
  timeoutMs,
  env = {},
  balance,
  rate,
  balanceWatch,
}: ScenarioOptions): Promise<Scenario> {
  const secrets = newSecrets();
  const { sandbox } = await startTestSandbox(secrets['providerApiKey']!, balance, rate);
  const config = configYaml({
    routes,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(balanceWatch === undefined ? {} : { balanceWatch }),
  });
  const files = writeRuntimeFiles(scratchDir(label), config, secrets);
  const launch = async (): Promise<Runtime> =>
    await startRuntime({
      files,
      providerBaseUrl: sandbox.baseUrl,
      providerApiKey: secrets['providerApiKey']!,
      env,
      label,
    });
  let runtime: Runtime;
  try {
    runtime = await launch();
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  const scenario: Scenario = {
    label,
    sandbox,
    secrets,
    files,
    runtime,
    env,
    restart: async () => {
      scenario.runtime = await launch();
      return scenario.runtime;
    },
    close: async () => {
      try {
        if (scenario.runtime.alive()) await scenario.runtime.kill();
      } finally {
        closeIdleSockets();
        await sandbox.close();
        rmSync(files.dir, { recursive: true, force: true });
      }
    },
  };
  return scenario;
}

/** A short random run id, so texts of one run never match another's. */
export const runId = (): string => randomBytes(4).toString('hex');
