import { stringify } from 'yaml';
import type { RelayConfigInput } from '../../../functions/core/config/schema';
import { newSecret, SNS_TOPIC } from './signers';

/** The recipient every test route sends to, in the form a person would write it in a config. */
export const RECIPIENT = '+255 712 345 678';
/** The same number as the SMS service receives it; only ever compared, never printed by the suite. */
export const RECIPIENT_MSISDN = '255712345678';

/** Every route renders the body's `tag`: a unique text per delivery, so the inbox says what was sent. */
export const TAG_TEMPLATE = '{{ tag }}';

export type RouteInput = RelayConfigInput['routes'][string];

/**
 * The secret values of one suite run, by name in the secrets file. Fresh per run, so a leaked value
 * can only have come from this run.
 */
export function newSecrets(): Record<string, string> {
  return {
    providerApiKey: `sbx_${newSecret('token')}`,
    'generic-token': newSecret('token'),
    'alerts-token': newSecret('token'),
    'grafana-secret': newSecret('token'),
    'github-secret': newSecret('token'),
    'shopify-secret': newSecret('token'),
    'woocommerce-secret': newSecret('token'),
    'stripe-secret': newSecret('whsec'),
    'standard-secret': newSecret('whsec'),
    'gitlab-token': newSecret('token'),
    'sentry-secret': newSecret('token'),
    'pagerduty-secret': newSecret('token'),
    'uptime-kuma-token': newSecret('token'),
    'goalert-token': newSecret('token'),
    'grafana-oncall-token': newSecret('token'),
    'hmac-secret': newSecret('token'),
    'sns-secret': newSecret('token'),
  };
}

const route = (source: RouteInput['source'], secret: string, extra: Partial<RouteInput> = {}): RouteInput => ({
  source,
  secret,
  recipients: [RECIPIENT],
  template: TAG_TEMPLATE,
  ...extra,
});

/** One route per source, plus a generic at-most-once (`amo`) and at-least-once (`alo`) pair. */
export function standardRoutes(): Record<string, RouteInput> {
  return {
    amo: route('generic', 'generic-token', { delivery: 'at-most-once' }),
    alo: route('generic', 'generic-token', { delivery: 'at-least-once' }),
    alerts: route('alertmanager', 'alerts-token'),
    grafana: route('grafana', 'grafana-secret'),
    github: route('github', 'github-secret'),
    shopify: route('shopify', 'shopify-secret'),
    woo: route('woocommerce', 'woocommerce-secret'),
    stripe: route('stripe', 'stripe-secret'),
    standard: route('standard-webhooks', 'standard-secret'),
    gitlab: route('gitlab', 'gitlab-token'),
    sentry: route('sentry', 'sentry-secret'),
    pagerduty: route('pagerduty', 'pagerduty-secret'),
    kuma: route('uptime-kuma', 'uptime-kuma-token'),
    hmac: route('hmac', 'hmac-secret', {
      signature: {
        header: 'X-Relay-Signature',
        algorithm: 'sha512',
        encoding: 'base64',
        prefix: 'v1=',
        signed: '{timestamp}.{body}',
      },
      timestamp: { header: 'X-Relay-Timestamp' },
      dedupe: { header: 'X-Delivery-Id' },
    }),
    svix: route('standard-webhooks', 'standard-secret'),
    sns: route('sns', 'sns-secret', { topics: [SNS_TOPIC], template: '{{ Message }}' }),
  };
}

export interface ConfigOptions {
  readonly routes: Record<string, RouteInput>;
  /** The SMS client's time-out (`provider.timeoutMs`). @default 30000 */
  readonly timeoutMs?: number;
  /** The config's `balance` section (threshold, reserve, schedule); none unless given. */
  readonly balanceWatch?: RelayConfigInput['balance'];
}

/** The YAML of a relay config; `provider.baseUrl` is a placeholder: `PROVIDER_BASE_URL` replaces it. */
export function configYaml({ routes, timeoutMs = 30_000, balanceWatch }: ConfigOptions): string {
  const config: RelayConfigInput = {
    provider: { baseUrl: 'http://127.0.0.1:9/unused', timeoutMs },
    secrets: 'sms-relay/reliability',
    retentionDays: 1,
    ...(balanceWatch === undefined ? {} : { balance: balanceWatch }),
    routes,
  };
  return stringify(config);
}
