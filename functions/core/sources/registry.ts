import { alertmanager } from './alertmanager';
import { generic } from './generic';
import { github } from './github';
import { grafana } from './grafana';
import { hmac } from './hmac';
import { shopify } from './shopify';
import { sns } from './sns';
import { standardWebhooks } from './standard-webhooks';
import { stripe } from './stripe';
import type { SourcePack } from './types';
import { woocommerce } from './woocommerce';
import { gitlab } from './gitlab';
import { sentry } from './sentry';
import { pagerduty } from './pagerduty';
import { uptimeKuma } from './uptime-kuma';
import { goalert } from './goalert';
import { grafanaOncall } from './grafana-oncall';
import { opsgenie } from './opsgenie';

/**
 * Every source pack, by the name routes use. Adding a source is one module and one line here: its
 * name then reaches the config schema, `send-test`, the secrets file and the console from here.
 */
export const SOURCES = Object.freeze({
  alertmanager,
  grafana,
  github,
  shopify,
  woocommerce,
  stripe,
  'standard-webhooks': standardWebhooks,
  generic,
  gitlab,
  sentry,
  pagerduty,
  'uptime-kuma': uptimeKuma,
  hmac,
  sns,
  goalert,
  'grafana-oncall': grafanaOncall,
  opsgenie,
} satisfies Record<string, SourcePack>);

/**
 * A source's name, as routes use it in the config: the keys of the registry, so a pack added here
 * is a source everywhere (config schema, `send-test`, secrets, console). Declared here, not in
 * `types.ts`, which every pack imports: the packs would otherwise import the registry back.
 */
export type SourceName = keyof typeof SOURCES;

/** The names of every source, in the registry's order (the order `--help` and errors list them). */
export const SOURCE_NAMES = Object.keys(SOURCES) as [SourceName, ...SourceName[]];

export function sourcePack(name: SourceName): SourcePack {
  return SOURCES[name];
}
