import type { LoadedConfig } from '../../functions/core/config/load';
import { ProviderType } from '../../functions/core/provider/outcome';
import { startAfricasTalkingSandbox } from '../sandbox/africastalking';
import { HTTP_GATEWAY_SEND_PATH, startHttpGatewaySandbox } from '../sandbox/http-gateway';
import { SANDBOX_DEFAULTS } from '../sandbox/options';
import { startSandbox } from '../sandbox/server';
import type { RunningSandbox } from '../sandbox/types';

type Providers = LoadedConfig['settings']['providers'];
type ProviderEntry = Providers[string];

/** One provider's sandbox, as `npm start` started it. */
export interface ProviderSandbox {
  readonly name: string;
  readonly type: ProviderType;
  readonly sandbox: RunningSandbox;
  /** What the provider's `baseUrl` (or the `http` type's `url`) now is: the sandbox's. */
  readonly endpoint: string;
}

/**
 * Starts one faithful sandbox per provider of the config, each on its own loopback port with its
 * own inbox, account, `/_sandbox/outage` and balance controls, so an outage of one provider leaves
 * the others answering (as the real services would). Each accepts only the key the relay reads for
 * that provider (`keyOf`). Closes what it started if one fails to start.
 *
 * @example
 * const started = await startProviderSandboxes(loaded, (name) => secrets[providerKeyName(name)]!);
 * const pointed = pointProvidersAt(loaded, endpointsOf(started));
 */
export async function startProviderSandboxes(
  loaded: LoadedConfig,
  keyOf: (name: string) => string,
): Promise<readonly ProviderSandbox[]> {
  const started: ProviderSandbox[] = [];
  try {
    for (const [name, entry] of Object.entries(loaded.settings.providers)) {
      started.push(await startOne(loaded, name, entry, keyOf(name)));
    }
    return started;
  } catch (error) {
    await Promise.all(started.map(async ({ sandbox }) => await sandbox.close().catch(() => undefined)));
    throw error;
  }
}

async function startOne(
  loaded: LoadedConfig,
  name: string,
  entry: ProviderEntry,
  apiKey: string,
): Promise<ProviderSandbox> {
  if (entry.type === ProviderType.AfricasTalking) {
    const sandbox = await startAfricasTalkingSandbox({
      apiKey,
      username: entry.username,
      ...(entry.senderId === undefined ? {} : { senderIds: [entry.senderId] }),
    });
    return { name, type: entry.type, sandbox, endpoint: sandbox.baseUrl };
  }
  if (entry.type === ProviderType.Http) {
    const sandbox = await startHttpGatewaySandbox({ apiKey });
    return { name, type: entry.type, sandbox, endpoint: `${sandbox.baseUrl}${HTTP_GATEWAY_SEND_PATH}` };
  }
  const senderIds = approvedSenderIds(loaded, entry.defaultSenderId);
  const sandbox = await startSandbox({
    apiKey,
    senderIds: senderIds.length > 0 ? senderIds : SANDBOX_DEFAULTS.senderIds,
    ...(entry.defaultSenderId === undefined ? {} : { defaultSenderId: entry.defaultSenderId }),
  });
  return { name, type: entry.type, sandbox, endpoint: sandbox.baseUrl };
}

/** The service's sender IDs a config uses: the provider's default and every route's. */
function approvedSenderIds(loaded: LoadedConfig, defaultSenderId: string | undefined): string[] {
  const routeSenderIds = [...loaded.routes.values()].flatMap((route) =>
    route.config.senderId === undefined ? [] : [route.config.senderId],
  );
  return [...new Set([...(defaultSenderId === undefined ? [] : [defaultSenderId]), ...routeSenderIds])];
}

/**
 * Where each provider sends now: the started sandboxes' endpoints, or, with `PROVIDER_BASE_URL`
 * (`providerUrl`), that URL for the first provider only and every other its configured `baseUrl`/`url`.
 */
export function providerEndpoints(
  loaded: LoadedConfig,
  sandboxes: readonly ProviderSandbox[],
  providerUrl: string | undefined,
): Readonly<Record<string, string>> {
  if (providerUrl === undefined) return Object.fromEntries(sandboxes.map(({ name, endpoint }) => [name, endpoint]));
  const [first] = Object.keys(loaded.settings.providers);
  return first === undefined ? {} : { [first]: providerUrl };
}

/**
 * The config with each named provider's `baseUrl` (the `http` type's `url`) replaced, and the
 * first provider's compatibility view (`settings.provider`) following it.
 */
export function pointProvidersAt(loaded: LoadedConfig, endpoints: Readonly<Record<string, string>>): LoadedConfig {
  const providers = Object.fromEntries(
    Object.entries(loaded.settings.providers).map(([name, entry]) => {
      const endpoint = endpoints[name];
      if (endpoint === undefined) return [name, entry];
      return [name, entry.type === ProviderType.Http ? { ...entry, url: endpoint } : { ...entry, baseUrl: endpoint }];
    }),
  ) as Providers;
  const [first] = Object.keys(providers);
  const firstEndpoint = first === undefined ? undefined : endpoints[first];
  return {
    ...loaded,
    settings: {
      ...loaded.settings,
      providers,
      provider:
        firstEndpoint === undefined
          ? loaded.settings.provider
          : { ...loaded.settings.provider, baseUrl: firstEndpoint },
    },
  };
}
