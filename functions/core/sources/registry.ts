import { alertmanager } from './alertmanager';
import { generic } from './generic';
import { github } from './github';
import { grafana } from './grafana';
import { hmac } from './hmac';
import { shopify } from './shopify';
import { sns } from './sns';
import { standardWebhooks } from './standard-webhooks';
import { stripe } from './stripe';
import type { SourceName, SourcePack } from './types';
import { woocommerce } from './woocommerce';
import { gitlab } from './gitlab';
import { sentry } from './sentry';
import { pagerduty } from './pagerduty';
import { uptimeKuma } from './uptime-kuma';

/** Every source pack, by name. Adding a source is one module and one line here. */
export const SOURCES: Readonly<Record<SourceName, SourcePack>> = Object.freeze({
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
});

export function sourcePack(name: SourceName): SourcePack {
  return SOURCES[name];
}
