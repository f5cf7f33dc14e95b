import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base } from 'vitest';
import { loadConfigFile } from '../../functions/core/config/load';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox, SandboxOptions } from '../../local/sandbox/types';
import { signWebhook } from '../../local/runtime/signers';
import { startRelayOn, stopRelay, type RelayOnSandbox } from '../e2e/support';

/*
 * The test fixtures (vitest's `test.extend`) for what a test would otherwise set up and tear down
 * by hand. Which one for what: docs/testing.md, "How to write a test". A file sets its relay's
 * config and sandbox with `testWithRelay` (a `test.extend` of its own), never with a top-level
 * `test.override` of the shared `test`: `npm test` runs files in one module graph per worker
 * (`isolate: false`), where a top-level override would outlive its file.
 */

/** The sandbox SMS service's settings unless a file overrides `sandboxOptions`: the sender ID config/local.yaml's routes use. */
export const SANDBOX_DEFAULTS = {
  apiKey: 'fixture-provider-key-7c2e',
  balance: 100_000,
  rate: 20,
  senderIds: ['SMSRELAY'],
  defaultSenderId: 'SMSRELAY',
} as const satisfies SandboxOptions;

/** What {@link RelayFixtureOptions} leaves out: the runtime's own clock. */
export interface RelayFixtureOptions {
  /** The runtime reads its clock offset from a file that `moveClockAhead` writes (`RELAY_LOCAL_CLOCK`). @default false */
  readonly movableClock?: boolean;
}

/** A webhook's answer as {@link Fixtures.postWebhook} returns it. */
export interface PostedWebhook {
  readonly status: number;
  /** The JSON answer (the relay answers JSON on every status). */
  readonly body: Record<string, unknown>;
  /** The headers it was posted with, the signature among them (a test that nothing shows a credential). */
  readonly sent: Readonly<Record<string, string>>;
}

/** How {@link Fixtures.postWebhook} posts: the source's own headers (an event name, a delivery id) win over the signer's. */
export interface PostOptions {
  readonly headers?: Readonly<Record<string, string>>;
}

/** Posts `body` (an object is sent as JSON; bytes as they are) to the route, signed as its source signs. */
export type PostWebhook = (
  route: string,
  body: Readonly<Record<string, unknown>> | Uint8Array,
  options?: PostOptions,
) => Promise<PostedWebhook>;

