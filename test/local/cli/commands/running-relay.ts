import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { loadConfigFile } from '../../../../functions/core/config/load';
import { ingestWebhook } from '../../../../functions/relay/ingest';
import { sendMessage } from '../../../../functions/relay/sender';
import { announceRuntime, withdrawRuntime } from '../../../../local/shared/discovery';
import { openLocalStore, type LocalStore } from '../../../../local/shared/local-store';
import { createLocalContext } from '../../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../../local/runtime/secrets';
import { createSendQueue, type SendQueue } from '../../../../local/runtime/send-queue';
import { createRelayServer, type RelayServer } from '../../../../local/runtime/server';
import { resolveRuntimeSettings } from '../../../../local/shared/settings';
import { startSandbox } from '../../../../local/sandbox/server';
import { Lane } from '../../../../functions/core/lanes';
import type { RunningSandbox } from '../../../../local/sandbox/types';

/**
 * A relay running in this process as `npm start` runs one (config/local.yaml, its own data
 * directory, a sandbox, `/_relay` behind an operator secret, announced in `runtime.json`), for the
 * store commands' tests: the CLI finds it and goes through `/_relay`.
 */

const CONFIG = new URL('../../../../config/local.yaml', import.meta.url).pathname;

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `sms-relay <args>` as a user runs it, in a process of its own. */
export function cli(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/sms-relay.mjs', ...args],
      { encoding: 'utf8', env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
      },
    );
  });
}

/** What the file's tests read of the running relay, once `beforeAll` has started it. */
export interface RunningRelay {
  readonly dataDir: string;
  readonly local: LocalStore;
  readonly sandbox: RunningSandbox;
  readonly url: string;
  /** The `Authorization` header `/_relay` requires: the runtime's console secret. */
  readonly OPERATOR: { readonly authorization: string };
}

/** Starts the relay before the file's tests and stops it after them; `name` labels its directory and secret. */
export function useRunningRelay(name: string): RunningRelay {
  let dir: string;
  let dataDir: string;
  let local: LocalStore;
  let sandbox: RunningSandbox;
  let relay: RelayServer;
  let url: string;
  let feeder: SendQueue;
  const OPERATOR_SECRET = `${name}-test-operator-secret`;
  const OPERATOR = { authorization: `Bearer ${OPERATOR_SECRET}` };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `sms-relay-${name}-`));
    const settings = resolveRuntimeSettings(
      { config: CONFIG, secrets: join(dir, 'secrets.json'), dataDir: join(dir, 'data') },
      {},
    );
    dataDir = settings.dataDir;
    const loaded = loadConfigFile(CONFIG);
    const secrets = ensureSecretsFile(settings.secretsPath, loaded).values;
    local = await openLocalStore({ dataDir, tableName: settings.tableName });
    sandbox = await startSandbox({
      apiKey: secrets['providerApiKey']!,
      senderIds: ['SMSRELAY', 'ALERTS', 'DUKA'],
      defaultSenderId: 'SMSRELAY',
      balance: 1000,
      rate: 1,
    });
    const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    const context = createLocalContext({
      loaded,
      store: local.store,
      secretsPath: settings.secretsPath,
      providerBaseUrl: sandbox.baseUrl,
      providerApiKey: secrets['providerApiKey']!,
      logger: silent,
      policy: settings.policy,
    });
    feeder = createSendQueue({ send: (id) => sendMessage(context, id), concurrency: 2, onError: () => undefined });
    relay = createRelayServer();
    const port = await relay.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${port}`;
    relay.attach({
      maxBodyBytes: settings.maxBodyBytes,
      ingest: async (request) => await ingestWebhook(context, request),
      onAccepted: (ids) => feeder.feed(ids, Lane.Bulk),
      onWebhook: () => undefined,
      onError: () => undefined,
      // What `findRunningRuntime` checks before the CLI goes through /_relay.
      health: async () => ({ ok: true, pid: process.pid, store: { dataDir } }),
      store: local.store,
      isOperator: (authorization) => authorization === OPERATOR.authorization,
    });
    announceRuntime({
      pid: process.pid,
      url,
      dataDir,
      providerBaseUrl: sandbox.baseUrl,
      startedAt: new Date().toISOString(),
      consoleSecret: OPERATOR_SECRET,
    });
  }, 60_000);

  afterAll(async () => {
    withdrawRuntime(dataDir);
    await relay?.close();
    await feeder?.idle();
    await sandbox?.close();
    await local?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  return {
    get dataDir() {
      return dataDir;
    },
    get local() {
      return local;
    },
    get sandbox() {
      return sandbox;
    },
    get url() {
      return url;
    },
    OPERATOR,
  };
}
