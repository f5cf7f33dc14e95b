import { DeliveryPolicy } from '../config/policies';
import { AUTH_OK, authFailure, safeEqual, sha256Hex } from './auth';
import { parseBody } from './body';
import { headerValue } from './body-signature';
import { idKeyPart } from './shared';
import type { AuthOutcome, SignInput, SourcePack } from './types';
import { bodyField, callerHeader, freshId } from './sign';
import { HOUR_SECONDS } from '../defaults';

export const GITLAB = {
  /**
   * GitLab keeps one `Idempotency-Key` for a delivery and sends it again with every retry of it,
   * including "Resend request" from the webhook's recent events; 72 hours covers a person resending
   * the past days' deliveries.
   */
  dedupeWindowSeconds: 72 * HOUR_SECONDS,
  tokenHeader: 'x-gitlab-token',
  eventHeader: 'x-gitlab-event',
  idempotencyHeader: 'idempotency-key',
} as const;

/** GitLab's `object_attributes.action` values as the verbs an SMS reads best with. */
const VERB =
  '{%- case object_attributes.action -%}' +
  "{%- when 'open' -%}{%- assign verb = 'opened' -%}" +
  "{%- when 'close' -%}{%- assign verb = 'closed' -%}" +
  "{%- when 'reopen' -%}{%- assign verb = 'reopened' -%}" +
  "{%- when 'update' -%}{%- assign verb = 'updated' -%}" +
  "{%- when 'merge' -%}{%- assign verb = 'merged' -%}" +
  "{%- when 'approval' -%}{%- assign verb = 'approved' -%}" +
  "{%- when 'unapproval' -%}{%- assign verb = 'unapproved' -%}" +
  '{%- else -%}{%- assign verb = object_attributes.action -%}' +
  '{%- endcase -%}';

/**
 * One line per event, chosen by the body's `object_kind` (present in every project and group hook
 * payload, so the template does not depend on the `X-Gitlab-Event` header's wording).
 */
const DEFAULT_TEMPLATE = [
  '{%- assign repo = project.path_with_namespace | default: project.name | default: repository.name -%}',
  VERB,
  '{%- case object_kind -%}',
  "{%- when 'push' -%}",
  "[{{ repo }}] {{ user_name }} pushed {{ total_commits_count }} commit(s) to {{ ref | remove_first: 'refs/heads/' }}",
  "{%- when 'tag_push' -%}",
  "[{{ repo }}] {{ user_name }} {% if checkout_sha %}pushed{% else %}deleted{% endif %} tag {{ ref | remove_first: 'refs/tags/' }}",
  "{%- when 'merge_request' -%}",
  '[{{ repo }}] MR !{{ object_attributes.iid }} {{ verb }} by {{ user.name }}: {{ object_attributes.title }}',
  "{%- when 'pipeline' -%}",
  '[{{ repo }}] Pipeline #{{ object_attributes.id }} {{ object_attributes.status }} on {{ object_attributes.ref }}{% if user.name %} ({{ user.name }}){% endif %}',
  "{%- when 'issue' -%}",
  '[{{ repo }}] Issue #{{ object_attributes.iid }} {{ verb }} by {{ user.name }}: {{ object_attributes.title }}',
  '{%- else -%}',
  "[{{ repo }}] {{ headers['x-gitlab-event'] | default: object_kind }}{% if verb %} {{ verb }}{% endif %}{% if user.name %} by {{ user.name }}{% endif %}",
  '{%- endcase -%}',
].join('\n');

/** GitLab's `X-Gitlab-Event` for each `object_kind` of a project hook payload. */
const EVENT_OF_KIND: Readonly<Record<string, string>> = {
  push: 'Push Hook',
  tag_push: 'Tag Push Hook',
  issue: 'Issue Hook',
  note: 'Note Hook',
  merge_request: 'Merge Request Hook',
  pipeline: 'Pipeline Hook',
  build: 'Job Hook',
  deployment: 'Deployment Hook',
  release: 'Release Hook',
};

/**
 * GitLab: the secret token as it is in `X-Gitlab-Token`, the event named from the body's
 * `object_kind` (default `Push Hook`), and a fresh `Idempotency-Key` (GitLab reuses it for retries).
 */
const signGitLab = ({ body, secret, headers }: SignInput): Record<string, string> => {
  const kind = bodyField(body, 'object_kind');
  return {
    'User-Agent': 'GitLab/18.0.0',
    'X-Gitlab-Event':
      callerHeader(headers, 'x-gitlab-event') ??
      (typeof kind === 'string' ? EVENT_OF_KIND[kind] : undefined) ??
      'Push Hook',
    'X-Gitlab-Instance': 'https://gitlab.example.com',
    'X-Gitlab-Webhook-UUID': freshId(),
    'X-Gitlab-Event-UUID': freshId(),
    'Idempotency-Key': callerHeader(headers, 'idempotency-key') ?? freshId(),
    'X-Gitlab-Token': secret,
  };
};

/**
 * GitLab project, group and system webhooks. GitLab signs nothing: it sends the webhook's secret
 * token as it is in `X-Gitlab-Token`, compared here in constant time.
 *
 * Retries are caught by `Idempotency-Key`, which GitLab keeps for a delivery and its retries. The
 * `X-Gitlab-Event-UUID` header is not used: it is GitLab's recursion-detection id, shared by every
 * hook a chain of webhook-triggered API calls fires (so distinct events can carry the same one) and
 * fresh for a retry that runs as a new job. `X-Gitlab-Webhook-UUID` is fresh for every request.
 *
 * GitLab has no ping: the "Test" button posts a sample of the chosen event built from the project's
 * real data, with the same headers as a real one, so it is sent as an SMS like any other event.
 *
 * @example
 * ```ts
 * gitlab.authenticate(webhook, { secret: 'the webhook secret token', toleranceSeconds: 300 });
 * gitlab.dedupe(gitlab.parse(webhook), webhook); // { key: 'gitlab:idempotency:<Idempotency-Key>', ... }
 * ```
 */
export const gitlab: SourcePack = {
  name: 'gitlab',
  secretKind: 'credential',
  defaultDelivery: DeliveryPolicy.AtMostOnce,
  digestNoun: 'events',
  examples: { directory: 'gitlab' },
  sign: signGitLab,
  capturedHeaders: [GITLAB.eventHeader, GITLAB.idempotencyHeader],
  description: 'GitLab webhooks (X-Gitlab-Token secret token): pushes, tags, merge requests, pipelines, issues.',
  defaultTemplate: DEFAULT_TEMPLATE,

  authenticate(webhook, { secret }): AuthOutcome {
    if (secret === '') return authFailure('no secret is configured for this route');
    const token = webhook.headers[GITLAB.tokenHeader];
    if (token === undefined || token === '') return authFailure('missing X-Gitlab-Token header');
    return safeEqual(token, secret) ? AUTH_OK : authFailure('X-Gitlab-Token does not match');
  },

  parse: (webhook) => parseBody(webhook),

  ping: () => undefined,

  dedupe: (_body, webhook) => {
    const key = headerValue(webhook, [GITLAB.idempotencyHeader]);
    return {
      key: key === undefined ? `gitlab:body:${sha256Hex(webhook.body)}` : `gitlab:idempotency:${idKeyPart(key)}`,
      windowSeconds: GITLAB.dedupeWindowSeconds,
    };
  },
};