/** Makes a temporary directory named `sms-relay-<label>-…`; the fixture that made it removes it. */
function makeTempDir(label: string, onCleanup: (cleanup: () => void) => void): string {
  const dir = mkdtempSync(join(tmpdir(), `sms-relay-${label}-`));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * vitest's `test` with the project's fixtures:
 *
 * - `tempDir`: a fresh temporary directory for this test, removed after it.
 * - `fileDir`: one temporary directory for the whole file (its relay's data, config, secrets),
 *   removed after the file.
 * - `sandbox`: the sandbox SMS service on 127.0.0.1 at a free port, one per file, closed after the
 *   file; its settings are `sandboxOptions` ({@link SANDBOX_DEFAULTS} unless overridden).
 * - `relay`: the local runtime as `npm start` runs it (a child process, `startRelayOn`) on
 *   `fileDir/relay.yaml` (the text of `relayConfig`, which a file overrides) and the file's
 *   `sandbox`, one per file, stopped after the file; `relayOptions` for a movable clock.
 * - `postWebhook`: posts to the file's relay, signed the way the route's source needs with the
 *   route's secret from the relay's secrets file.
 *
 * File-scoped fixtures are shared by the file's tests, started when the first test (or a
 * `test.beforeAll`) names them.
 */
export const test = base
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first parameter's pattern
  .extend('tempDir', async ({}, { onCleanup }) => makeTempDir('test', onCleanup))
  // biome-ignore lint/correctness/noEmptyPattern: as above
  .extend('fileDir', { scope: 'file' }, async ({}, { onCleanup }) => makeTempDir('file', onCleanup))
  .extend('sandboxOptions', { scope: 'file' }, SANDBOX_DEFAULTS as SandboxOptions)
  .extend('sandbox', { scope: 'file' }, async ({ sandboxOptions }, { onCleanup }): Promise<RunningSandbox> => {
    const sandbox = await startSandbox(sandboxOptions);
    onCleanup(() => sandbox.close());
    return sandbox;
  })
  .extend('relayConfig', { scope: 'file' }, '')
  .extend('relayOptions', { scope: 'file' }, {} as RelayFixtureOptions)
  .extend(
    'relay',
    { scope: 'file' },
    async ({ fileDir, sandbox, sandboxOptions, relayConfig, relayOptions }, { onCleanup }): Promise<RelayOnSandbox> => {
      if (relayConfig === '') throw new Error('the relay fixture needs a config: use testWithRelay({ config })');
      writeFileSync(join(fileDir, 'relay.yaml'), relayConfig);
      const running = await startRelayOn(fileDir, {
        providerUrl: sandbox.baseUrl,
        apiKey: sandboxOptions.apiKey,
        movableClock: relayOptions.movableClock ?? false,
      });
      onCleanup(async () => void (await stopRelay(running.relay)));
      return running;
    },
  )
  .extend(
    'postWebhook',
    { scope: 'file' },
    async ({ relay, fileDir }): Promise<PostWebhook> =>
      webhookPoster({ url: relay.relay.url, configPath: join(fileDir, 'relay.yaml'), secrets: relay.secrets }),
  );

/** Where {@link webhookPoster} posts: a relay's URL, the config it runs and its secrets file's values. */
export interface PosterTarget {
  /** `http://127.0.0.1:<port>`; a function for a relay a test restarts on another port. */
  readonly url: string | (() => string);
  readonly configPath: string;
  readonly secrets: Readonly<Record<string, string>>;
}

/**
 * The `postWebhook` fixture's poster, for a file that starts its relay itself (a restart, a config
 * of its own): posts to `url`, signed as the route's source signs, with the route's secret.
 *
 * @example
 * ```ts
 * const postWebhook = webhookPoster({ url: relay.url, configPath: join(dir, 'relay.yaml'), secrets });
 * expect((await postWebhook('notify', { message: 'disk full' })).status).toBe(202);
 * ```
 */
export function webhookPoster({ url, configPath, secrets }: PosterTarget): PostWebhook {
  const routes = loadConfigFile(configPath).routes;
  return async (route, body, { headers = {} } = {}) => {
    const settings = routes.get(route)?.config;
    if (settings === undefined) throw new Error(`no route "${route}" in the relay's config`);
    const secret = secrets[settings.secret];
    if (secret === undefined) throw new Error(`no secret "${settings.secret}" in the relay's secrets file`);
    const bytes = body instanceof Uint8Array ? body : Buffer.from(JSON.stringify(body));
    const sent = signWebhook(settings.source, { body: bytes, secret, headers, route: settings });
    const response = await fetch(`${typeof url === 'string' ? url : url()}/hooks/${route}`, {
      method: 'POST',
      headers: sent,
      body: bytes,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, sent };
  };
}

/**
 * `test` for a file whose tests share one sandbox SMS service with these settings (a relay's
 * handlers or a provider client talk to it).
 *
 * @example
 * ```ts
 * const test = testWithSandbox({ apiKey: API_KEY, senderIds: ['ALERTS'], balance: 1000, rate: 1 });
 * test.beforeAll(({ sandbox }) => void (providerUrl = sandbox.baseUrl));
 * ```
 */
export function testWithSandbox(options: SandboxOptions) {
  return test.extend('sandboxOptions', { scope: 'file' }, options);
}

/** The relay a file runs: its config, its sandbox SMS service's settings, its clock. */
export interface RelayFileSetup {
  /** `relay.yaml`'s text; a function is called once, when the file's relay starts. */
  readonly config: string | (() => string);
  /** @default {@link SANDBOX_DEFAULTS} */
  readonly sandbox?: SandboxOptions;
  /** @default false */
  readonly movableClock?: boolean;
}

/**
 * `test` for a file whose tests share one relay on one sandbox: the `relay`, `sandbox` and
 * `postWebhook` fixtures run `setup`'s config and settings.
 *
 * @example
 * ```ts
 * const test = testWithRelay({
 *   config: 'routes: { notify: { source: generic, secret: token, recipients: ["0712345678"], template: "{{ message }}" } }',
 * });
 *
 * test('sends a webhook as an SMS', async ({ postWebhook, sandbox }) => {
 *   expect((await postWebhook('notify', { message: 'disk full' })).status).toBe(202);
 *   await waitUntil('the SMS at the sandbox', () => sandbox.messages().length === 1);
 * });
 * ```
 */
export function testWithRelay({ config, sandbox = SANDBOX_DEFAULTS, movableClock = false }: RelayFileSetup) {
  return testWithSandbox(sandbox)
    .extend('relayConfig', { scope: 'file' }, async () => (typeof config === 'function' ? config() : config))
    .extend('relayOptions', { scope: 'file' }, { movableClock } as RelayFixtureOptions);
}

export { describe, expect } from 'vitest';
