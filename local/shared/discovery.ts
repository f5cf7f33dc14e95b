import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requestJson } from './relay-client';

/** Written into `RELAY_DATA_DIR` while a runtime holds the store there. */
export const RUNTIME_FILE = 'runtime.json';

/** What a running runtime tells the CLI commands that need its store or its URLs. */
export interface RuntimeAnnouncement {
  readonly pid: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly dataDir: string;
  /** The SMS service the runtime sends through (the sandbox's URL unless PROVIDER_BASE_URL was set). */
  readonly providerBaseUrl: string;
  /**
   * Where the runtime sends each provider, by name: its sandbox's endpoint, or `PROVIDER_BASE_URL`
   * for the first (the others then at their configured URLs, left out here). `providers` asks these.
   */
  readonly providerEndpoints?: Readonly<Record<string, string>>;
  readonly startedAt: string;
  /**
   * The secrets file whose `providerApiKey` the runtime sends with (absent when `PROVIDER_API_KEY`
   * gave the key): `balance` reads the key there. The path only, never a value.
   */
  readonly secretsPath?: string;
  /**
   * The secret the user's own commands present (`Authorization: Bearer …`): `logs`, `redrive`,
   * `mute` and `unmute` on every `/_relay` endpoint, `sms-relay console` on the console's API. Not a
   * browser's session: browsers sign in with the one-time link. The file is the user's alone (mode
   * 0600), like the secrets file: a process that can reach the port but not read it gets 401.
   */
  readonly consoleSecret?: string;
}

/**
 * Records that this process now holds the store in `dataDir` and where it listens.
 *
 * @example
 * ```ts
 * announceRuntime({ pid: process.pid, url, dataDir, providerBaseUrl, startedAt: new Date().toISOString() });
 * ```
 */
export function announceRuntime(announcement: RuntimeAnnouncement): void {
  writeFileSync(join(announcement.dataDir, RUNTIME_FILE), `${JSON.stringify(announcement, null, 2)}\n`, {
    mode: 0o600,
  });
}

/** Removes the announcement, unless another process has written its own since. */
export function withdrawRuntime(dataDir: string, pid: number = process.pid): void {
  if (readAnnouncement(dataDir)?.pid === pid) rmSync(join(dataDir, RUNTIME_FILE), { force: true });
}

/** What `runtime.json` in `dataDir` says, if it is there and readable; nothing checks that its runtime still runs. */
export function readAnnouncement(dataDir: string): RuntimeAnnouncement | undefined {
  try {
    const value = JSON.parse(readFileSync(join(dataDir, RUNTIME_FILE), 'utf8')) as Partial<RuntimeAnnouncement>;
    if (typeof value.pid !== 'number' || typeof value.url !== 'string' || typeof value.providerBaseUrl !== 'string')
      return undefined;
    return value as RuntimeAnnouncement;
  } catch {
    return undefined;
  }
}

/**
 * The runtime holding the store in `dataDir`, if one is running and answers: its announcement
 * is there, its process is alive, and its `/health` names the same process and directory. A file
 * left behind by a killed runtime is ignored.
 *
 * @example
 * ```ts
 * const running = await findRunningRuntime('/home/me/sms-relay/.relay/data');
 * if (running) await fetch(`${running.url}/_relay/records`, { headers: { authorization: `Bearer ${running.consoleSecret}` } });
 * ```
 */
export async function findRunningRuntime(
  dataDir: string,
  { timeoutMs = 3_000 }: { readonly timeoutMs?: number } = {},
): Promise<RuntimeAnnouncement | undefined> {
  const announcement = readAnnouncement(dataDir);
  if (announcement === undefined || !isAlive(announcement.pid)) return undefined;
  try {
    const { body } = await requestJson(`${announcement.url}/health`, { timeoutMs });
    const health = body as { pid?: unknown; store?: { dataDir?: unknown } } | undefined;
    return health?.pid === announcement.pid && health.store?.dataDir === dataDir ? announcement : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
