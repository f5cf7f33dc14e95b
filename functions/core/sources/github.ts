import { DeliveryPolicy } from '../config/policies';
import { parseBody } from './body';
import { verifyBodySignature, type BodySignatureScheme } from './body-signature';
import { bodySignedDedupe, idKeyPart } from './shared';
import type { SignInput, SourcePack } from './types';
import { callerHeader, firstWord, freshId, sha256Hmac } from './sign';
import { HOUR_SECONDS } from '../defaults';

export const GITHUB = {
  /**
   * Redeliveries reuse the original `X-GitHub-Delivery`, and GitHub lets a person redeliver
   * deliveries from the past 3 days (GitHub Enterprise Server: 7 days, so raise it per route there).
   * GitHub itself never retries a failed delivery.
   */
  dedupeWindowSeconds: 72 * HOUR_SECONDS,
  signatureHeader: 'x-hub-signature-256',
  eventHeader: 'x-github-event',
  deliveryHeader: 'x-github-delivery',
} as const;

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

const SIGNATURE_SCHEME: BodySignatureScheme = {
  headers: [GITHUB.signatureHeader],
  label: 'X-Hub-Signature-256',
  encoding: 'hex',
  extract: (value) => SIGNATURE.exec(value)?.[1]?.toLowerCase(),
};

/**
 * One line per event; `headers['x-github-event']` picks the branch because GitHub names the event
 * only in that header, never in the body.
 */
const DEFAULT_TEMPLATE = [
  "{%- case headers['x-github-event'] -%}",
  "{%- when 'push' -%}",
  "[{{ repository.full_name }}] {{ pusher.name }} pushed {{ commits.size }} commit(s) to {{ ref | remove_first: 'refs/heads/' }}",
  "{%- when 'issues' -%}",
  '[{{ repository.full_name }}] Issue #{{ issue.number }} {{ action }} by {{ sender.login }}: {{ issue.title }}',
  "{%- when 'pull_request' -%}",
  "[{{ repository.full_name }}] PR #{{ pull_request.number }} {% if action == 'closed' and pull_request.merged %}merged{% else %}{{ action }}{% endif %} by {{ sender.login }}: {{ pull_request.title }}",
  "{%- when 'workflow_run' -%}",
  '[{{ repository.full_name }}] {{ workflow_run.name }} {{ workflow_run.conclusion | default: workflow_run.status }} on {{ workflow_run.head_branch }}',
  "{%- when 'release' -%}",
  '[{{ repository.full_name }}] Release {{ release.tag_name }} {{ action }} by {{ sender.login }}',
  '{%- else -%}',
  "[{{ repository.full_name | default: organization.login }}] {{ headers['x-github-event'] }}{% if action %} {{ action }}{% endif %} by {{ sender.login }}",
  '{%- endcase -%}',
].join('\n');

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, the event in
 * `X-GitHub-Event` (default `push`) and a fresh delivery id in `X-GitHub-Delivery`.
 */
const signGitHub = ({ body, secret, headers }: SignInput): Record<string, string> => ({
  'User-Agent': 'GitHub-Hookshot/sms-relay',
  'X-GitHub-Event': callerHeader(headers, 'x-github-event') ?? 'push',
  'X-GitHub-Delivery': callerHeader(headers, 'x-github-delivery') ?? freshId(),
  'X-GitHub-Hook-ID': '1',
  'X-Hub-Signature-256': `sha256=${sha256Hmac(secret, body, 'hex')}`,
});

/**
 * GitHub repository, organization and App webhooks: `X-Hub-Signature-256` over the raw body, JSON
 * or GitHub's default form encoding (`payload=<json>`), pings acknowledged without a send.
 *
 * @example
 * ```ts
 * const outcome = github.authenticate(webhook, { secret, toleranceSeconds: 300 });
 * if (outcome.ok && github.ping(github.parse(webhook), webhook) === undefined) {
 *   // render github.defaultTemplate and send
 * }
 * ```
 */
export const github: SourcePack = {
  name: 'github',
  secretKind: 'key',
  defaultDelivery: DeliveryPolicy.AtMostOnce,
  digestNoun: 'events',
  examples: { directory: 'github', eventHeaders: (stem) => ({ [GITHUB.eventHeader]: firstWord(stem) }) },
  sign: signGitHub,
  capturedHeaders: [GITHUB.eventHeader, GITHUB.deliveryHeader],
  description:
    'GitHub webhooks (X-Hub-Signature-256, JSON or form-encoded): pushes, issues, pull requests, workflow runs, releases.',
  defaultTemplate: DEFAULT_TEMPLATE,

  // The signature covers the body as sent, so a form-encoded delivery is verified over the form
  // bytes, never over the JSON inside its `payload` field.
  authenticate: (webhook, { secret }) => verifyBodySignature(webhook, secret, SIGNATURE_SCHEME),

  parse: (webhook) => parseBody(webhook, { form: 'payload-field' }),

  // GitHub sends `ping` when a webhook is created, and again on the "Test" button.
  ping: (_body, webhook) => (webhook.headers[GITHUB.eventHeader]?.trim() === 'ping' ? 'github ping' : undefined),

  dedupe: (_body, webhook) => {
    const delivery = webhook.headers[GITHUB.deliveryHeader]?.trim();
    return bodySignedDedupe(
      'github',
      delivery ? `github:delivery:${idKeyPart(delivery)}` : undefined,
      webhook,
      GITHUB.dedupeWindowSeconds,
    );
  },
};
