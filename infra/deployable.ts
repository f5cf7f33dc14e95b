import { BlockList, isIP } from 'node:net';
import type { RelayConfig } from '../functions/core/config/schema';
import { providerKeyName } from '../functions/core/provider/kinds/common';
import { secretNames } from '../functions/core/provider/kinds/http';
import { ProviderType } from '../functions/core/provider/outcome';
import {
  HANDLER_TIMEOUT_SECONDS,
  SWEEP_RUN,
  SECRET_NAME_PREFIX,
  SEND_MARGIN_MS,
  SENDER_CONCURRENCY,
  STREAM,
} from '../functions/core/defaults';

/** The environment whose config belongs to the local runtime (`npm start`) and is never deployed. */
export const LOCAL_ENVIRONMENT = 'local';

/**
 * The Secrets Manager secret an environment uses: `secrets` when the config names one, else
 * `sms-relay/<env>`, so two environments never share one by default.
 *
 * @example
 * ```ts
 * secretName('staging', config); // 'sms-relay/staging' when config.secrets is unset
 * ```
 */
export function secretName(environmentName: string, config: Pick<RelayConfig, 'secrets'>): string {
  return config.secrets ?? `${SECRET_NAME_PREFIX}${environmentName}`;
}

/**
 * The secret holding the provider key beside an environment's route secrets: `<secretName>/provider`.
 *
 * @example
 * ```ts
 * providerSecretName('sms-relay/prod'); // 'sms-relay/prod/provider'
 * ```
 */
export function providerSecretName(routeSecretName: string): string {
  return `${routeSecretName}/provider`;
}

/**
 * The longest `provider.timeoutMs` the deployed functions have room for: the sender's stream batch
 * (`STREAM.batchSize` records, `SENDER_CONCURRENCY` at a time) must fit its time-out with
 * `SEND_MARGIN_MS` to spare, and so must one send of the sweeper and one balance read of the
 * balance watch. The sender is the tightest: 3 rounds in 60 s.
 */
export function maxProviderTimeoutMs(): { readonly ms: number; readonly why: string } {
  const rounds = Math.ceil(STREAM.batchSize / SENDER_CONCURRENCY);
  const room = (seconds: number, calls: number): number => Math.floor((seconds * 1_000 - SEND_MARGIN_MS) / calls);
  const limits = [
    {
      ms: room(HANDLER_TIMEOUT_SECONDS.sender, rounds),
      why: `the sender (${HANDLER_TIMEOUT_SECONDS.sender} s) sends a stream batch of ${STREAM.batchSize} records ${SENDER_CONCURRENCY} at a time: ${rounds} calls in a row, with ${SEND_MARGIN_MS / 1_000} s to spare`,
    },
    {
      ms: room(SWEEP_RUN.stepsMs / 1_000, 1),
      why: `the sweeper (its sends within ${SWEEP_RUN.stepsMs / 1_000} s of its start) starts a send only with the time-out and ${SEND_MARGIN_MS / 1_000} s left`,
    },
    {
      ms: room(HANDLER_TIMEOUT_SECONDS['balance-watch'], 1),
      why: `the balance watch (${HANDLER_TIMEOUT_SECONDS['balance-watch']} s) reads the balance once, with ${SEND_MARGIN_MS / 1_000} s to spare`,
    },
  ];
  return limits.reduce((tightest, limit) => (limit.ms < tightest.ms ? limit : tightest));
}

/**
 * Why `provider.timeoutMs` cannot work deployed, or `undefined` (see {@link maxProviderTimeoutMs}).
 *
 * @example
 * ```ts
 * providerTimeoutProblem(50_000); // 'provider.timeoutMs: 50000 does not fit the functions\' time-outs: …'
 * ```
 */
export function providerTimeoutProblem(timeoutMs: number, key = 'provider.timeoutMs'): string | undefined {
  const max = maxProviderTimeoutMs();
  if (timeoutMs <= max.ms) return undefined;
  return `${key}: ${timeoutMs} does not fit the functions' time-outs: ${max.why}, so at most ${max.ms}; set ${key} to ${max.ms} or less`;
}

// Where a deployed Lambda must never be pointed: the function's own host, private networks it has
// no route to, and the instance metadata service. BlockList matches IPv4-mapped IPv6 addresses
// (::ffff:127.0.0.1) against the IPv4 subnets itself.
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/**
 * Why `provider.baseUrl` cannot work from AWS, or `undefined`: it must be `https` (the API key
 * travels in a header) and must not name a loopback, link-local or private address (a copied
 * local config points at the sandbox on 127.0.0.1).
 *
 * @example
 * ```ts
 * providerUrlProblem('http://127.0.0.1:4010'); // 'provider.baseUrl: … must be https …'
 * ```
 */
export function providerUrlProblem(baseUrl: string, key = 'provider.baseUrl'): string | undefined {
  const url = new URL(baseUrl);
  const problems: string[] = [];
  if (url.protocol !== 'https:') problems.push('must be https (the API key travels in its requests)');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const family = isIP(host);
  const isPrivate =
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    (family === 4 && PRIVATE.check(host, 'ipv4')) ||
    (family === 6 && PRIVATE.check(host, 'ipv6'));
  if (isPrivate)
    problems.push(
      `must not point at a loopback or private address (${url.hostname}): a deployed function cannot reach it`,
    );
  // The URL is not echoed in full: it could carry credentials.
  return problems.length === 0
    ? undefined
    : `${key} ${problems.join(', and ')}; use the SMS service's public https URL`;
}

/**
 * What in one environment's config cannot be deployed as it stands, each naming its key:
 * a provider URL a Lambda cannot (or must not) call, a provider time-out the functions have no
 * room for, a paging route whose SMS could go out without an acknowledge link (see
 * {@link pagingLinkProblems}), and `capture` on a route without
 * `deploy.allowCapture: true` (captured payloads are customer data kept in the deployed table).
 *
 * @example
 * ```ts
 * deployProblems(parseConfig(readFileSync('config/local.yaml', 'utf8'))); // ['provider.baseUrl must be https …', 'routes.alerts.capture: …', …]
 * ```
 */
export function deployProblems(config: RelayConfig): string[] {
  const problems: string[] = [...providerProblems(config)];
  problems.push(...pagingLinkProblems(config));
  if (config.deploy?.allowCapture !== true) {
    for (const [id, route] of Object.entries(config.routes)) {
      if (route.capture === undefined) continue;
      problems.push(
        `routes.${id}.capture: stores each webhook's payload (customer data) in the deployed table; remove it, or set deploy.allowCapture: true to deploy it on purpose`,
      );
    }
  }
  return problems;
}

/**
 * Each provider's URL and time-out as {@link providerUrlProblem} and {@link providerTimeoutProblem}
 * judge them, and its key in the provider secret's layout ({@link providerKeyProblems}). A config of
 * `provider:` alone is named as written (`provider.baseUrl`); `providers:` by each provider's key
 * (`providers.gateway.url`).
 */
function providerProblems(config: RelayConfig): string[] {
  const entries = Object.entries(config.providers);
  const [first] = entries;
  const writtenAsProvider = entries.length === 1 && first?.[0] === 'main' && first[1].type === ProviderType.SmsService;
  if (writtenAsProvider) {
    return [providerUrlProblem(config.provider.baseUrl), providerTimeoutProblem(config.provider.timeoutMs)].filter(
      (problem) => problem !== undefined,
    );
  }
  return entries.flatMap(([name, entry]) => {
    const urlKey = entry.type === ProviderType.Http ? 'url' : 'baseUrl';
    const url = entry.type === ProviderType.Http ? entry.url : entry.baseUrl;
    return [
      providerUrlProblem(url, `providers.${name}.${urlKey}`),
      providerTimeoutProblem(entry.timeoutMs, `providers.${name}.timeoutMs`),
      ...providerKeyProblems(name, entry),
    ].filter((problem) => problem !== undefined);
  });
}

/**
 * An `http` provider whose templates do not read its key where the provider secret keeps it
 * (`<name>-key`, docs/deploying.md), or read a value outside its own names (`<name>-…`): on AWS
 * the functions read only the provider secret, so a name outside its layout is never there.
 * The `sms-service` and `africastalking` types read `<name>-key` themselves.
 *
 * @example
 * ```ts
 * providerKeyProblems('gateway', { type: 'http', headers: { 'X-API-Key': '{{ secret.gw-token }}' }, … });
 * // ['providers.gateway: reads secret.gw-token, which is not in the provider secret\'s layout: …']
 * ```
 */
export function providerKeyProblems(name: string, entry: RelayConfig['providers'][string]): string[] {
  if (entry.type !== ProviderType.Http) return [];
  const key = providerKeyName(name);
  const read = [entry.body, ...Object.values(entry.headers ?? {})].flatMap(secretNames);
  const layout = `the provider secret holds each provider's key as <name>-key (${key} for this one) and an http provider's other values as ${name}-<anything> (docs/deploying.md)`;
  const problems = [...new Set(read)]
    .filter((secret) => secret !== key && !secret.startsWith(`${name}-`))
    .map(
      (secret) => `providers.${name}: reads secret.${secret}, which is not in the provider secret's layout: ${layout}`,
    );
  if (!read.includes(key))
    problems.push(
      `providers.${name}: its headers or body never read its key, secret.${key}: ${layout}; e.g. headers: { X-API-Key: "{{ secret.${key} }}" }`,
    );
  return problems;
}

/**
 * Paging routes that could page someone on AWS with nothing to press: a route that escalates or
 * renotifies without `ack` (the SMS service takes no replies, so the link is the only way a phone
 * stops the escalation), and an `ack.baseUrl` that is not https (the link's token is its
 * credential). With `ack: {}` every SMS of an incident links to the URL its first webhook came in
 * on, which the incident keeps for its escalations and renotifies.
 *
 * @example
 * ```ts
 * pagingLinkProblems(config); // ['routes.alerts.escalate: on AWS every SMS of an incident carries its acknowledge link; add ack: {} …']
 * ```
 */
export function pagingLinkProblems(config: Pick<RelayConfig, 'routes'>): string[] {
  return Object.entries(config.routes).flatMap(([id, route]) => {
    const key = route.escalate !== undefined ? 'escalate' : route.renotify !== undefined ? 'renotify' : undefined;
    if (route.ack === undefined)
      return key === undefined
        ? []
        : [
            `routes.${id}.${key}: on AWS every SMS of an incident carries its acknowledge link (the SMS service takes no replies: the link is how the person paged stops the escalation); add ack: {} (the API's own URL) or ack: { baseUrl: "https://…" }`,
          ];
    const baseUrl = route.ack.baseUrl;
    return baseUrl !== undefined && !baseUrl.startsWith('https://')
      ? [
          `routes.${id}.ack.baseUrl must be https: the acknowledge link's token is its credential; use an https origin, or ack: {} for the API's own URL`,
        ]
      : [];
  });
}
